// Per-second `timeline` and `device_telemetry` blocks that follow the shared contract (issue 15 item 1)
// exactly, made up deterministically, for report tests and bench/report-size.ts until real runs write
// them. Values are plausible shapes (a ramp, a fill, evictions once full), not measurements.
import type { DeviceTelemetry, Timeline, TimelinePoint } from '../../../src/report/html/timeline-contract.js';

type Tier = 'gpu' | 'cpu' | 'storage';

export interface SyntheticOptions {
  readonly seconds: number;
  readonly tiers?: readonly Tier[];
  /** The last interval's length (a run rarely ends on a whole second). */
  readonly lastDurationSec?: number;
}

const MiB = 1024 * 1024;

/** A deterministic wobble in [-1, 1] (no RNG state: the same second always gives the same value). */
const wobble = (i: number, k: number): number => Math.sin(i * 0.7 + k) * 0.5 + Math.sin(i * 0.13 + 2 * k) * 0.5;

export function syntheticTimeline(o: SyntheticOptions): Timeline {
  const tiers = o.tiers ?? ['cpu', 'storage'];
  const points: TimelinePoint[] = [];
  for (let i = 0; i < o.seconds; i++) {
    const last = i === o.seconds - 1;
    const duration = last ? (o.lastDurationSec ?? 1) : 1;
    const full = i > o.seconds / 3;
    const readOps = Math.round((200 + 40 * wobble(i, 1)) * duration);
    const writeOps = Math.round((60 + 15 * wobble(i, 2)) * duration);
    const tierEntry = (t: Tier, scale: number) => ({
      read_bytes: readOps * scale * 4 * MiB,
      write_bytes: writeOps * scale * 4 * MiB,
      read_ops: readOps * scale,
      write_ops: writeOps * scale,
      occupancy_bytes: Math.round(Math.min(1, (i + 1) / (o.seconds / 3)) * (t === 'storage' ? 40_000 : 2_000) * MiB),
      evictions: full ? Math.round((5 * scale + 2 * wobble(i, 3) + 2) * duration) : 0,
    });
    const quiet = i % 97 === 50; // a second with no storage reads: its percentiles are null
    const p50 = 20 + 5 * wobble(i, 4);
    points.push({
      t_sec: Number((i + duration).toFixed(3)),
      duration_sec: duration,
      requests_completed: Math.round(18 * duration + 3 * wobble(i, 5)),
      tokens_per_sec: 450 + 60 * wobble(i, 6),
      hit_rate: i === 0 ? null : 0.9 + 0.05 * wobble(i, 7),
      users: 16,
      in_flight_ops: 8 + Math.round(4 * wobble(i, 8)),
      queue_wait_ms_p95: i === 0 ? null : 3 + wobble(i, 9),
      evictions: full ? Math.round(12 * duration) : 0,
      tiers: Object.fromEntries(tiers.map((t) => [t, tierEntry(t, t === 'storage' ? 1 : 2)])),
      storage_read_latency_ms: quiet
        ? { count: 0, p50: null, p95: null, p99: null, max: null }
        : { count: readOps, p50, p95: p50 * 2.2, p99: p50 * 3.1, max: p50 * 4 },
      storage_write_latency_ms: { count: writeOps, p50: p50 * 1.4, p95: p50 * 2.9, p99: p50 * 3.8, max: p50 * 5 },
    });
  }
  return { interval_sec: 1, points };
}

export function syntheticDeviceTelemetry(o: SyntheticOptions): DeviceTelemetry {
  const points: DeviceTelemetry['points'] = [];
  for (let i = 0; i < o.seconds; i++) {
    const duration = i === o.seconds - 1 ? (o.lastDurationSec ?? 1) : 1;
    const readIops = 1600 + 300 * wobble(i, 11);
    const writeIops = 480 + 100 * wobble(i, 12);
    points.push({
      t_sec: Number((i + duration).toFixed(3)),
      duration_sec: duration,
      read_iops: readIops,
      write_iops: writeIops,
      read_bytes_per_sec: readIops * 512 * 1024,
      write_bytes_per_sec: writeIops * 512 * 1024,
      in_flight: 6 + Math.round(3 * wobble(i, 13)),
      utilization_pct: 85 + 10 * wobble(i, 14),
      avg_queue_depth: 7 + 2 * wobble(i, 15),
      avg_read_request_bytes: 512 * 1024,
      avg_write_request_bytes: i % 97 === 50 ? null : 512 * 1024,
      read_await_ms: 2.5 + 0.5 * wobble(i, 16),
      write_await_ms: i % 97 === 50 ? null : 4 + wobble(i, 17),
    });
  }
  return {
    device: 'vda',
    source: '/sys/block/vda/stat',
    interval_sec: 1,
    points,
    summary: {
      read_bytes: 1600 * 512 * 1024 * o.seconds,
      write_bytes: 480 * 512 * 1024 * o.seconds,
      read_ops: 1600 * o.seconds,
      write_ops: 480 * o.seconds,
      mean_utilization_pct: 85,
      max_in_flight: 9,
      mean_queue_depth: 7,
      read_await_ms: 2.5,
      write_await_ms: 4,
    },
  };
}

/** What the synthetic blocks add to a document's kvcache_bench. */
export interface WithSeries {
  readonly kvcache_bench: { timeline: Timeline; device_telemetry: DeviceTelemetry | null };
}

/** A copy of a results document (plain JSON) with the two blocks added under kvcache_bench. */
export function withSyntheticSeries<T extends { kvcache_bench: object }>(doc: T, o: SyntheticOptions, device = true): T & WithSeries {
  return {
    ...doc,
    kvcache_bench: { ...doc.kvcache_bench, timeline: syntheticTimeline(o), device_telemetry: device ? syntheticDeviceTelemetry(o) : null },
  };
}
