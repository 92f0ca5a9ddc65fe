// A latency distribution in constant memory (HDR histogram, microsecond resolution, 3 significant
// digits), mergeable and serialisable. The reference keeps every sample in a list (docs/reference-compat.md#rc-39).
import hdr from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';

/** Longest latency the histogram tracks exactly: one hour, in microseconds. */
const HIGHEST_US = 3_600_000_000;

export interface LatencySummaryMs {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly p999: number;
  readonly p9999: number;
  readonly max: number;
}

/** A histogram as plain data: its summary plus the lossless HdrHistogram encoding (for merges and files). */
export interface LatencySnapshot extends LatencySummaryMs {
  readonly encoded: string;
}

export class LatencyHistogram {
  private readonly h: Histogram;
  private sumUs = 0;
  /**
   * Samples below the 1 µs resolution, counted here and folded in before any read: trace mode records
   * hundreds of thousands of zero-time operations a second, and each HDR record costs an index search.
   */
  private belowResolution = 0;

  constructor() {
    this.h = hdr.build({
      // 32-bit buckets: constant memory (~270 KB per histogram for 1 µs … 1 h at 3 digits) and several
      // times faster to record into than the packed layout, which dominated trace-mode profiles.
      bitBucketSize: 32,
      lowestDiscernibleValue: 1,
      highestTrackableValue: HIGHEST_US,
      numberOfSignificantValueDigits: 3,
      autoResize: true,
      useWebAssembly: false,
    });
  }

  /** Records one sample given in milliseconds (clamped to [1 µs, 1 h]). */
  recordMs(ms: number): void {
    this.sumUs += ms * 1000;
    if (ms < 0.0015) {
      this.belowResolution++; // rounds to the 1 µs floor anyway
      return;
    }
    this.h.recordValue(Math.min(HIGHEST_US, Math.round(ms * 1000)));
  }

  /** The histogram with every pending sub-resolution sample folded in. */
  private get hist(): Histogram {
    if (this.belowResolution > 0) {
      this.h.recordValueWithCount(1, this.belowResolution);
      this.belowResolution = 0;
    }
    return this.h;
  }

  get count(): number {
    return this.h.totalCount + this.belowResolution;
  }

  /** Exact mean of the recorded samples in ms (kept as a running sum, not from buckets). */
  get meanMs(): number {
    return this.count === 0 ? 0 : this.sumUs / this.count / 1000;
  }

  /** Value at `percentile` (0–100) in ms, within the histogram's 0.1 % precision. */
  percentileMs(percentile: number): number {
    return this.count === 0 ? 0 : this.hist.getValueAtPercentile(percentile) / 1000;
  }

  get maxMs(): number {
    return this.count === 0 ? 0 : this.hist.maxValue / 1000;
  }

  summary(): LatencySummaryMs {
    return {
      count: this.count,
      mean: this.meanMs,
      p50: this.percentileMs(50),
      p95: this.percentileMs(95),
      p99: this.percentileMs(99),
      p999: this.percentileMs(99.9),
      p9999: this.percentileMs(99.99),
      max: this.maxMs,
    };
  }

  snapshot(): LatencySnapshot {
    return { ...this.summary(), encoded: this.encode() };
  }

  add(other: LatencyHistogram): void {
    this.hist.add(other.hist);
    this.sumUs += other.sumUs;
  }

  reset(): void {
    this.h.reset();
    this.sumUs = 0;
    this.belowResolution = 0;
  }

  /** Compressed base64 HDR encoding (the standard HdrHistogram format), for results files. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.hist);
  }

  static decode(encoded: string, sumMs?: number): LatencyHistogram {
    const out = new LatencyHistogram();
    const h = hdr.decodeFromCompressedBase64(encoded, 32, false);
    out.hist.add(h);
    out.sumUs = sumMs !== undefined ? sumMs * 1000 : h.mean * h.totalCount;
    return out;
  }
}
