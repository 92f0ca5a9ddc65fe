// The run timeline: one point per second of the measured phase with what completed in that second
// (bytes and operations per tier, requests, tokens, hits, evictions, storage latency percentiles and
// queue waits of that second) and the state at its end (users, operations in flight, occupancy).
// Each point is the difference of the run's own counters between two samples, so the points add up
// exactly to the run's totals; the last point, shorter, covers what completed after the last full
// second. Constant cost per sample: counter differences and the percentiles of two interval
// histograms (their own Recorder window) and one queue-wait histogram, all reset and reused.
import type { TierName } from '../tiers/backend.js';
import { LatencyHistogram } from './latency.js';
import type { LatencyWindow, WindowSelection } from './latency-window.js';
import type { Recorder, TierTraffic } from './recorder.js';
import { kvReadBytes, kvWriteBytes } from './recorder.js';

/** Percentiles of one second's storage operations (ms); all null when the second had none. */
export interface IntervalLatency {
  readonly count: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

/** One tier's traffic completed in the interval and what it held at its end. */
export interface TimelineTier {
  /** KV bytes read: hits served plus entries demoted out (the run's kvReadBytes). */
  readonly read_bytes: number;
  /** KV bytes written: entries placed plus entries demoted in (the run's kvWriteBytes). */
  readonly write_bytes: number;
  readonly read_ops: number;
  readonly write_ops: number;
  readonly occupancy_bytes: number;
  /** Entries that left this tier: demoted down or deleted to make room. */
  readonly evictions: number;
}

/** One point of the timeline, in the results file's names (kvcache_bench.timeline.points). */
export interface TimelineSample {
  readonly t_sec: number;
  readonly duration_sec: number;
  readonly requests_completed: number;
  readonly tokens_per_sec: number;
  readonly hit_rate: number | null;
  readonly users: number;
  readonly in_flight_ops: number;
  readonly queue_wait_ms_p95: number | null;
  readonly evictions: number;
  readonly tiers: Partial<Record<TierName, TimelineTier>>;
  readonly storage_read_latency_ms: IntervalLatency;
  readonly storage_write_latency_ms: IntervalLatency;
}

export interface RunTimeline {
  readonly interval_sec: 1;
  readonly points: readonly TimelineSample[];
}

/** What the timeline reads at a sample besides the Recorder: live state owned by the engine. */
export interface TimelineSources {
  readonly recorder: Recorder;
  /** Completed requests and generated tokens so far (RequestMetrics). */
  readonly requests: { readonly requestsCompleted: number; readonly tokensGenerated: number };
  /** The run's tiers, fastest first. */
  readonly tiers: readonly TierName[];
  readonly occupancyBytes: (tier: TierName) => number;
  readonly activeUsers: () => number;
  readonly operationsInFlight: () => number;
}

/**
 * Storage latencies of the timeline: every operation that moved bytes to or from the storage tier,
 * demotions included, so a point's latency `count` equals its storage `read_ops` / `write_ops`.
 */
export const TIMELINE_WINDOW: WindowSelection = {
  storage_read: [
    ['storage', 'read'],
    ['storage', 'demote_read'],
  ],
  storage_write: [
    ['storage', 'write'],
    ['storage', 'demote_write'],
  ],
};

/** The counters a point is the difference of. */
interface Totals {
  readonly atMs: number;
  readonly requests: number;
  readonly tokens: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly tiers: Partial<Record<TierName, TierTotals>>;
}

interface TierTotals {
  readonly readBytes: number;
  readonly writeBytes: number;
  readonly readOps: number;
  readonly writeOps: number;
  readonly evictions: number;
}

function tierTotals(t: Readonly<TierTraffic>): TierTotals {
  return {
    readBytes: kvReadBytes(t),
    writeBytes: kvWriteBytes(t),
    readOps: t.readOps + t.demoteOutOps,
    writeOps: t.writeOps + t.demoteInOps,
    evictions: t.demoteOutOps + t.evictDeleteOps,
  };
}

function intervalLatency(h: LatencyHistogram | undefined): IntervalLatency {
  if (h === undefined || h.count === 0) return { count: 0, p50: null, p95: null, p99: null, max: null };
  return { count: h.count, p50: h.percentileMs(50), p95: h.percentileMs(95), p99: h.percentileMs(99), max: h.maxMs };
}

export class TimelineSampler {
  private readonly points: TimelineSample[] = [];
  private readonly window: LatencyWindow;
  private readonly queueWait = new LatencyHistogram();
  private last: Totals;
  private closed = false;

