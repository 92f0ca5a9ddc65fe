// The measured phase: users issue requests through the dispatcher until the duration, the request
// budget, an interrupt, a failure or the autoscaler's peak stops them (or every source runs out);
// each request goes through the cache pipeline and is recorded. Never prints.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TieredCache } from '../cache/tiered-cache.js';
import type { Recorder } from '../metrics/recorder.js';
import type { RequestMetrics } from '../metrics/request-metrics.js';
import type { RunResult } from '../metrics/result.js';
import type { Clock } from '../util/clock.js';
import type { Rng } from '../util/rng.js';
import type { Request } from '../workload/request.js';
import { startAutoscaleLoop } from './autoscale-loop.js';
import type { TimelinePoint } from './autoscale-loop.js';
import { Autoscaler } from './autoscaler.js';
import type { AutoscalerSettings } from './autoscaler.js';
import type { WorkloadParts } from './build-workload.js';
import { dispatch } from './dispatcher.js';
import type { DispatchControl, DispatchOptions, UserPool } from './dispatcher.js';
import type { StorageDevice } from '../metrics/diskstats.js';
import { MeasurementWindow } from './measurement-window.js';
import type { WindowFigures } from './measurement-window.js';
import { processRequest } from './pipeline.js';
import { runBlockTokens } from './sources/registry.js';
import type { PipelineOptions } from './pipeline.js';
import type { RunTtft } from './ttft.js';
import type { RunConfig } from '../settings/run-config.js';
import type { StopController } from './stop-control.js';
import { openSeriesDevice, RunSeries } from './run-series.js';
import type { TierView } from './run-series.js';
import type { ProgressSnapshot } from '../metrics/progress.js';
import type { DeviceTelemetry } from '../metrics/device-series.js';
import type { RunTimeline } from '../metrics/timeline.js';

type Serve = DispatchOptions['serve'];

/** The request pipeline's options for this run: its cache, workload switches, and the stop. */
export function pipelineOptions(
  cfg: RunConfig,
  cache: TieredCache,
  parts: WorkloadParts,
  prepopulatedKeys: readonly string[],
  stop: StopController,
  recorder: Recorder,
): PipelineOptions {
  const blockTokens = runBlockTokens(cfg);
  return {
    cache,
    ...(blockTokens !== undefined
      ? { blocks: { blockTokens, stats: recorder.blocks, ...(cache.pooled ? { pool: recorder.pool } : {}) } }
      : {}),
    ...(parts.prefix !== undefined ? { prefix: parts.prefix } : {}),
    multiTurn: parts.conversations !== undefined,
    prefillOnly: cfg.prefillOnly,
    decodeOnly: cfg.decodeOnly,
    prepopulatedKeys,
    decodeBatchSize: parts.settings.decode.batchSize,
    secondsPerToken: cfg.settings.generationTiming[cfg.generationMode],
    sleep: (ms) => sleep(ms, undefined, { signal: stop.signal }).catch(() => undefined),
    stopped: () => stop.stopped,
  };
}

/**
 * Serves one dispatched request: runs it through the pipeline and records it, or records it as cut
 * short. The request that would exceed --max-requests is not recorded: it stops the run instead.
 */
export function requestServer(
  maxRequests: number,
  pipeline: PipelineOptions,
  rng: Rng,
  requests: RequestMetrics,
  stop: StopController,
  clock: Clock,
  ttft?: RunTtft,
): Serve {
  return async (req: Request, enqueuedMs: number): Promise<void> => {
    const queueMs = clock.now() - enqueuedMs;
    try {
      const out = await processRequest(req, pipeline, rng);
      if (!out.completed) {
        requests.recordAborted(out.multiTurnHits, out.multiTurnMisses);
        return;
      }
      if (maxRequests > 0 && requests.requestsCompleted >= maxRequests) {
        stop.stopWith('max_requests');
        return;
      }
      requests.record({
        qos: req.qos,
        e2eMs: clock.now() - enqueuedMs,
        queueMs,
        storageMs: out.storageMs,
        generationMs: out.generationMs,
        ...(out.prefillMs !== undefined ? { prefillMs: out.prefillMs } : {}),
        ...(out.decodeMs !== undefined ? { decodeMs: out.decodeMs } : {}),
        generatedTokens: req.generationTokens,
        contextTokens: req.contextTokens,
        multiTurnHits: out.multiTurnHits,
        multiTurnMisses: out.multiTurnMisses,
      });
      ttft?.record(req.qos, queueMs, out); // modelled figures, kept apart from the measured ones
    } catch (e) {
      stop.fail(e);
    }
  };
}

export interface MeasuredPhaseInputs {
  readonly cfg: RunConfig;
  readonly clock: Clock;
  /** The storage's block device, resolved when it was opened (`none` in trace mode: nothing to watch). */
  readonly device: StorageDevice;
  readonly workers: number;
  readonly recorder: Recorder;
  readonly requests: RequestMetrics;
  readonly stop: StopController;
  readonly users: UserPool;
  readonly serve: Serve;
  readonly interrupt?: AbortSignal;
  readonly onProgress?: (p: ProgressSnapshot) => void;
  /** A rank of a multi-rank run: told the instant the window opens, returns the ms to the ranks' common end. */
  readonly windowOpened?: () => number;
  /** The cache's tiers, read by the run timeline (occupancy, limits, operations in flight); none: no tiers in the timeline. */
  readonly tiers?: TierView;
}

