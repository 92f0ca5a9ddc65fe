// The results block of the modelled time to first token (issue 23), `kvcache_bench.ttft_modelled`,
// kept apart from results-schema.ts, which includes it. Every figure here is modelled: measured queue
// waits and hit loads plus the compute model's prefill times (docs/ttft.md). Measured figures stay
// where they were; nothing here replaces one.
import * as z from 'zod';

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const msStats = (what: string) =>
  z.strictObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number() }).describe(`${what} (ms), modelled`);
const bytesPerSec = (what: string) => z.number().nonnegative().nullable().describe(`${what} (bytes/s); null without hits`);

export const TtftClassSchema = z.strictObject({
  requests: count('completed requests'),
  requests_with_hits: count('requests with at least one prompt token served from cache'),
  load_slower_requests: count('of those, requests whose TTFT with offload exceeded the TTFT without: loading lost to recomputing'),
  load_slower_share: z.number().min(0).max(1).nullable().describe('load_slower_requests ÷ requests_with_hits; null without hits'),
  prompt_tokens: count('tokens before the first generated one, summed'),
  hit_tokens: count('of them, tokens served from cache, summed'),
  ttft_offload_ms: msStats('TTFT with offload: queue wait + measured load of the hit tokens + modelled compute of the rest'),
  ttft_recompute_ms: msStats('TTFT without offload: queue wait + modelled compute of every prompt token'),
  speedup: z
    .strictObject({ mean: z.number(), p1: z.number(), p5: z.number(), p50: z.number(), p95: z.number(), p99: z.number() })
    .nullable()
    .describe('TTFT without ÷ with offload per request with hits (below 1: offload lost); null without hits'),
  delivered_read_bytes_per_sec: bytesPerSec('hit bytes ÷ their summed load time: the read rate the storage gave the hits'),
  delivered_read_mb_per_sec_per_request: z
    .strictObject({ p5: z.number(), p50: z.number(), p95: z.number() })
    .nullable()
    .describe('per request with hits: its hit bytes ÷ its load time (MB/s, 10^6 bytes); null without hits'),
  break_even_read_bytes_per_sec: bytesPerSec(
    'hit bytes ÷ the modelled compute of the hit tokens: the read rate at which loading them would just match recomputing them',
  ),
});
export type TtftClassJson = z.output<typeof TtftClassSchema>;

export const TtftContextBinSchema = z.strictObject({
  from_tokens: count('prompt length, inclusive'),
  to_tokens: count('prompt length, exclusive'),
  requests: count('completed requests with a prompt in the range'),
  requests_with_hits: count('of them, with hits'),
  load_slower_requests: count('of those, where loading lost to recomputing'),
  mean_ttft_offload_ms: z.number().nonnegative().describe('mean TTFT with offload (ms), modelled'),
  mean_ttft_recompute_ms: z.number().nonnegative().describe('mean TTFT without offload (ms), modelled'),
  delivered_read_bytes_per_sec: bytesPerSec('hit bytes ÷ their load time in the range'),
  break_even_read_bytes_per_sec: bytesPerSec('hit bytes ÷ their modelled compute in the range'),
});
export type TtftContextBinJson = z.output<typeof TtftContextBinSchema>;

export const TtftModelledSchema = z
  .union([
    z.strictObject({
      note: z.string().describe('what is measured and what is modelled here'),
      gpu_profile: z.string().describe('--gpu-profile'),
      gpu_name: z.string(),
      bf16_dense_tflops: z.number().positive().describe("the profile's peak dense BF16 throughput per GPU (TFLOP/s, vendor data sheet)"),
      mfu: z.number().positive().max(1).describe('--mfu: the share of the peak a prefill achieves'),
      tensor_parallel: z.number().int().positive().describe('--tensor-parallel: GPUs one prefill is split over'),
      active_params: z.number().positive().describe("the model's parameters per token (the routed share for a MoE)"),
      kv_bytes_per_token_per_rank: z.number().positive().describe('KV bytes of one token on one tensor-parallel rank'),
      break_even_read_bytes_per_sec: z
        .array(z.strictObject({ context_tokens: count('prefix length'), bytes_per_sec: z.number().nonnegative() }))
        .describe('read rate per rank above which loading a prefix of that length beats recomputing it (bytes/s)'),
      overall: TtftClassSchema,
      by_qos: z.record(z.string(), TtftClassSchema).describe('per QoS class that completed a request'),
      by_context: z.array(TtftContextBinSchema).describe('per prompt length, power-of-two ranges with requests'),
    }),
    z.strictObject({ not_modelled: z.string().describe('why this run has no modelled TTFT') }),
  ])
  .describe('Time to first token with and without KV offload: MODELLED from measured loads and a prefill compute model (docs/ttft.md)');
export type TtftModelledJson = z.output<typeof TtftModelledSchema>;
