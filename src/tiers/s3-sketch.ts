// A constant-memory latency sketch for the S3 tier's own figures (time to first byte, PUT times): the
// Recorder's histograms belong to the metrics layer, which the tiers may not import. Log-spaced
// buckets 2 % wide from 1 µs to ~1,000 s, so a percentile is within 2 % of the true value.

import type { LatencySummaryMs } from './storage-kind.js';

const RATIO = 1.02;
const MIN_MS = 0.001;
const BUCKETS = Math.ceil(Math.log(1e6 / MIN_MS) / Math.log(RATIO));

export class LatencySketch {
  private readonly counts = new Float64Array(BUCKETS + 1);
  private n = 0;
  private sum = 0;
  private max = 0;

  add(ms: number): void {
    const v = Math.max(ms, 0);
    const i = v <= MIN_MS ? 0 : Math.min(BUCKETS, Math.ceil(Math.log(v / MIN_MS) / Math.log(RATIO)));
    this.counts[i]++;
    this.n++;
    this.sum += v;
    this.max = Math.max(this.max, v);
  }

  /** The upper edge of the bucket holding the q-quantile, capped at the largest value seen. */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const rank = Math.ceil(q * this.n);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(MIN_MS * RATIO ** i, this.max);
    }
    return this.max;
  }

  /** Count, mean, percentiles and maximum in ms; zeros when empty. */
  summary(): LatencySummaryMs {
    const r = (x: number): number => Math.round(x * 1000) / 1000;
    return {
      count: this.n,
      meanMs: r(this.n === 0 ? 0 : this.sum / this.n),
      p50Ms: r(this.quantile(0.5)),
      p95Ms: r(this.quantile(0.95)),
      p99Ms: r(this.quantile(0.99)),
      maxMs: r(this.max),
    };
  }
}
