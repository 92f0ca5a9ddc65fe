// The modelled time to first token of a run (issue 23): the compute model (model/compute.ts) on the
// run's GPU profile, applied to each completed request's measured queue wait and hit loads, recorded
// in TtftMetrics. Trace mode and models without parameter counts give a reason instead of figures.
import { breakEvenBytesPerSec, prefillShapeOf, requestTtft } from '../model/compute.js';
import type { ComputeBudget, PrefillShape } from '../model/compute.js';
import { gpuProfileOf } from '../model/gpu-profiles.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { TtftMetrics } from '../metrics/ttft.js';
import type { TtftModelled, TtftSetup } from '../metrics/ttft.js';
import type { PipelineOutcome } from './pipeline.js';

/** Prefix lengths the break-even bandwidth is given for. */
export const BREAK_EVEN_CONTEXTS = [1024, 8192, 32768] as const;

export interface TtftSettings {
  readonly gpuProfile: string;
  readonly mfu: number;
  readonly tensorParallel: number;
  readonly model: ModelConfig;
  /** Null tiers: no load is measured, so there is nothing to model around. */
  readonly traceMode: boolean;
}

/** The run's TTFT model: records requests, then reports; or the reason it models nothing. */
export class RunTtft {
  private readonly metrics = new TtftMetrics();

  private constructor(
    private readonly shape: PrefillShape,
    private readonly budget: ComputeBudget,
    private readonly setup: TtftSetup,
  ) {}

  /** Undefined with --gpu-profile none; a reason (no figures) when the run cannot be modelled. */
  static of(s: TtftSettings): RunTtft | { readonly notModelled: string } | undefined {
    const profile = gpuProfileOf(s.gpuProfile);
    if (profile === undefined) return undefined;
    if (s.traceMode) return { notModelled: 'trace mode: no load time is measured (null tiers)' };
    const shape = prefillShapeOf(s.model);
    if (shape === undefined)
      return {
        notModelled: `model ${s.model.key} has no parameter counts (give its model_configs entry total_params and active_params)`,
      };
    const budget: ComputeBudget = { profile, mfu: s.mfu, tensorParallel: s.tensorParallel };
    return new RunTtft(shape, budget, {
      gpuProfile: profile.key,
      gpuName: profile.name,
      bf16DenseTflops: profile.bf16DenseTflops,
      mfu: s.mfu,
      tensorParallel: s.tensorParallel,
      activeParams: shape.activeParams,
      kvBytesPerTokenPerRank: kvBytesPerToken(s.model) / s.tensorParallel,
      breakEven: BREAK_EVEN_CONTEXTS.map((t) => ({ contextTokens: t, bytesPerSec: breakEvenBytesPerSec(s.model, shape, budget, t) })),
    });
  }

  /** One completed request: its measured queue wait and hit loads, the model's compute. */
  record(qos: string, queueMs: number, out: Pick<PipelineOutcome, 'promptTokens' | 'hitTokens' | 'hitLoadMs'>): void {
    const f = requestTtft(this.shape, this.budget, { queueMs, ...out });
    this.metrics.record({
      qos,
      promptTokens: out.promptTokens,
      hitTokens: out.hitTokens,
      hitBytes: out.hitTokens * this.setup.kvBytesPerTokenPerRank,
      hitLoadMs: out.hitLoadMs,
      ...f,
    });
  }

  result(): TtftModelled {
    return { setup: this.setup, figures: this.metrics.snapshot() };
  }
}
