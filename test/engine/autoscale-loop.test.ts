// The autoscale loop on manual time: what one sample feeds the autoscaler (windowed p95s, bandwidth
// and throughput of the last interval only), how decisions reach the dispatch, and the autoscaler
// driving a real dispatch whose request rate follows the user count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispatch } from '../../src/engine/dispatcher.js';
import type { DispatchControl, StepSource } from '../../src/engine/dispatcher.js';
import { Autoscaler } from '../../src/engine/autoscaler.js';
import type { AutoscalerSettings } from '../../src/engine/autoscaler.js';
import { startAutoscaleLoop } from '../../src/engine/autoscale-loop.js';
import type { TimelinePoint } from '../../src/engine/autoscale-loop.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { RequestMetrics } from '../../src/metrics/request-metrics.js';
import { timing } from '../../src/tiers/backend.js';
import type { Request } from '../../src/workload/request.js';
import { ManualTime, settle } from '../util/manual-time.js';

const QOS_SETTINGS: AutoscalerSettings = {
  mode: 'qos',
  targetSaturation: 0.8,
  minUsers: 1,
  maxUsers: 64,
  scaleUpFactor: 2,
  scaleDownFactor: 0.5,
  consecutiveSamplesRequired: 1,
  readLatencyP95ThresholdMs: 100,
  historyWindowSize: 2,
};

function endless(userId: string): StepSource {
  let n = 0;
  return {
    next: () => {
      const request: Request = {
        id: `${userId}_${n++}`,
        kind: 'chat',
        userId,
        qos: 'batch',
        priority: 1,
        contextTokens: 1,
        generationTokens: 10,
        phase: 'both',
        cacheKey: 'k',
        turn: 1,
        previousTurnKeys: [],
        scheduledAtMs: 0,
      };
      return { thinkTimeS: 0, request, conversationLost: false };
    },
  };
}

/** A control that only records what the loop asks of it. */
function fakeControl(users: number, queueDepth = 0): DispatchControl & { readonly scaledTo: number[] } {
  const scaledTo: number[] = [];
  return {
    scaledTo,
    scaleTo: (n) => void scaledTo.push(n),
    get activeUsers() {
      return users;
    },
    queueDepth,
  };
}

function sample(run: RequestMetrics, tokens: number): void {
  run.record({
    qos: 'batch',
    e2eMs: 1,
    queueMs: 0,
    storageMs: 0,
    generationMs: 0,
    generatedTokens: tokens,
    contextTokens: 100,
    multiTurnHits: 0,
    multiTurnMisses: 0,
  });
}

test('a sample covers only the last interval: windowed p95s, storage bytes/s and tokens/s', async () => {
  const time = new ManualTime();
  const recorder = new Recorder();
  const run = new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false);
  const autoscaler = new Autoscaler(QOS_SETTINGS, 3);
  const control = fakeControl(3, 7);
  const timeline: TimelinePoint[] = [];
  await time.advance(500); // the run started at 0, the loop at 500
  recorder.recordIo('storage', 'read', timing(0, 900)); // before the loop: in no window
  recorder.traffic.storage.readBytes = 5e6;
  sample(run, 1000);
  const stopLoop = startAutoscaleLoop({
    autoscaler,
    control,
    recorder,
    requests: run,
    clock: time,
    startMs: 0,
    intervalMs: 2000,
    onPeak: () => assert.fail('no peak in qos mode'),
    timeline,
    every: time.every,
  });

  recorder.recordIo('storage', 'read', timing(0, 40));
  recorder.recordIo('storage', 'write', timing(0, 8));
  recorder.traffic.storage.readBytes += 3e6;
  recorder.traffic.storage.writeBytes += 1e6;
  sample(run, 500);
  await time.advance(2000);
  recorder.traffic.storage.writeBytes += 2e6;
  await time.advance(2000);
  stopLoop();
  await time.advance(2000);

  assert.equal(autoscaler.events.length, 2, 'stopping the loop stops the samples');
  const [first, second] = autoscaler.events;
  assert.equal(first?.timestamp, 2.5);
  assert.ok(Math.abs((first?.read_latency_p95_ms ?? 0) - 40) < 0.1, `read p95 ${first?.read_latency_p95_ms}`);
  assert.ok(Math.abs((first?.write_latency_p95_ms ?? 0) - 8) < 0.01, `write p95 ${first?.write_latency_p95_ms}`);
  assert.equal(first?.throughput_tokens_per_sec, 250);
  assert.deepEqual(
    [second?.timestamp, second?.read_latency_p95_ms, second?.write_latency_p95_ms, second?.throughput_tokens_per_sec],
    [4.5, 0, 0, 0],
  );
  assert.deepEqual(timeline, [
    { timestamp: 2.5, throughput_tokens_per_sec: 250, users: 3, users_during: 3, users_after: 6 },
    { timestamp: 4.5, throughput_tokens_per_sec: 0, users: 6, users_during: 6, users_after: 12 },
  ]);
  // The decision log and the timeline agree on the users at every sample.
  assert.deepEqual(
    autoscaler.events.map((e) => [e.timestamp, e.users_during, e.users_after, e.users]),
    [
      [2.5, 3, 6, 6],
      [4.5, 6, 12, 12],
    ],
  );
  // Low saturation: each decision is applied to the dispatch.
  assert.deepEqual(
    control.scaledTo,
    autoscaler.events.map((e) => e.users),
  );
  assert.deepEqual(control.scaledTo, [6, 12]);
});

