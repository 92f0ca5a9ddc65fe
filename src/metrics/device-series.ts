// Always-on device telemetry: the cache dir's block device's /sys/block/<dev>/stat, sampled once a
// second during the measured phase (no root needed). Each point is the counters' growth over its
// interval, so the points add up to the window's totals. Field meanings are the kernel's
// (Documentation/block/stat.rst): I/Os and ticks per direction, sectors of 512 bytes whatever the
// device's block size, in_flight now, io_ticks (ms the device had I/O in flight) and time_in_queue
// (ms summed over every request in flight, i.e. the integral of the queue depth).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDiskStats } from './diskstats.js';
import type { DiskCounters } from './diskstats.js';

export interface DevicePoint {
  readonly t_sec: number;
  readonly duration_sec: number;
  readonly read_iops: number;
  readonly write_iops: number;
  readonly read_bytes_per_sec: number;
  readonly write_bytes_per_sec: number;
  /** Requests in flight at the sample instant. */
  readonly in_flight: number;
  /** io_ticks growth ÷ interval × 100 (capped at 100: the kernel's tick accounting can overshoot by a tick). */
  readonly utilization_pct: number;
  /** time_in_queue growth ÷ interval: the mean number of requests in flight. */
  readonly avg_queue_depth: number;
  readonly avg_read_request_bytes: number | null;
  readonly avg_write_request_bytes: number | null;
  /** read ticks growth ÷ reads completed: mean time a read spent queued and on the device (ms). */
  readonly read_await_ms: number | null;
  readonly write_await_ms: number | null;
}

export interface DeviceTelemetrySummary {
  readonly read_bytes: number;
  readonly write_bytes: number;
  readonly read_ops: number;
  readonly write_ops: number;
  readonly mean_utilization_pct: number;
  readonly max_in_flight: number;
  readonly mean_queue_depth: number;
  readonly read_await_ms: number | null;
  readonly write_await_ms: number | null;
}

/** The series in the results file's names (kvcache_bench.device_telemetry). */
export interface DeviceTelemetry {
  readonly device: string;
  readonly source: string;
  readonly interval_sec: 1;
  readonly points: readonly DevicePoint[];
  readonly summary: DeviceTelemetrySummary;
}

/**
 * Parses the one line of /sys/block/<dev>/stat (11, 15 or 17 fields by kernel version). It holds the
 * fields of a /proc/diskstats line after major, minor and name, so it is read as such a line.
 */
export function parseSysBlockStat(name: string, text: string): DiskCounters {
  const row = parseDiskStats(`0 0 ${name} ${text.trim()}`)[0];
  if (row === undefined || text.trim().split(/\s+/).length < 11)
    throw new Error(`unreadable block device stat for '${name}': '${text.trim()}'`);
  return row;
}

/** The sysfs file of device `name`. */
export function sysBlockStatPath(name: string, sysRoot = '/sys'): string {
  return join(sysRoot, 'block', name, 'stat');
}

/** Counter growth `a` → `b` as a point ending `tSec` after the window's start. */
export function devicePoint(a: DiskCounters, b: DiskCounters, tSec: number, durationSec: number): DevicePoint {
  const ms = durationSec * 1000;
  const per = (n: number): number => (durationSec > 0 ? n / durationSec : 0);
  const reads = b.readOps - a.readOps;
  const writes = b.writeOps - a.writeOps;
  const readBytes = b.readBytes - a.readBytes;
  const writeBytes = b.writeBytes - a.writeBytes;
  return {
    t_sec: tSec,
    duration_sec: durationSec,
    read_iops: per(reads),
    write_iops: per(writes),
    read_bytes_per_sec: per(readBytes),
    write_bytes_per_sec: per(writeBytes),
    in_flight: b.inFlight,
    utilization_pct: ms > 0 ? Math.min(100, ((b.busyMs - a.busyMs) / ms) * 100) : 0,
    avg_queue_depth: ms > 0 ? (b.weightedMs - a.weightedMs) / ms : 0,
    avg_read_request_bytes: reads > 0 ? readBytes / reads : null,
    avg_write_request_bytes: writes > 0 ? writeBytes / writes : null,
    read_await_ms: reads > 0 ? (b.readMs - a.readMs) / reads : null,
    write_await_ms: writes > 0 ? (b.writeMs - a.writeMs) / writes : null,
  };
}

