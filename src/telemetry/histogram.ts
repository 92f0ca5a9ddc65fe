// bpftrace's printed maps → buckets and totals, and the statistics the reports show. Every bucket form
// bpftrace prints is read: `[0]`, `[1]`, `[2, 4)`, `[512, 1K)`, `[1K, 2K)`, `[1M, 2M)`, `[4G, 8G)`,
// lhist's `(..., 0)` and `[8000, ...)`, with or without the `|@@@|` bar. The reference drops mixed-suffix
// and G buckets without a word (RC-53); a line we cannot read is counted in `unreadLines`, never dropped
// silently, and a cut-off last line marks the output as truncated.
import type { Bucket } from '../metrics/trace-capture.js';

export interface ParsedTrace {
  /** Every `@name:` map with buckets (possibly none), by name without the `@`. */
  readonly histograms: ReadonlyMap<string, readonly Bucket[]>;
  /** Every `@name: <integer>` map (count(), sum() and plain values). */
  readonly scalars: ReadonlyMap<string, number>;
  /** Lines inside a histogram that are not a bucket (kept for the message; none in bpftrace's own output). */
  readonly unreadLines: readonly string[];
  /** The output ends inside a bucket line (bpftrace was killed while printing). */
  readonly truncated: boolean;
}

const SUFFIX: Readonly<Record<string, number>> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40, P: 2 ** 50, E: 2 ** 60 };

/** `512`, `1K`, `4G` → a number (powers of 1024, as bpftrace prints them); undefined if not one. */
export function parseBound(text: string): number | undefined {
  const m = /^(\d+)([KMGTPE]?)$/.exec(text.trim());
  if (m === null) return undefined;
  return Number(m[1]) * (SUFFIX[m[2] ?? ''] ?? 1);
}

const BUCKET = /^(\[|\()\s*([^,\]]+?)\s*(?:,\s*([^)\]]+?)\s*)?(\]|\))\s+(\d+)(?:\s+\|.*)?$/;

/** One bucket line, or undefined when the line is not a complete bucket. */
export function parseBucketLine(line: string): Bucket | undefined {
  const m = BUCKET.exec(line.trim());
  if (m === null) return undefined;
  const [, open, a = '', b, close, n = ''] = m;
  const count = Number(n);
  if (b === undefined) {
    // `[N]`: exactly the value N (bpftrace's hist prints 0 and 1 this way).
    const v = parseBound(a);
    return open === '[' && close === ']' && v !== undefined ? { lo: v, hi: v + 1, count } : undefined;
  }
  if (a === '...') {
    // `(..., 0)`: below the first bucket; our programs never record negative values.
    const hi = parseBound(b);
    return hi !== undefined ? { lo: hi, hi, count } : undefined;
  }
  const lo = parseBound(a);
  if (lo === undefined) return undefined;
  if (b === '...') return { lo, hi: null, count };
  const hi = parseBound(b);
  return hi !== undefined && hi > lo ? { lo, hi, count } : undefined;
}

/** Parses bpftrace's exit output (stdout; stderr lines are ignored the same way: they match nothing). */
export function parseBpftraceOutput(text: string): ParsedTrace {
  const histograms = new Map<string, Bucket[]>();
  const scalars = new Map<string, number>();
  const unreadLines: string[] = [];
  let current: Bucket[] | undefined;
  const lines = text.split('\n');
  // Output that does not end with a newline was cut off: its last line may be half a bucket.
  const cutOff = text.length > 0 && !text.endsWith('\n');
  let truncated = false;
  lines.forEach((raw, i) => {
    const line = raw.trim();
    const header = /^@([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?:\s*(.*)$/.exec(line);
    if (header !== null) {
      const [, name = '', key, rest = ''] = header;
      if (rest === '') {
        current = [];
        histograms.set(key === undefined ? name : `${name}${key}`, current);
      } else {
        current = undefined;
        const v = Number(rest);
        if (/^-?\d+$/.test(rest) && Number.isFinite(v)) scalars.set(name, v);
      }
      return;
    }
    if (line === '') current = undefined; // a blank line ends a map
    if (current === undefined) return;
    const bucket = parseBucketLine(line);
    if (bucket !== undefined) current.push(bucket);
    else if (cutOff && i === lines.length - 1) truncated = true;
    else unreadLines.push(line);
  });
  if (cutOff && !truncated && current !== undefined) truncated = true;
  return { histograms, scalars, unreadLines, truncated };
}

/** Statistics of one histogram, values in its own unit. */
export interface HistogramStats {
  readonly samples: number;
  /** Percentiles interpolated linearly within the bucket that holds them (null without samples). */
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  /** The reference's percentile: the first bucket whose cumulative count reaches the share, as [lo, hi]. */
  readonly p50Bucket: readonly [number, number | null] | null;
  readonly p95Bucket: readonly [number, number | null] | null;
  readonly p99Bucket: readonly [number, number | null] | null;
  /** Lower bound of the lowest and upper bound of the highest non-empty bucket. */
  readonly minBucket: number | null;
  readonly maxBucket: number | null;
}

export function totalCount(buckets: readonly Bucket[]): number {
  return buckets.reduce((a, b) => a + b.count, 0);
}

/**
 * The value below which `pct` % of the samples lie, assuming samples spread evenly within a bucket.
 * A one-value bucket (`[N]`, hi = lo + 1 on integers) and an open-ended one give their lower bound.
 */
export function interpolatedPercentile(buckets: readonly Bucket[], pct: number): number | null {
  const total = totalCount(buckets);
  if (total === 0) return null;
  const rank = (pct / 100) * total;
  let cum = 0;
  for (const b of buckets) {
    if (b.count === 0) continue;
    if (cum + b.count >= rank) {
      const width = b.hi === null || b.hi - b.lo <= 1 ? 0 : b.hi - b.lo;
      return b.lo + ((rank - cum) / b.count) * width;
    }
    cum += b.count;
  }
  return buckets[buckets.length - 1]?.lo ?? null;
}

/** The reference's bucket percentile: the first bucket whose cumulative count reaches pct % of the total. */
export function bucketPercentile(buckets: readonly Bucket[], pct: number): readonly [number, number | null] | null {
  const total = totalCount(buckets);
  if (total === 0) return null;
  let cum = 0;
  for (const b of buckets) {
    cum += b.count;
    if (b.count > 0 && cum * 100 >= pct * total) return [b.lo, b.hi];
  }
  return null;
}

export function histogramStats(buckets: readonly Bucket[]): HistogramStats {
  const nonEmpty = buckets.filter((b) => b.count > 0);
  const last = nonEmpty[nonEmpty.length - 1];
  return {
    samples: totalCount(buckets),
    p50: interpolatedPercentile(buckets, 50),
    p95: interpolatedPercentile(buckets, 95),
    p99: interpolatedPercentile(buckets, 99),
    p50Bucket: bucketPercentile(buckets, 50),
    p95Bucket: bucketPercentile(buckets, 95),
    p99Bucket: bucketPercentile(buckets, 99),
    minBucket: nonEmpty[0]?.lo ?? null,
    maxBucket: last === undefined ? null : (last.hi ?? last.lo),
  };
}

/** Sum of the samples estimated from the buckets (each at its midpoint): used only when no exact sum was traced. */
export function estimatedSum(buckets: readonly Bucket[]): number {
  return buckets.reduce((a, b) => a + b.count * (b.hi === null || b.hi - b.lo <= 1 ? b.lo : (b.lo + b.hi) / 2), 0);
}
