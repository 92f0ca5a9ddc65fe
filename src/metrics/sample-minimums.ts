// How many samples a figure needs before it means what its name says. Shared by the storage_health
// verdict (cache-stats.ts), the validity verdict (validity.ts) and the console, which prints `n/a`
// for a percentile below its minimum.

/**
 * Samples a percentile needs: below 100 ÷ (100 − NN) samples the pNN is simply the largest sample
 * (p95 of 10 samples = p99 = p99.9 = the maximum); from there on at least one sample lies above it.
 * So p95 ≥ 20, p99 ≥ 100, p99.9 ≥ 1,000. The median of one sample is that sample.
 */
export const MIN_SAMPLES = { p50: 1, p95: 20, p99: 100, p999: 1000 } as const;
export type GatedPercentile = keyof typeof MIN_SAMPLES;

/**
 * Completed whole-entry storage transfers a run needs for its storage figures to be a measurement.
 * A bandwidth is bytes ÷ window, and the window's edges (the first transfer of each stream, the one
 * cut short at the stop) are each worth about one transfer: with 20 transfers they are ≤ 10 % of a
 * single stream's window. It is also the p95's minimum, so a valid run can state a p95 at all.
 * (Window < N × mean transfer size ÷ storage bandwidth is the same condition: that quotient is the
 * transfer count.)
 */
export const MIN_STORAGE_TRANSFERS = 20;

/** Whether `samples` are enough for percentile `p`. */
export function enoughFor(p: GatedPercentile, samples: number): boolean {
  return samples >= MIN_SAMPLES[p];
}
