// The per-second series of the measured phase: one tick a second samples the run timeline and the
// cache dir's block device, then hands the live view its snapshot. One timer for all three, so the
// dashboard shows exactly the second the timeline saved. Never prints.
import type { StorageDevice } from '../metrics/diskstats.js';
import { DeviceSeries } from '../metrics/device-series.js';
import type { DeviceTelemetry } from '../metrics/device-series.js';
import type { SeriesTick } from '../metrics/progress.js';
import type { Recorder } from '../metrics/recorder.js';
import { TimelineSampler } from '../metrics/timeline.js';
import type { RunTimeline } from '../metrics/timeline.js';
import type { TierName } from '../tiers/backend.js';
import { everyInterval } from '../util/clock.js';
import type { Clock } from '../util/clock.js';

export const SERIES_INTERVAL_MS = 1000;

/** The tiers as the timeline reads them (the TieredCache). */
export interface TierView {
  readonly order: readonly TierName[];
  readonly entries: { residentBytes(tier: TierName): number };
  limitBytes(tier: TierName): number;
  operationsInFlight(): number;
}

export interface RunSeriesInputs {
  readonly recorder: Recorder;
  readonly requests: { readonly requestsCompleted: number; readonly tokensGenerated: number };
  readonly tiers: TierView;
  readonly clock: Clock;
  /** The measured window's start on `clock`. */
  readonly startMs: number;
  /** Calls `tick` every `ms`; returns its stop. Default setInterval (tests tick by hand). */
  readonly every?: (tick: () => void, ms: number) => () => void;
  /** The device series (openSeriesDevice; tests pass one over a fake stat reader), or why there is none; undefined in trace mode. */
  readonly device: DeviceSeries | string | undefined;
  readonly onTick?: (t: SeriesTick) => void;
}

export interface RunSeriesResult {
  readonly timeline: RunTimeline;
  /** null when the device could not be resolved or read (the reason is in `warnings`) and in trace mode. */
  readonly deviceTelemetry: DeviceTelemetry | null;
  readonly warnings: readonly string[];
}

/**
 * The storage's device series with its baseline read now, or why there is none (a warning);
 * undefined when the storage has no device by design (trace mode, a backend without local files).
 * Called just before the measured window opens, so that reading the baseline costs the window nothing.
 */
export async function openSeriesDevice(device: StorageDevice): Promise<DeviceSeries | string | undefined> {
  if (device.kind === 'none') return undefined;
  if (device.kind === 'unresolved') {
    const why = device.error ?? 'not a single local block device (tmpfs, overlay, network file system, RAID?)';
    return `device telemetry off: the cache dir's block device could not be resolved (${why})`;
  }
  const name = device.device.name;
  const series = await DeviceSeries.start(name, 0);
  return series ?? `device telemetry off: /sys/block/${name}/stat could not be read`;
}

export class RunSeries {
  private activeUsers: () => number = () => 0;
  private stopTicks: () => void = () => undefined;
  /** The device read of the last tick, awaited before the series ends (so no point is lost or doubled). */
  private pendingDevice: Promise<unknown> = Promise.resolve();
  private deviceBusy = false;

  private constructor(
    private readonly i: RunSeriesInputs,
    private readonly timeline: TimelineSampler,
    private readonly device: DeviceSeries | undefined,
    private readonly warnings: readonly string[],
  ) {}

  /** Starts both series at the window's start (the device's baseline reading counts as taken then). */
  static create(i: RunSeriesInputs): RunSeries {
    const opened = i.device;
    if (opened !== undefined && typeof opened !== 'string') opened.startAt(i.startMs);
    const timeline = new TimelineSampler(
      {
        recorder: i.recorder,
        requests: i.requests,
        tiers: i.tiers.order,
        occupancyBytes: (t) => i.tiers.entries.residentBytes(t),
        activeUsers: () => series.activeUsers(),
        operationsInFlight: () => i.tiers.operationsInFlight(),
      },
      i.startMs,
    );
    const series: RunSeries = new RunSeries(
      i,
      timeline,
      typeof opened === 'string' ? undefined : opened,
      typeof opened === 'string' ? [opened] : [],
    );
    return series;
  }

  /** The dispatch's live user count, once it runs. */
  followUsers(activeUsers: () => number): void {
    this.activeUsers = activeUsers;
  }

  /** A request left the queue after waiting `ms`. */
  recordQueueWait(ms: number): void {
    this.timeline.recordQueueWait(ms);
  }

  /** Starts ticking every second. */
  start(): void {
    const limits: Partial<Record<TierName, number>> = {};
    for (const t of this.i.tiers.order) limits[t] = this.i.tiers.limitBytes(t);
    this.stopTicks = (this.i.every ?? everyInterval)(() => {
      const now = this.i.clock.now();
      const second = this.timeline.sample(now);
      if (this.device === undefined || this.deviceBusy) {
        this.i.onTick?.({ second, device: undefined, tierLimitBytes: limits });
        return;
      }
      // A slow sysfs read must not stack up behind itself: the next tick skips the device meanwhile,
      // and its next point spans the gap.
      this.deviceBusy = true;
      const device = this.device;
      this.pendingDevice = device.sample(now).then((point) => {
        this.deviceBusy = false;
        this.i.onTick?.({ second, device: point, tierLimitBytes: limits });
      });
    }, SERIES_INTERVAL_MS);
  }

  /** Interval histograms the timeline allocated: constant however long the run (checked by tests). */
  get timelineHistograms(): number {
    return this.timeline.histogramsCreated;
  }

  /** Stops ticking (idempotent; also on a failed dispatch). */
  stop(): void {
    this.stopTicks();
    this.stopTicks = () => undefined;
  }

  /** Stops ticking and closes both series at `endMs`, the end of the measured window. */
  async finish(endMs: number): Promise<RunSeriesResult> {
    this.stop();
    await this.pendingDevice;
    const timeline = this.timeline.finish(endMs);
    const deviceTelemetry = this.device === undefined ? null : await this.device.finish(endMs);
    return { timeline, deviceTelemetry, warnings: this.warnings };
  }
}