export interface MeasuredPhase extends WindowFigures {
  readonly autoscaling?: RunResult['autoscaling'];
  // The per-second series (run timeline, device telemetry) and why the device series is off, if it is.
  readonly timeline: RunTimeline;
  readonly deviceTelemetry: DeviceTelemetry | null;
  readonly seriesWarnings: readonly string[];
}

const NO_TIERS: TierView = { order: [], entries: { residentBytes: () => 0 }, limitBytes: () => 0, operationsInFlight: () => 0 };

/** Runs the measured phase to its end, tail included, and returns what the window measured. */
export async function runMeasuredPhase(p: MeasuredPhaseInputs): Promise<MeasuredPhase> {
  const { cfg, stop } = p;
  const unfollow = stop.follow(p.interrupt); // an interrupt during preparation stops the run at once
  const device = await openSeriesDevice(p.device); // before the window opens: its baseline read is not measured
  const window = await MeasurementWindow.open(p.device, p.clock);
  const durationTimer = setTimeout(() => stop.stopWith('duration'), p.windowOpened?.() ?? cfg.durationSec * 1000);
  const series = RunSeries.create({
    recorder: p.recorder,
    requests: p.requests,
    tiers: p.tiers ?? NO_TIERS,
    clock: p.clock,
    startMs: window.startMs,
    device,
    onTick: (latest) =>
      p.onProgress?.({
        elapsedSec: window.elapsedSec(),
        durationSec: cfg.durationSec,
        requestsCompleted: p.requests.requestsCompleted,
        latest,
      }),
  });
  series.start();
  const autoscaling = cfg.enableAutoscaling ? new RunAutoscaling(cfg, p, window.startMs) : undefined;
  const onStart = (control: DispatchControl): void => {
    series.followUsers(() => control.activeUsers);
    autoscaling?.start(control);
  };
  const serve: Serve = (req, enqueuedMs) => {
    series.recordQueueWait(p.clock.now() - enqueuedMs); // the moment the request leaves the queue
    return p.serve(req, enqueuedMs);
  };
  try {
    await dispatch({
      users: p.users,
      initialUsers: cfg.numUsers,
      onStart,
      workers: p.workers,
      clock: p.clock,
      startMs: window.startMs,
      serve,
      sleep: (ms, signal) => sleep(ms, undefined, { signal }),
      stop: stop.signal,
    });
  } finally {
    autoscaling?.stop();
    clearTimeout(durationTimer);
    series.stop();
    window.stopLoopMonitor();
    unfollow();
  }
  const figures = await window.close();
  // The series end where the window does, so the timeline's last point ends at measured_window_sec.
  const ended = await series.finish(window.startMs + figures.elapsedSec * 1000);
  return {
    ...figures,
    ...(autoscaling !== undefined ? { autoscaling: autoscaling.report() } : {}),
    timeline: ended.timeline,
    deviceTelemetry: ended.deviceTelemetry,
    seriesWarnings: ended.warnings,
  };
}

/** The autoscaler of a run, sampling from the dispatch's start; capacity mode's peak stops the run. */
class RunAutoscaling {
  private readonly autoscaler: Autoscaler;
  private readonly timeline: TimelinePoint[] = [];
  private stopLoop = (): void => undefined;

  constructor(
    private readonly cfg: RunConfig,
    private readonly p: Pick<MeasuredPhaseInputs, 'recorder' | 'requests' | 'clock' | 'stop'>,
    private readonly startMs: number,
  ) {
    this.autoscaler = new Autoscaler(autoscalerSettings(cfg), cfg.numUsers);
  }

  start(control: DispatchControl): void {
    const { recorder, requests, clock, stop } = this.p;
    this.stopLoop = startAutoscaleLoop({
      autoscaler: this.autoscaler,
      control,
      recorder,
      requests,
      clock,
      startMs: this.startMs,
      intervalMs: this.cfg.autoscaleIntervalSec * 1000,
      onPeak: () => stop.stopWith('capacity_peak'),
      timeline: this.timeline,
    });
  }

  stop(): void {
    this.stopLoop();
  }

  report(): NonNullable<RunResult['autoscaling']> {
    return { events: [...this.autoscaler.events], summary: this.autoscaler.summary(), timeline: [...this.timeline] };
  }
}

function autoscalerSettings(cfg: RunConfig): AutoscalerSettings {
  const a = cfg.settings.autoscaler;
  const sd = cfg.settings.saturationDetection;
  return {
    mode: cfg.autoscalerMode,
    targetSaturation: cfg.targetSaturation,
    minUsers: a.minUsers,
    maxUsers: Math.min(a.maxUsers, cfg.settings.validationLimits.maxUsers),
    scaleUpFactor: a.scaleUpFactor,
    scaleDownFactor: a.scaleDownFactor,
    consecutiveSamplesRequired: a.consecutiveSamplesRequired,
    readLatencyP95ThresholdMs: sd.readLatencyP95ThresholdMs,
    historyWindowSize: sd.historyWindowSize,
  };
}
