// Builds `kvcache_bench.ttft_modelled` (report/ttft-schema.ts) from the run's TtftModelled: sums into
// shares and rates, histograms into percentiles. Pure.
import { LatencyHistogram } from '../metrics/latency.js';
import type { LatencySnapshot } from '../metrics/latency.js';
import type { TtftClassSnapshot, TtftContextBin, TtftModelled } from '../metrics/ttft.js';
import type { TtftClassJson, TtftContextBinJson, TtftModelledJson } from './ttft-schema.js';

export const TTFT_NOTE =
  'MODELLED, not measured: queue waits and hit-read times are measured by this run; prefill compute is the model of docs/ttft.md ' +
  '(2 × active parameters per token + causal attention, ÷ (GPU peak × MFU × tensor-parallel ranks))';

const rateOrNull = (bytes: number, ms: number): number | null => (ms > 0 ? bytes / (ms / 1000) : null);
const stats = (s: LatencySnapshot): TtftClassJson['ttft_offload_ms'] => ({ mean: s.mean, p50: s.p50, p95: s.p95, p99: s.p99 });

function classJson(c: TtftClassSnapshot): TtftClassJson {
  const hasHits = c.requestsWithHits > 0;
  // The low tail of the speedup is where offload loses: read it from the histogram itself.
  const speedup = c.speedup.count > 0 ? LatencyHistogram.decode(c.speedup.encoded, c.speedup.mean * c.speedup.count) : undefined;
  const delivered = c.deliveredMBps.count > 0 ? LatencyHistogram.decode(c.deliveredMBps.encoded) : undefined;
  return {
    requests: c.requests,
    requests_with_hits: c.requestsWithHits,
    load_slower_requests: c.loadSlower,
    load_slower_share: hasHits ? c.loadSlower / c.requestsWithHits : null,
    prompt_tokens: c.promptTokens,
    hit_tokens: c.hitTokens,
    ttft_offload_ms: stats(c.offload),
    ttft_recompute_ms: stats(c.recompute),
    speedup:
      speedup === undefined
        ? null
        : {
            mean: c.speedup.mean,
            p1: speedup.percentileMs(1),
            p5: speedup.percentileMs(5),
            p50: c.speedup.p50,
            p95: c.speedup.p95,
            p99: c.speedup.p99,
          },
    delivered_read_bytes_per_sec: rateOrNull(c.hitBytes, c.hitLoadMs),
    delivered_read_mb_per_sec_per_request:
      delivered === undefined ? null : { p5: delivered.percentileMs(5), p50: delivered.percentileMs(50), p95: delivered.percentileMs(95) },
    break_even_read_bytes_per_sec: rateOrNull(c.hitBytes, c.hitComputeMs),
  };
}

function binJson(b: TtftContextBin): TtftContextBinJson {
  return {
    from_tokens: b.fromTokens,
    to_tokens: b.toTokens,
    requests: b.requests,
    requests_with_hits: b.requestsWithHits,
    load_slower_requests: b.loadSlower,
    mean_ttft_offload_ms: b.offloadMsSum / b.requests,
    mean_ttft_recompute_ms: b.recomputeMsSum / b.requests,
    delivered_read_bytes_per_sec: rateOrNull(b.hitBytes, b.hitLoadMs),
    break_even_read_bytes_per_sec: rateOrNull(b.hitBytes, b.hitComputeMs),
  };
}

export function ttftModelledJson(t: TtftModelled): TtftModelledJson {
  if ('notModelled' in t) return { not_modelled: t.notModelled };
  const { setup, figures } = t;
  return {
    note: TTFT_NOTE,
    gpu_profile: setup.gpuProfile,
    gpu_name: setup.gpuName,
    bf16_dense_tflops: setup.bf16DenseTflops,
    mfu: setup.mfu,
    tensor_parallel: setup.tensorParallel,
    active_params: setup.activeParams,
    kv_bytes_per_token_per_rank: setup.kvBytesPerTokenPerRank,
    break_even_read_bytes_per_sec: setup.breakEven.map((b) => ({ context_tokens: b.contextTokens, bytes_per_sec: b.bytesPerSec })),
    overall: classJson(figures.overall),
    by_qos: Object.fromEntries(Object.entries(figures.byQos).map(([k, c]) => [k, classJson(c)])),
    by_context: figures.byContext.map(binJson),
  };
}