test('storage bandwidth of a sample is the bytes moved in its window', async () => {
  const time = new ManualTime();
  const recorder = new Recorder();
  const seen: number[] = [];
  const autoscaler = new Autoscaler(QOS_SETTINGS, 1);
  const observe = autoscaler.observe.bind(autoscaler);
  autoscaler.observe = (s) => {
    seen.push(s.storageBytesPerSec);
    return observe(s);
  };
  recorder.traffic.storage.readBytes = 1e9; // earlier traffic is not in any window
  startAutoscaleLoop({
    autoscaler,
    control: fakeControl(1, 0),
    recorder,
    requests: new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false),
    clock: time,
    startMs: 0,
    intervalMs: 500,
    onPeak: () => undefined,
    timeline: [],
    every: time.every,
  });
  recorder.traffic.storage.readBytes += 3e6;
  recorder.traffic.storage.writeBytes += 1e6;
  await time.advance(500);
  await time.advance(500);
  assert.deepEqual(seen, [8e6, 0]);
});

test('capacity mode: the peak stops the run instead of scaling', async () => {
  const time = new ManualTime();
  const run = new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false);
  const autoscaler = new Autoscaler({ ...QOS_SETTINGS, mode: 'capacity', maxUsers: 100 }, 10);
  const control = fakeControl(10);
  let peaks = 0;
  startAutoscaleLoop({
    autoscaler,
    control,
    recorder: new Recorder(),
    requests: run,
    clock: time,
    startMs: 0,
    intervalMs: 1000,
    onPeak: () => peaks++,
    timeline: [],
    every: time.every,
  });
  // Throughput 100, 200, then flat: a new peak twice, then two samples without one.
  for (const tokens of [100, 200, 200, 200]) {
    sample(run, tokens);
    await time.advance(1000);
  }
  assert.deepEqual(
    autoscaler.events.map((e) => e.action),
    ['scale_up', 'scale_up', 'hold', 'stop'],
  );
  assert.deepEqual(control.scaledTo, [15, 20, 20]);
  assert.equal(peaks, 1);
});

test('qos autoscaling of a real dispatch: users rise, fall once read latency passes the threshold, and throughput follows', async () => {
  const time = new ManualTime();
  const recorder = new Recorder();
  const run = new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false);
  const autoscaler = new Autoscaler(QOS_SETTINGS, 1);
  const timeline: TimelinePoint[] = [];
  const stop = new AbortController();
  let control: DispatchControl | undefined;
  let stopLoop = (): void => undefined;
  const p = dispatch({
    users: (i) => endless(`u${i}`),
    initialUsers: 1,
    workers: 64,
    clock: time,
    startMs: 0,
    serve: async (req) => {
      await time.sleep(4); // service time independent of load: the request rate is proportional to users
      // The storage reports a read latency that grows with the active users (10 ms per user).
      const latency = 10 * (control?.activeUsers ?? 1);
      recorder.recordIo('storage', 'read', timing(0, latency));
      // A saturated device: the bandwidth stays flat (1 GB/s) however many users share it.
      recorder.traffic.storage.readBytes = Math.round(1e6 * time.now());
      run.record({
        qos: req.qos,
        e2eMs: 4,
        queueMs: 0,
        storageMs: latency,
        generationMs: 0,
        generatedTokens: req.generationTokens,
        contextTokens: req.contextTokens,
        multiTurnHits: 0,
        multiTurnMisses: 0,
      });
    },
    sleep: time.sleep,
    stop: stop.signal,
    onStart: (c) => {
      control = c;
      stopLoop = startAutoscaleLoop({
        autoscaler,
        control: c,
        recorder,
        requests: run,
        clock: time,
        startMs: 0,
        intervalMs: 160,
        onPeak: () => stop.abort(),
        timeline,
        every: time.every,
      });
    },
  });
  await settle();
  for (let t = 0; t < 3200; t += 4) await time.advance(4);
  stopLoop();
  stop.abort();
  await time.advance(4);
  await p;

  assert.equal(autoscaler.events.length, 20);
  const users = autoscaler.events.map((e) => e.users);
  const peak = Math.max(...users);
  assert.ok(peak >= 8, `scaled up to ${peak}`);
  const down = autoscaler.events.findIndex((e) => e.action === 'scale_down');
  assert.ok(down > 0, 'scaled down once read latency passed the threshold');
  // One user completes 10 tokens every 4 ms: 39 requests in the first 160 ms window (the one ending
  // at 160 ms is counted in the next window, the sample fires first).
  assert.deepEqual(timeline[0], {
    timestamp: 0.16,
    throughput_tokens_per_sec: (39 * 10) / 0.16,
    users: 1,
    users_during: 1,
    users_after: 2,
  });
  // Throughput follows the user count.
  const atPeak = timeline.filter((t) => t.users === peak).map((t) => t.throughput_tokens_per_sec);
  const low = timeline.filter((t) => t.users > 0 && t.users <= peak / 2).map((t) => t.throughput_tokens_per_sec);
  assert.ok(atPeak.length > 0 && low.length > 0);
  assert.ok(Math.max(...atPeak) > 1.5 * Math.min(...low), `peak ${Math.max(...atPeak)} vs low ${Math.min(...low)}`);
});
