// bench:ttft's figures of one run, read from its results file, and the medians per condition.
import type { TtftClassJson } from '../../../src/report/ttft-schema.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';

export type Condition = 'ram' | 'disk' | 'throttled';
export const CONDITIONS: readonly Condition[] = ['ram', 'disk', 'throttled'];

export interface RunFigures {
  readonly condition: Condition;
  readonly round: number;
  readonly requests: number;
  readonly withHits: number;
  readonly loadSlowerShare: number | null;
  readonly speedupP5: number | null;
  readonly speedupP50: number | null;
  readonly offloadP50Ms: number;
  readonly recomputeP50Ms: number;
  /** Hit bytes ÷ their load time: the read rate the storage gave the hits (bytes/s). */
  readonly deliveredBytesPerSec: number | null;
  readonly breakEvenBytesPerSec: number | null;
  /** The storage tier's read rate over the measured window (bytes/s). */
  readonly storageReadBytesPerSec: number;
}

/** The figures of one run, or the reason it has none. */
export function figuresOf(doc: ResultsDocument, condition: Condition, round: number): RunFigures | string {
  const t = doc.kvcache_bench.ttft_modelled;
  if (t === undefined) return 'no ttft_modelled block (was --gpu-profile none?)';
  if ('not_modelled' in t) return `not modelled: ${t.not_modelled}`;
  const o: TtftClassJson = t.overall;
  return {
    condition,
    round,
    requests: o.requests,
    withHits: o.requests_with_hits,
    loadSlowerShare: o.load_slower_share,
    speedupP5: o.speedup?.p5 ?? null,
    speedupP50: o.speedup?.p50 ?? null,
    offloadP50Ms: o.ttft_offload_ms.p50,
    recomputeP50Ms: o.ttft_recompute_ms.p50,
    deliveredBytesPerSec: o.delivered_read_bytes_per_sec,
    breakEvenBytesPerSec: o.break_even_read_bytes_per_sec,
    storageReadBytesPerSec: doc.kvcache_bench.storage_bytes.read_bytes_per_sec,
  };
}

/** The median of the values present; null when none is. */
export function median(values: ReadonlyArray<number | null>): number | null {
  const v = values.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Conditions ordered by a figure, highest first (conditions without it last). */
export function rankBy(runs: readonly RunFigures[], pick: (r: RunFigures) => number | null): Condition[] {
  const at = (c: Condition): number => median(runs.filter((r) => r.condition === c).map(pick)) ?? -Infinity;
  return [...CONDITIONS].sort((a, b) => at(b) - at(a));
}
