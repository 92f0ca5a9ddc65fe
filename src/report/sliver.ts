// The last point of a per-second series covers what completed after the last whole second: often a
// few milliseconds, and at a stop it holds the operations the stop cut short (a 9 ms point with
// 280 MiB of reads). Drawn as a rate, such a sliver is a spike of tens of GiB/s that squashes the rest
// of the chart. A sliver (under half a step) is therefore folded into the interval before it: the two
// are one interval of their summed length, with their summed counts. The HTML report's charts and the
// live view use the same rule.

import type { DevicePoint } from '../metrics/device-series.js';
import type { TimelineTier } from '../metrics/timeline.js';
import type { TierName } from '../tiers/backend.js';

/** An interval shorter than this share of the series' step is a sliver. */
export const SLIVER_SHARE = 0.5;

export function isSliver(durationSec: number, stepSec: number): boolean {
  return durationSec < stepSec * SLIVER_SHARE;
}

interface Interval {
  readonly t_sec: number;
  readonly duration_sec: number;
}

/**
 * The points with a sliver at the end folded into the point before it by `fold`. The folded point
 * keeps the earlier point's place on the x axis, so the series shares its x values with the others.
 */
export function foldLastSliver<P extends Interval>(points: readonly P[], stepSec: number, fold: (whole: P, sliver: P) => P): readonly P[] {
  const sliver = points[points.length - 1];
  const whole = points[points.length - 2];
  if (sliver === undefined || whole === undefined || !isSliver(sliver.duration_sec, stepSec)) return points;
  return [...points.slice(0, -2), { ...fold(whole, sliver), t_sec: whole.t_sec }];
}

/** A per-second rate, weighted by the two intervals' lengths: (r₁·d₁ + r₂·d₂) ÷ (d₁ + d₂). */
function weighted(a: number, da: number, b: number, db: number): number {
  return da + db > 0 ? (a * da + b * db) / (da + db) : 0;
}

/** Counts of one tier in one interval, as the timeline records them. */
type TierCounts = TimelineTier;

/** The fields of a timeline point the fold reads (results file and live snapshot alike). */
export interface TimelineCounts extends Interval {
  readonly requests_completed: number;
  readonly tokens_per_sec: number;
  readonly evictions: number;
  readonly tiers: Partial<Record<TierName, TierCounts>>;
  readonly hit_rate: number | null;
  readonly queue_wait_ms_p95: number | null;
  readonly storage_read_latency_ms: unknown;
  readonly storage_write_latency_ms: unknown;
}

function foldTiers(whole: TimelineCounts['tiers'], sliver: TimelineCounts['tiers']): TimelineCounts['tiers'] {
  const tiers: Partial<Record<TierName, TierCounts>> = {};
  for (const name of ['gpu', 'cpu', 'storage'] as const) {
    const a = whole[name];
    const b = sliver[name];
    const only = a === undefined || b === undefined ? (b ?? a) : undefined;
    if (only !== undefined) tiers[name] = only;
    if (a === undefined || b === undefined) continue;
    tiers[name] = {
      read_bytes: a.read_bytes + b.read_bytes,
      write_bytes: a.write_bytes + b.write_bytes,
      read_ops: a.read_ops + b.read_ops,
      write_ops: a.write_ops + b.write_ops,
      occupancy_bytes: b.occupancy_bytes,
      evictions: a.evictions + b.evictions,
    };
  }
  return tiers;
}

/**
 * One timeline interval from a whole one and the sliver after it: counts summed, tokens/s weighted
 * by length, the state at the end (occupancy, users, in flight) the sliver's. Percentiles and the hit
 * rate cannot be merged from what a point holds; they stay the whole interval's, which rest on far
 * more operations than the sliver's.
 */
export function foldTimelineSliver<P extends TimelineCounts>(whole: P, sliver: P): P {
  return {
    ...sliver,
    hit_rate: whole.hit_rate,
    queue_wait_ms_p95: whole.queue_wait_ms_p95,
    storage_read_latency_ms: whole.storage_read_latency_ms,
    storage_write_latency_ms: whole.storage_write_latency_ms,
    duration_sec: whole.duration_sec + sliver.duration_sec,
    requests_completed: whole.requests_completed + sliver.requests_completed,
    tokens_per_sec: weighted(whole.tokens_per_sec, whole.duration_sec, sliver.tokens_per_sec, sliver.duration_sec),
    evictions: whole.evictions + sliver.evictions,
    tiers: foldTiers(whole.tiers, sliver.tiers),
  };
}

/** The fields of a device point (the block device's counters over one interval, as rates). */
export type DeviceRates = DevicePoint;

/** A per-request mean over both intervals: each side weighted by its requests (a side without any has none). */
function perRequest(a: number | null, na: number, b: number | null, nb: number): number | null {
  const wa = a === null ? 0 : na;
  const wb = b === null ? 0 : nb;
  return wa + wb > 0 ? ((a ?? 0) * wa + (b ?? 0) * wb) / (wa + wb) : null;
}

/** One device interval from a whole one and the sliver after it: rates and time averages weighted by length, per-request means by requests. */
export function foldDeviceSliver<P extends DeviceRates>(whole: P, sliver: P): P {
  const da = whole.duration_sec;
  const db = sliver.duration_sec;
  const rate = (f: (p: DeviceRates) => number): number => weighted(f(whole), da, f(sliver), db);
  const reads = (p: DeviceRates, d: number): number => p.read_iops * d;
  const writes = (p: DeviceRates, d: number): number => p.write_iops * d;
  return {
    ...sliver,
    duration_sec: da + db,
    read_iops: rate((p) => p.read_iops),
    write_iops: rate((p) => p.write_iops),
    read_bytes_per_sec: rate((p) => p.read_bytes_per_sec),
    write_bytes_per_sec: rate((p) => p.write_bytes_per_sec),
    utilization_pct: rate((p) => p.utilization_pct),
    avg_queue_depth: rate((p) => p.avg_queue_depth),
    avg_read_request_bytes: perRequest(whole.avg_read_request_bytes, reads(whole, da), sliver.avg_read_request_bytes, reads(sliver, db)),
    avg_write_request_bytes: perRequest(
      whole.avg_write_request_bytes,
      writes(whole, da),
      sliver.avg_write_request_bytes,
      writes(sliver, db),
    ),
    read_await_ms: perRequest(whole.read_await_ms, reads(whole, da), sliver.read_await_ms, reads(sliver, db)),
    write_await_ms: perRequest(whole.write_await_ms, writes(whole, da), sliver.write_await_ms, writes(sliver, db)),
  };
}
