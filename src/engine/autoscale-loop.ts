// Feeds the autoscaler one windowed sample per interval and applies its decision to the running
// dispatch: more or fewer users really issue requests. Also records the throughput timeline.
import type { Recorder } from '../metrics/recorder.js';
import { kvReadBytes, kvWriteBytes, TIER_NAMES } from '../metrics/recorder.js';
import type { WindowSelection } from '../metrics/latency-window.js';
import type { RequestMetrics } from '../metrics/request-metrics.js';
import { everyInterval } from '../util/clock.js';
import type { Clock } from '../util/clock.js';
import type { Autoscaler } from './autoscaler.js';
import type { DispatchControl } from './dispatcher.js';

/**
 * One autoscaler sample. `users` = `users_during`: the users that produced the sample, the same count
 * as the decision's `users_during` (the decision's own `users` is the count AFTER it, users_after).
 */
export interface TimelinePoint {
  readonly timestamp: number;
  readonly throughput_tokens_per_sec: number;
  readonly users: number;
  readonly users_during: number;
  readonly users_after: number;
}

export interface AutoscaleLoopOptions {
  readonly autoscaler: Autoscaler;
  readonly control: DispatchControl;
  readonly recorder: Recorder;
  readonly requests: RequestMetrics;
  readonly clock: Clock;
  readonly startMs: number;
  readonly intervalMs: number;
  /** Called when capacity mode has found its peak. */
  readonly onPeak: () => void;
  readonly timeline: TimelinePoint[];
  /** Calls `tick` every `ms`; returns its stop. Default setInterval (tests tick by hand). */
  readonly every?: (tick: () => void, ms: number) => () => void;
}

/** The autoscaler's window: placement writes and hit reads of every tier, as `<tier>_<op>` (demotions excluded). */
const AUTOSCALER_WINDOW: WindowSelection = Object.fromEntries(
  TIER_NAMES.flatMap((t) => (['read', 'write'] as const).map((op) => [`${t}_${op}`, [[t, op]] as const])),
);

/** Starts sampling; returns the function that stops it. */
export function startAutoscaleLoop(o: AutoscaleLoopOptions): () => void {
  const storageBytes = (): number => {
    const t = o.recorder.traffic.storage;
    return kvReadBytes(t) + kvWriteBytes(t);
  };
  let lastMs = o.clock.now();
  let lastBytes = storageBytes();
  let lastTokens = o.requests.tokensGenerated;
  const window = o.recorder.openWindow(AUTOSCALER_WINDOW); // the first window starts now, and is this loop's own
  const stopTicks = (o.every ?? everyInterval)(() => {
    const now = o.clock.now();
    const sec = Math.max(1e-9, (now - lastMs) / 1000);
    const w = window.take();
    const p95 = (name: string): number => w.get(name)?.percentileMs(95) ?? 0;
    const tokensPerSec = (o.requests.tokensGenerated - lastTokens) / sec;
    const event = o.autoscaler.observe({
      atSec: (now - o.startMs) / 1000,
      readP95Ms: p95('storage_read'),
      writeP95Ms: p95('storage_write'),
      storageBytesPerSec: (storageBytes() - lastBytes) / sec,
      tokensPerSec,
      queueDepth: o.control.queueDepth,
    });
    // Both counts from the decision, so the timeline and the decision log agree at every sample.
    o.timeline.push({
      timestamp: event.timestamp,
      throughput_tokens_per_sec: tokensPerSec,
      users: event.users_during,
      users_during: event.users_during,
      users_after: event.users_after,
    });
    lastMs = now;
    lastBytes = storageBytes();
    lastTokens = o.requests.tokensGenerated;
    if (event.action === 'stop') o.onPeak();
    else o.control.scaleTo(event.users);
  }, o.intervalMs);
  return () => {
    stopTicks();
    o.recorder.closeWindow(window);
  };
}
