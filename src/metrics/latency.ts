// A latency distribution in constant memory (HDR histogram, microsecond resolution, 3 significant
// digits), mergeable and serialisable. The reference keeps every sample in a list (docs/reference-compat.md#rc-39).
import { inflateSync } from 'node:zlib';
import hdr from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';

/** Longest latency the histogram tracks exactly: one hour, in microseconds. */
const HIGHEST_US = 3_600_000_000;

/**
 * Limits on an encoded histogram read from a file. Ours (1 µs … 1 h at 3 digits) is a few KiB encoded
 * and under 250 KiB inflated; a file may hold anything, and unchecked a 1.4 MB string of deflated
 * zeros inflates to 1 GiB, and a header asking for 2^62 at 5 digits allocates gigabytes of counts.
 */
export const MAX_ENCODED_HISTOGRAM_CHARS = 1 << 20;
export const MAX_INFLATED_HISTOGRAM_BYTES = 4 << 20;
const MAX_DECODED_DIGITS = 5;
const MAX_DECODED_HIGHEST = 2 ** 42;
/** HdrHistogram V2 cookies (the low nibble of the word-size byte varies). */
const V2_COMPRESSED_COOKIE = 0x1c849304;
const V2_COOKIE = 0x1c849303;
/** Bytes of the V2 header: cookie, payload length, normalising offset, digits, lowest, highest, ratio. */
const V2_HEADER_BYTES = 40;

/** An encoded histogram that is not one, or that would expand past the limits: names the problem, never quotes the input. */
export class HistogramDecodeError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'HistogramDecodeError';
  }
}

/**
 * Checks an encoded histogram before the library sees it: its size, its compressed header, what it
 * inflates to (zlib stops at the cap instead of allocating what the stream asks for) and the range
 * and precision its header asks for (which size the counts array the decoder allocates).
 */
function checkEncoded(encoded: string): void {
  if (encoded.length > MAX_ENCODED_HISTOGRAM_CHARS)
    throw new HistogramDecodeError(
      `the encoded histogram is ${encoded.length} characters; at most ${MAX_ENCODED_HISTOGRAM_CHARS} are accepted`,
    );
  const bytes = Buffer.from(encoded.trim(), 'base64');
  if (bytes.length < 8 || (bytes.readInt32BE(0) & ~0xf0) !== V2_COMPRESSED_COOKIE)
    throw new HistogramDecodeError('not a compressed HdrHistogram (V2) encoding');
  let inflated: Buffer;
  try {
    inflated = inflateSync(bytes.subarray(8, 8 + Math.max(0, bytes.readInt32BE(4))), { maxOutputLength: MAX_INFLATED_HISTOGRAM_BYTES });
  } catch (e) {
    const tooLarge = e instanceof RangeError || (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
    throw new HistogramDecodeError(
      tooLarge
        ? `the histogram inflates past ${MAX_INFLATED_HISTOGRAM_BYTES} bytes (a decompression bomb?)`
        : 'its compressed data is corrupt',
    );
  }
  if (inflated.length < V2_HEADER_BYTES || (inflated.readInt32BE(0) & ~0xf0) !== V2_COOKIE)
    throw new HistogramDecodeError('not an HdrHistogram (V2) encoding inside');
  const digits = inflated.readInt32BE(12);
  const lowest = Number(inflated.readBigInt64BE(16));
  const highest = Number(inflated.readBigInt64BE(24));
  if (digits < 0 || digits > MAX_DECODED_DIGITS || lowest < 1 || highest < 2 * lowest || highest > MAX_DECODED_HIGHEST)
    throw new HistogramDecodeError(
      `its header asks for values ${lowest} … ${highest} at ${digits} digits; at most ${MAX_DECODED_HIGHEST} at ${MAX_DECODED_DIGITS} digits are accepted`,
    );
}

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

/**
 * Values below this (µs) have a bucket of their own at 3 significant digits (the histogram's first 2048
 * sub-buckets), so counting them in a plain array and adding the counts later loses nothing.
 */
const EXACT_BELOW_US = 2048;

export class LatencyHistogram {
  private readonly h: Histogram;
  private sumUs = 0;
  /**
   * Samples of whole µs below EXACT_BELOW_US, counted here and folded into `h` before any read: a block
   * run records several latencies per block operation, mostly tens of µs, and each HDR record costs an
   * index computation (pow, log2) that was 5 % of the event loop's time. Index 0 holds the samples
   * below the 1 µs resolution (recorded as 1 µs, its floor).
   */
  private readonly exact = new Uint32Array(EXACT_BELOW_US);
  /** Samples in `exact` not folded into `h` yet. */
  private pending = 0;

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
    const us = ms < 0.0015 ? 0 : Math.round(ms * 1000); // below the resolution: the 1 µs floor (index 0)
    if (us < EXACT_BELOW_US) {
      // A count above 2^32 − 1 would wrap: fold first (never in practice: 4 billion samples of one value).
      if (this.exact[us] === 0xffffffff) this.fold();
      this.exact[us]++;
      this.pending++;
      return;
    }
    this.h.recordValue(Math.min(HIGHEST_US, us));
  }

  /** Adds the counted small samples to `h`. */
  private fold(): void {
    const exact = this.exact;
    for (let us = 0; us < EXACT_BELOW_US; us++) {
      const n = exact[us] ?? 0;
      if (n === 0) continue;
      this.h.recordValueWithCount(Math.max(1, us), n);
      exact[us] = 0;
    }
    this.pending = 0;
  }

  /** The histogram with every pending small sample folded in. */
  private get hist(): Histogram {
    if (this.pending > 0) this.fold();
    return this.h;
  }

  get count(): number {
    return this.h.totalCount + this.pending;
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
    this.exact.fill(0);
    this.pending = 0;
  }

  /** Compressed base64 HDR encoding (the standard HdrHistogram format), for results files. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.hist);
  }

  /** Decodes a histogram of a results file; throws HistogramDecodeError when it is not one or exceeds the limits. */
  static decode(encoded: string, sumMs?: number): LatencyHistogram {
    checkEncoded(encoded);
    const out = new LatencyHistogram();
    let h: Histogram;
    try {
      h = hdr.decodeFromCompressedBase64(encoded, 32, false);
    } catch {
      throw new HistogramDecodeError('not a decodable HdrHistogram');
    }
    out.hist.add(h);
    out.sumUs = sumMs !== undefined ? sumMs * 1000 : h.mean * h.totalCount;
    return out;
  }

  /** Why `encoded` cannot be decoded, or undefined when it can (the check readers make once per input). */
  static problemOf(encoded: string): string | undefined {
    try {
      LatencyHistogram.decode(encoded);
      return undefined;
    } catch (e) {
      return e instanceof HistogramDecodeError ? e.message : 'not a decodable HdrHistogram';
    }
  }
}
