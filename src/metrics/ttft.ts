// The modelled time to first token (issue 23), recorded per completed request: with offload (queue
// wait + the measured load of the cached part + modelled compute of the rest) and without (queue wait
// + modelled compute of everything). Only the load times are measured; the compute is the model's
// (model/compute.ts, applied in engine/ttft.ts). Kept apart from RequestMetrics so that no measured
// figure is ever replaced by a modelled one.
import { LatencyHistogram } from './latency.js';
import type { LatencySnapshot } from './latency.js';

/** One completed request's figures (ms, tokens, bytes on this rank). */
export interface TtftSample {
  readonly qos: string;
  readonly promptTokens: number;
  readonly hitTokens: number;
  /** KV bytes of the hit tokens on this rank. */
  readonly hitBytes: number;
  /** Measured: the summed latency of the hit reads. */
  readonly hitLoadMs: number;
  readonly offloadMs: number;
  readonly recomputeMs: number;
  /** Modelled compute of the hit tokens: what loading them saved, or would have to beat. */
  readonly hitComputeMs: number;
}

/** The GPU, utilisation and model the compute figures assume. */
export interface TtftSetup {
  readonly gpuProfile: string;
  readonly gpuName: string;
  readonly bf16DenseTflops: number;
  readonly mfu: number;
  readonly tensorParallel: number;
  readonly activeParams: number;
  /** KV bytes of one token on one tensor-parallel rank. */
  readonly kvBytesPerTokenPerRank: number;
  /** Break-even read bandwidth per rank for a prefix of each length (bytes/s): above it, loading beats recomputing. */
  readonly breakEven: ReadonlyArray<{ readonly contextTokens: number; readonly bytesPerSec: number }>;
}

export interface TtftClassSnapshot {
  readonly requests: number;
  /** Requests with at least one token served from cache. */
  readonly requestsWithHits: number;
  /** Of those, requests whose TTFT with offload was longer than without: loading lost to recomputing. */
  readonly loadSlower: number;
  readonly promptTokens: number;
  readonly hitTokens: number;
  readonly hitBytes: number;
  readonly hitLoadMs: number;
  readonly hitComputeMs: number;
  readonly offload: LatencySnapshot;
  readonly recompute: LatencySnapshot;
  /** TTFT without offload ÷ with it, per request with hits (a ratio, stored in the histogram's ms unit). */
  readonly speedup: LatencySnapshot;
  /** Hit bytes ÷ their load time per request with hits (MB/s, 10^6 bytes, stored in the histogram's ms unit). */
  readonly deliveredMBps: LatencySnapshot;
}

/** Requests whose prompt length falls in [fromTokens, toTokens): sums, so a reader takes means. */
export interface TtftContextBin {
  readonly fromTokens: number;
  readonly toTokens: number;
  readonly requests: number;
  readonly requestsWithHits: number;
  readonly loadSlower: number;
  readonly offloadMsSum: number;
  readonly recomputeMsSum: number;
  readonly hitBytes: number;
  readonly hitLoadMs: number;
  readonly hitComputeMs: number;
}

export interface TtftSnapshot {
  readonly overall: TtftClassSnapshot;
  readonly byQos: Readonly<Record<string, TtftClassSnapshot>>;
  /** Bins by prompt length, powers of two, in order; only bins with requests. */
  readonly byContext: readonly TtftContextBin[];
}

/** The modelled block of a run: its setup and figures, or the one reason there are none. */
export type TtftModelled = { readonly setup: TtftSetup; readonly figures: TtftSnapshot } | { readonly notModelled: string };

class TtftClass {
  requests = 0;
  requestsWithHits = 0;
  loadSlower = 0;
  promptTokens = 0;
  hitTokens = 0;
  hitBytes = 0;
  hitLoadMs = 0;
  hitComputeMs = 0;
  readonly offload = new LatencyHistogram();
  readonly recompute = new LatencyHistogram();
  readonly speedup = new LatencyHistogram();
  readonly deliveredMBps = new LatencyHistogram();

