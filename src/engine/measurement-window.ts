// The measured window: its wall-clock span, the block-device counters over it (when the storage's
// device was resolved), the event loop's delay during it, how busy the main thread was and the CPU the
// whole process used (every thread: libuv's pool, fillers, copy threads, io_uring workers).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { EventLoopUtilization, IntervalHistogram } from 'node:perf_hooks';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import type { DiskCounters, StorageDevice } from '../metrics/diskstats.js';
import type { DelaySummaryMs, HarnessCpu, RunResult } from '../metrics/result.js';
import type { Clock } from '../util/clock.js';

/** The monitor samples every this many ms; its samples include the interval itself. */
const LOOP_DELAY_RESOLUTION_MS = 10;

export interface WindowFigures {
  /** From the window's start to the last I/O completed, tail included: the denominator of every rate. */
  readonly elapsedSec: number;
  readonly eventLoopDelayMs: DelaySummaryMs;
  /** Share of the dispatch the main thread spent running code rather than waiting for events (0–1). */
  readonly mainThreadBusy: number;
  /** CPU seconds of the whole process over the window (process.cpuUsage: user and system of every thread). */
  readonly cpu: HarnessCpu;
  readonly device?: RunResult['device'];
}

export class MeasurementWindow {
  private constructor(
    private readonly clock: Clock,
    /** Window start on `clock`: the dispatch's schedule starts here. */
    readonly startMs: number,
    private readonly loopDelay: IntervalHistogram,
    private readonly watch: DiskWatch | undefined,
    private readonly diskBefore: DiskCounters | undefined,
    /** Event-loop utilisation counters at the start; the window's share is their difference at the end. */
    private readonly eluStart: EventLoopUtilization,
    /** The process's CPU use at the start (µs). */
    private readonly cpuStart: NodeJS.CpuUsage,
  ) {}

  /** The main thread's busy share from the start until the loop monitor stopped (or now). */
  private busy: number | undefined;

  /** Starts the window now, watching the storage's block device when it was resolved. */
  static async open(device: StorageDevice, clock: Clock): Promise<MeasurementWindow> {
    const watch = device.kind === 'device' ? DiskWatch.forDevice(device.device) : undefined;
    const diskBefore = await watch?.snapshot().catch(() => undefined);
    const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    loopDelay.enable();
    return new MeasurementWindow(clock, clock.now(), loopDelay, watch, diskBefore, performance.eventLoopUtilization(), process.cpuUsage());
  }

  elapsedSec(): number {
    return (this.clock.now() - this.startMs) / 1000;
  }

  /** Stops sampling the event loop (the dispatch is over). */
  stopLoopMonitor(): void {
    this.loopDelay.disable();
    this.busy ??= this.mainThreadBusy();
  }

  private mainThreadBusy(): number {
    return performance.eventLoopUtilization(this.eluStart).utilization;
  }

  /** Ends the window: its span now, then the device counters. */
  async close(): Promise<WindowFigures> {
    const elapsedSec = this.elapsedSec();
    const used = process.cpuUsage(this.cpuStart);
    const cpu = { userSec: used.user / 1e6, systemSec: used.system / 1e6 };
    const watch = this.watch;
    const diskAfter = this.diskBefore === undefined ? undefined : await watch?.snapshot().catch(() => undefined);
    return {
      elapsedSec,
      eventLoopDelayMs: delaySummary(this.loopDelay),
      mainThreadBusy: this.busy ?? this.mainThreadBusy(),
      cpu,
      ...(watch !== undefined && this.diskBefore !== undefined && diskAfter !== undefined
        ? { device: { name: watch.device.name, delta: diskDelta(this.diskBefore, diskAfter) } }
        : {}),
    };
  }
}

function delaySummary(h: IntervalHistogram): DelaySummaryMs {
  // Node's samples are the time between ticks, so the interval is subtracted to leave the delay.
  const ms = (ns: number): number => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS) : 0);
  return { mean: ms(h.mean), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
}