  /** Starts the timeline at `startMs` (the measured window's start on the run's clock). */
  constructor(
    private readonly src: TimelineSources,
    private readonly startMs: number,
  ) {
    this.window = src.recorder.openWindow(TIMELINE_WINDOW);
    this.last = this.totals(startMs);
  }

  /** A request left the queue for a worker after waiting `ms`. */
  recordQueueWait(ms: number): void {
    this.queueWait.recordMs(ms);
  }

  /** Closes the interval ending at `nowMs` and returns its point. */
  sample(nowMs: number): TimelineSample {
    const now = this.totals(nowMs);
    const point = this.pointBetween(this.last, now);
    this.points.push(point);
    this.last = now;
    return point;
  }

  /**
   * Ends the timeline at `endMs` (the end of the measured window): a last, shorter point covers what
   * completed after the last full second. A window shorter than one interval has no points.
   */
  finish(endMs: number): RunTimeline {
    if (!this.closed) {
      this.closed = true;
      if (this.points.length > 0 && endMs > this.last.atMs) this.sample(endMs);
      this.src.recorder.closeWindow(this.window);
    }
    return { interval_sec: 1, points: this.points };
  }

  /** Histograms this timeline ever allocated: constant (4 window + 1 queue wait at most) however long the run. */
  get histogramsCreated(): number {
    return this.window.histogramsCreated + 1;
  }

  /** Points so far (the live view reads the latest). */
  get latest(): TimelineSample | undefined {
    return this.points[this.points.length - 1];
  }

  private totals(atMs: number): Totals {
    const rec = this.src.recorder;
    const c = rec.counters;
    const tiers: Partial<Record<TierName, TierTotals>> = {};
    for (const t of this.src.tiers) tiers[t] = tierTotals(rec.traffic[t]);
    return {
      atMs,
      requests: this.src.requests.requestsCompleted,
      tokens: this.src.requests.tokensGenerated,
      hits: c.cacheHits,
      misses: c.cacheMisses,
      evictions: c.evictions,
      tiers,
    };
  }

  private pointBetween(a: Totals, b: Totals): TimelineSample {
    const sec = (b.atMs - a.atMs) / 1000;
    const lookups = b.hits - a.hits + (b.misses - a.misses);
    const tiers: Partial<Record<TierName, TimelineTier>> = {};
    for (const t of this.src.tiers) {
      const x = a.tiers[t];
      const y = b.tiers[t];
      if (x === undefined || y === undefined) continue;
      tiers[t] = {
        read_bytes: y.readBytes - x.readBytes,
        write_bytes: y.writeBytes - x.writeBytes,
        read_ops: y.readOps - x.readOps,
        write_ops: y.writeOps - x.writeOps,
        occupancy_bytes: this.src.occupancyBytes(t),
        evictions: y.evictions - x.evictions,
      };
    }
    const latencies = this.window.take();
    const queueP95 = this.queueWait.count > 0 ? this.queueWait.percentileMs(95) : null;
    this.queueWait.reset();
    return {
      t_sec: (b.atMs - this.startMs) / 1000,
      duration_sec: sec,
      requests_completed: b.requests - a.requests,
      tokens_per_sec: sec > 0 ? (b.tokens - a.tokens) / sec : 0,
      hit_rate: lookups > 0 ? (b.hits - a.hits) / lookups : null,
      users: this.src.activeUsers(),
      in_flight_ops: this.src.operationsInFlight(),
      queue_wait_ms_p95: queueP95,
      evictions: b.evictions - a.evictions,
      tiers,
      storage_read_latency_ms: intervalLatency(latencies.get('storage_read')),
      storage_write_latency_ms: intervalLatency(latencies.get('storage_write')),
    };
  }
}
