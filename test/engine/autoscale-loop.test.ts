// The autoscaler driving a real dispatch: scaling changes how many users issue requests, and the
// request rate follows the user count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { dispatch } from '../../src/engine/dispatcher.js';
import type { DispatchControl, StepSource } from '../../src/engine/dispatcher.js';
import { Autoscaler } from '../../src/engine/autoscaler.js';
import { startAutoscaleLoop } from '../../src/engine/autoscale-loop.js';
import type { TimelinePoint } from '../../src/engine/autoscale-loop.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { RequestMetrics } from '../../src/metrics/request-metrics.js';
import { monotonicClock } from '../../src/util/clock.js';
import type { Request } from '../../src/workload/request.js';

function endless(userId: string): StepSource {
  let n = 0;
  return {
    next: () => {
      const request: Request = { id: `${userId}_${n++}`, kind: 'chat', userId, qos: 'batch', priority: 1, contextTokens: 1, generationTokens: 10, phase: 'both', cacheKey: 'k', turn: 1, previousTurnKeys: [], scheduledAtMs: 0 };
      return { thinkTimeS: 0, request, conversationLost: false };
    },
  };
}

test('qos autoscaling: user count rises then falls as latency grows with users, and throughput follows', async () => {
  const recorder = new Recorder();
  const requests = new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false);
  const autoscaler = new Autoscaler(
    { mode: 'qos', targetSaturation: 0.8, minUsers: 1, maxUsers: 64, scaleUpFactor: 2, scaleDownFactor: 0.5, consecutiveSamplesRequired: 1, readLatencyP95ThresholdMs: 100, historyWindowSize: 2 },
    1,
  );
  const timeline: TimelinePoint[] = [];
  const stop = new AbortController();
  let control: DispatchControl | undefined;
  let stopLoop = (): void => undefined;
  const startMs = monotonicClock.now();
  const p = dispatch({
    users: (i) => endless(`u${i}`),
    initialUsers: 1,
    workers: 64,
    clock: monotonicClock,
    startMs,
    serve: async (req) => {
      await sleep(4); // service time independent of load: the request rate is proportional to users
      // The storage reports a read latency that grows with the active users (10 ms per user).
      const latency = 10 * (control?.activeUsers ?? 1);
      recorder.recordIo('storage', 'read', { totalMs: latency, hostMs: 0, deviceMs: latency });
      // A saturated device: the bandwidth stays flat (1 GB/s) however many users share it.
      recorder.traffic.storage.readBytes = Math.round(1e6 * (monotonicClock.now() - startMs));
      requests.record({ qos: req.qos, e2eMs: 4, queueMs: 0, storageMs: latency, generationMs: 0, generatedTokens: req.generationTokens, multiTurnHits: 0, multiTurnMisses: 0 });
    },
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: stop.signal,
    onStart: (c) => {
      control = c;
      stopLoop = startAutoscaleLoop({ autoscaler, control: c, recorder, requests, clock: monotonicClock, startMs, intervalMs: 150, onPeak: () => stop.abort(), timeline });
    },
  });
  await sleep(3000);
  stopLoop();
  stop.abort();
  await p;
  const users = autoscaler.events.map((e) => e.users);
  const peak = Math.max(...users);
  assert.ok(peak >= 8, `scaled up to ${peak}`);
  const down = autoscaler.events.findIndex((e) => e.action === 'scale_down');
  assert.ok(down > 0, 'scaled down once read latency passed the threshold');
  // Throughput follows the user count: compare a window at the peak with one after the scale-down.
  const atPeak = timeline.filter((t) => t.users === peak).map((t) => t.throughput_tokens_per_sec);
  const low = timeline.filter((t) => t.users > 0 && t.users <= peak / 2).map((t) => t.throughput_tokens_per_sec);
  assert.ok(atPeak.length > 0 && low.length > 0);
  assert.ok(Math.max(...atPeak) > 1.5 * Math.min(...low), `peak ${Math.max(...atPeak)} vs low ${Math.min(...low)}`);
});