  record(s: TtftSample): void {
    this.requests++;
    this.promptTokens += s.promptTokens;
    this.offload.recordMs(s.offloadMs);
    this.recompute.recordMs(s.recomputeMs);
    if (s.hitTokens <= 0) return;
    this.requestsWithHits++;
    if (s.offloadMs > s.recomputeMs) this.loadSlower++;
    this.hitTokens += s.hitTokens;
    this.hitBytes += s.hitBytes;
    this.hitLoadMs += s.hitLoadMs;
    this.hitComputeMs += s.hitComputeMs;
    if (s.offloadMs > 0) this.speedup.recordMs(s.recomputeMs / s.offloadMs);
    if (s.hitLoadMs > 0) this.deliveredMBps.recordMs(s.hitBytes / 1e6 / (s.hitLoadMs / 1000));
  }

  snapshot(): TtftClassSnapshot {
    return {
      requests: this.requests,
      requestsWithHits: this.requestsWithHits,
      loadSlower: this.loadSlower,
      promptTokens: this.promptTokens,
      hitTokens: this.hitTokens,
      hitBytes: this.hitBytes,
      hitLoadMs: this.hitLoadMs,
      hitComputeMs: this.hitComputeMs,
      offload: this.offload.snapshot(),
      recompute: this.recompute.snapshot(),
      speedup: this.speedup.snapshot(),
      deliveredMBps: this.deliveredMBps.snapshot(),
    };
  }
}

type MutableBin = { -readonly [K in keyof TtftContextBin]: TtftContextBin[K] };

/** The power-of-two bin of a prompt length: [2^k, 2^(k+1)); 0 and 1 token share [0, 2). */
export function contextBinOf(tokens: number): { fromTokens: number; toTokens: number } {
  if (tokens < 2) return { fromTokens: 0, toTokens: 2 };
  const k = Math.floor(Math.log2(tokens));
  return { fromTokens: 2 ** k, toTokens: 2 ** (k + 1) };
}

/** Records the modelled TTFT of every completed request: overall, per QoS class and per context bin. */
export class TtftMetrics {
  private readonly overall = new TtftClass();
  private readonly classes = new Map<string, TtftClass>();
  private readonly bins = new Map<number, MutableBin>();

  record(s: TtftSample): void {
    this.overall.record(s);
    let c = this.classes.get(s.qos);
    if (c === undefined) {
      c = new TtftClass();
      this.classes.set(s.qos, c);
    }
    c.record(s);
    const edges = contextBinOf(s.promptTokens);
    let bin = this.bins.get(edges.fromTokens);
    if (bin === undefined) {
      bin = {
        ...edges,
        requests: 0,
        requestsWithHits: 0,
        loadSlower: 0,
        offloadMsSum: 0,
        recomputeMsSum: 0,
        hitBytes: 0,
        hitLoadMs: 0,
        hitComputeMs: 0,
      };
      this.bins.set(edges.fromTokens, bin);
    }
    bin.requests++;
    bin.offloadMsSum += s.offloadMs;
    bin.recomputeMsSum += s.recomputeMs;
    if (s.hitTokens > 0) {
      bin.requestsWithHits++;
      if (s.offloadMs > s.recomputeMs) bin.loadSlower++;
      bin.hitBytes += s.hitBytes;
      bin.hitLoadMs += s.hitLoadMs;
      bin.hitComputeMs += s.hitComputeMs;
    }
  }

  snapshot(): TtftSnapshot {
    const byQos = Object.fromEntries([...this.classes.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => [k, c.snapshot()]));
    const byContext = [...this.bins.values()].sort((a, b) => a.fromTokens - b.fromTokens).map((b) => ({ ...b }));
    return { overall: this.overall.snapshot(), byQos, byContext };
  }
}
