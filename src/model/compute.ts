// The prefill compute model (issue 23): FLOPs and seconds to prefill tokens on a GPU profile, from
// the model's shape. Pure: the TTFT figures of a run and `kv-cache models` both come from here.
//
// FLOPs of one forward pass over m new tokens whose first position is p (the p tokens before it are
// already in the KV cache):
//   weights:   2 × active parameters per token (one multiply and one add per weight), × m
//   attention: per layer, a query at position i scores i + 1 keys (causal: itself and every token
//              before it) and sums i + 1 values: 2 × qkWidth × (i + 1) + 2 × vWidth × (i + 1) FLOPs.
//              Over i = p … p+m−1 the i + 1 sum to m × p + m(m+1)/2, so
//              attention = 2 × layers × (qkWidth + vWidth) × (m·p + m(m+1)/2).
// The attention term is the quadratic one: it dominates long prompts of small models. Prefilling
// t tokens from scratch costs exactly what prefilling h then t − h after them costs, so the time a
// cache hit saves is the compute of the hit tokens themselves.
import type { GpuProfile } from './gpu-profiles.js';
import { headDim, kvBytesPerToken } from './models.js';
import type { ModelConfig } from './models.js';

/** What the FLOP count needs of a model. */
export interface PrefillShape {
  readonly activeParams: number;
  readonly layers: number;
  /** heads × query/key head dim, per layer. */
  readonly qkWidth: number;
  /** heads × value head dim, per layer. */
  readonly vWidth: number;
}

/** The shape of a model that has parameter counts; undefined otherwise (e.g. a config-file model). */
export function prefillShapeOf(m: ModelConfig): PrefillShape | undefined {
  const c = m.compute;
  if (c === undefined) return undefined;
  const width = m.numHeads * headDim(m);
  return { activeParams: c.activeParams, layers: m.numLayers, qkWidth: c.qkWidth ?? width, vWidth: c.vWidth ?? width };
}

/** FLOPs to prefill `newTokens` tokens after `cachedTokens` already cached ones (see the header). */
export function prefillFlops(shape: PrefillShape, newTokens: number, cachedTokens = 0): number {
  const m = newTokens;
  if (m <= 0) return 0;
  const keysScored = m * cachedTokens + (m * (m + 1)) / 2;
  return 2 * shape.activeParams * m + 2 * shape.layers * (shape.qkWidth + shape.vWidth) * keysScored;
}

/** The GPUs one request's prefill runs on: a profile at a utilisation, split over tensor-parallel ranks. */
export interface ComputeBudget {
  readonly profile: GpuProfile;
  /** Model FLOPs utilisation: the share of the peak a prefill achieves, (0, 1]. */
  readonly mfu: number;
  readonly tensorParallel: number;
}

/** The FLOP/s the budget delivers: peak × MFU × tensor-parallel ranks. */
export function effectiveFlopsPerSec(b: ComputeBudget): number {
  return b.profile.bf16DenseTflops * 1e12 * b.mfu * b.tensorParallel;
}

/** Seconds to prefill `newTokens` after `cachedTokens` on the budget. */
export function prefillSeconds(shape: PrefillShape, b: ComputeBudget, newTokens: number, cachedTokens = 0): number {
  return prefillFlops(shape, newTokens, cachedTokens) / effectiveFlopsPerSec(b);
}

/**
 * The read bandwidth per GPU rank at which loading a `tokens`-token prefix from storage takes as long
 * as recomputing it: (tokens × KV bytes per token ÷ ranks) ÷ compute time (bytes/s). Above it,
 * loading wins. Tensor parallelism divides both the bytes and the time, so it cancels out. It falls
 * as the prefix grows: attention makes each further token costlier to recompute.
 */
export function breakEvenBytesPerSec(m: ModelConfig, shape: PrefillShape, b: ComputeBudget, tokens: number): number {
  const seconds = prefillSeconds(shape, b, tokens);
  return seconds > 0 ? (tokens * kvBytesPerToken(m)) / b.tensorParallel / seconds : 0;
}

/** What a request's TTFT is made of: measured queue wait and hit loads, and its token counts. */
export interface TtftInputs {
  readonly queueMs: number;
  readonly promptTokens: number;
  /** Tokens served from cache: the prompt's first tokens (a cached prefix). */
  readonly hitTokens: number;
  /** Measured time to load them (ms). */
  readonly hitLoadMs: number;
}

export interface TtftFigures {
  /** queue + load of the hit tokens + compute of the others after them (ms). */
  readonly offloadMs: number;
  /** queue + compute of every prompt token (ms). */
  readonly recomputeMs: number;
  /** Compute of the hit tokens alone: offload wins exactly when the load takes less (ms). */
  readonly hitComputeMs: number;
}

/** A request's time to first token with and without offload (issue 23). */
export function requestTtft(shape: PrefillShape, b: ComputeBudget, t: TtftInputs): TtftFigures {
  const hit = Math.min(Math.max(0, t.hitTokens), t.promptTokens);
  const ms = (newTokens: number, cachedTokens = 0): number => prefillSeconds(shape, b, newTokens, cachedTokens) * 1000;
  return {
    offloadMs: t.queueMs + t.hitLoadMs + ms(t.promptTokens - hit, hit),
    recomputeMs: t.queueMs + ms(t.promptTokens),
    hitComputeMs: ms(hit),
  };
}