/** Samples one device's stat file; `read` lets tests feed counters. */
export class DeviceSeries {
  private readonly points: DevicePoint[] = [];
  private first: DiskCounters | undefined;
  private last: { readonly atMs: number; readonly c: DiskCounters } | undefined;
  private maxInFlight = 0;
  /** Samples that could not be read (the next point then spans the gap). */
  private missed = 0;

  private constructor(
    readonly device: string,
    readonly source: string,
    private readonly read: () => Promise<string>,
    private startMs: number,
  ) {}

  /** Starts a series of `device` at `startMs` (its first reading is the baseline); undefined if unreadable. */
  static async start(device: string, startMs: number, source = sysBlockStatPath(device), read = () => readFile(source, 'utf8')) {
    const s = new DeviceSeries(device, source, read, startMs);
    const c = await s.readCounters();
    if (c === undefined) return undefined;
    s.first = c;
    s.last = { atMs: startMs, c };
    return s;
  }

  /**
   * Anchors the series at `startMs` (the measured window's start): the baseline, read just before the
   * window opened so that opening it costs the window nothing, counts as read then.
   */
  startAt(startMs: number): void {
    this.startMs = startMs;
    if (this.last !== undefined) this.last = { atMs: startMs, c: this.last.c };
  }

  /** Reads the counters now (`nowMs` on the run's clock) and appends the interval's point. */
  async sample(nowMs: number): Promise<DevicePoint | undefined> {
    const c = await this.readCounters();
    const prev = this.last;
    if (c === undefined || prev === undefined || nowMs <= prev.atMs) return undefined;
    const point = devicePoint(prev.c, c, (nowMs - this.startMs) / 1000, (nowMs - prev.atMs) / 1000);
    this.points.push(point);
    this.maxInFlight = Math.max(this.maxInFlight, c.inFlight);
    this.last = { atMs: nowMs, c };
    return point;
  }

  /** Ends the series at `endMs`: a last, shorter point when at least one full interval was sampled. */
  async finish(endMs: number): Promise<DeviceTelemetry> {
    if (this.points.length > 0) await this.sample(endMs);
    return this.result();
  }

  get latest(): DevicePoint | undefined {
    return this.points[this.points.length - 1];
  }

  get missedSamples(): number {
    return this.missed;
  }

  /** The series so far and its summary over the span it covers (first reading to last point). */
  result(): DeviceTelemetry {
    const a = this.first;
    const b = this.last;
    const spanMs = a !== undefined && b !== undefined ? b.atMs - this.startMs : 0;
    const whole = a !== undefined && b !== undefined && spanMs > 0 ? devicePoint(a, b.c, spanMs / 1000, spanMs / 1000) : undefined;
    const reads = a !== undefined && b !== undefined ? b.c.readOps - a.readOps : 0;
    const writes = a !== undefined && b !== undefined ? b.c.writeOps - a.writeOps : 0;
    return {
      device: this.device,
      source: this.source,
      interval_sec: 1,
      points: this.points,
      summary: {
        read_bytes: a !== undefined && b !== undefined ? b.c.readBytes - a.readBytes : 0,
        write_bytes: a !== undefined && b !== undefined ? b.c.writeBytes - a.writeBytes : 0,
        read_ops: reads,
        write_ops: writes,
        mean_utilization_pct: whole?.utilization_pct ?? 0,
        max_in_flight: this.maxInFlight,
        mean_queue_depth: whole?.avg_queue_depth ?? 0,
        read_await_ms: whole?.read_await_ms ?? null,
        write_await_ms: whole?.write_await_ms ?? null,
      },
    };
  }

  private async readCounters(): Promise<DiskCounters | undefined> {
    try {
      return parseSysBlockStat(this.device, await this.read());
    } catch {
      this.missed++;
      return undefined;
    }
  }
}
