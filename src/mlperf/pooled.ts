// Percentiles of latency samples pooled from several ranks (their HDR histograms merged): the merge's
// one way of giving a p95 of every sample, shared by merge.ts and merge-pool.ts.
import { LatencyHistogram } from '../metrics/latency.js';

export interface PooledPercentiles {
  readonly count: number;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
  readonly p99_ms: number | null;
  readonly p999_ms: number | null;
}

/** The encoded histograms (with their sums, when known) merged into one, as percentiles; null percentiles without a sample. */
export function pooledOf(encoded: ReadonlyArray<{ readonly encoded: string; readonly sumMs?: number }>): PooledPercentiles {
  const pooled = new LatencyHistogram();
  for (const h of encoded) pooled.add(LatencyHistogram.decode(h.encoded, h.sumMs));
  const n = pooled.count;
  const at = (p: number): number | null => (n === 0 ? null : pooled.percentileMs(p));
  return { count: n, p50_ms: at(50), p95_ms: at(95), p99_ms: at(99), p999_ms: at(99.9) };
}
