// A latency distribution from a saved HDR histogram, as a percentile curve on a "nines" axis:
// x = −log10(1 − p/100), so 1 is p90, 2 is p99, 3 is p99.9 — the tail gets as much room as the body.
import { LatencyHistogram } from '../../metrics/latency.js';

/** Points per nine: enough for a smooth curve, few enough to keep a report small. */
const STEPS_PER_NINE = 20;
/** The deepest tail drawn (p99.999), whatever the sample count. */
const MAX_NINES = 5;

export interface PercentileCurve {
  /** Nines (x) of each point. */
  readonly nines: readonly number[];
  /** Latency (ms) at each point. */
  readonly ms: readonly number[];
}

export function percentileOfNines(nines: number): number {
  return 100 * (1 - 10 ** -nines);
}

/**
 * The curve of an encoded histogram. It stops at the deepest percentile the samples resolve:
 * log10(count) nines (100 samples show p99 as their slowest, not beyond), at most MAX_NINES.
 */
export function percentileCurve(encoded: string, count: number): PercentileCurve {
  if (count <= 0) return { nines: [], ms: [] };
  const h = LatencyHistogram.decode(encoded);
  const deepest = Math.min(MAX_NINES, Math.log10(count));
  // A fixed grid (every 1/STEPS_PER_NINE nine) so that curves of several runs share their x values.
  const xs: number[] = [];
  for (let i = 0; i / STEPS_PER_NINE < deepest; i++) xs.push(i / STEPS_PER_NINE);
  xs.push(Number(deepest.toFixed(4)));
  return { nines: xs, ms: xs.map((x) => h.percentileMs(percentileOfNines(x))) };
}
