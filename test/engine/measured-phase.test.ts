import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TieredCache } from '../../src/cache/tiered-cache.js';
import { requestServer, runMeasuredPhase } from '../../src/engine/measured-phase.js';
import { testPipelineOptions } from './requests.js';
import type { PipelineOptions } from '../../src/engine/pipeline.js';
import { StopController } from '../../src/engine/stop-control.js';
import type { StepSource } from '../../src/engine/dispatcher.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { RequestMetrics } from '../../src/metrics/request-metrics.js';
import { ManualClock, monotonicClock } from '../../src/util/clock.js';
import { Rng } from '../../src/util/rng.js';
import type { Request } from '../../src/workload/request.js';
import { makeCache } from '../cache/helpers.js';
import { parse } from '../cli/helpers.js';

function req(id: string): Request {
  return {
    id,
    kind: 'chat',
    userId: 'u',
    qos: 'batch',
    priority: 1,
    contextTokens: 100,
    generationTokens: 40,
    phase: 'both',
    cacheKey: id,
    turn: 1,
    previousTurnKeys: [],
    scheduledAtMs: 0,
  };
}

function pipeline(cache: TieredCache): PipelineOptions {
  return testPipelineOptions({ cache, multiTurn: false });
}

const metrics = (): RequestMetrics => new RequestMetrics({ batch: { targetP95Ms: 1000 } }, false);

test('serving: requests are recorded up to --max-requests; the one beyond stops the run instead', async () => {
  const { cache } = makeCache({ kind: 'null' });
  const requests = metrics();
  const stop = new StopController();
  const clock = new ManualClock(100);
  const serve = requestServer(2, pipeline(cache), new Rng(1), requests, stop, clock);
  await serve(req('a'), 90);
  await serve(req('b'), 100);
  assert.equal(stop.stopped, false);
  await serve(req('c'), 100);
  assert.equal(requests.requestsCompleted, 2);
  assert.equal(requests.tokensGenerated, 80);
  assert.equal(stop.reason('workload_complete'), 'max_requests');
  const s = requests.snapshot();
  assert.equal(s.queueWait.count, 2);
  assert.equal(s.queueWait.max, 10, 'queue wait is from the enqueue time');
});

test('serving: a request that throws stops the run as failed and keeps its error', async () => {
  const boom = new Error('disk on fire');
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- a stand-in cache that throws on any use
  const broken = new Proxy(
    {},
    {
      get: () => {
        throw boom;
      },
    },
  ) as TieredCache;
  const stop = new StopController();
  const requests = metrics();
  await requestServer(0, pipeline(broken), new Rng(1), requests, stop, monotonicClock)(req('a'), monotonicClock.now());
  assert.equal(stop.reason('workload_complete'), 'failed');
  assert.equal(stop.failure, boom);
  assert.equal(requests.requestsCompleted, 0);
});

function stepsOf(n: number, user: number): StepSource {
  let i = 0;
  return { next: () => (i < n ? { thinkTimeS: 0, request: req(`u${user}_${i++}`), conversationLost: false } : undefined) };
}

function phaseInputs(stop: StopController, served: string[]) {
  const cfg = parse(['--model', 'tiny-1b', '--num-users', '2', '--duration', '60']).config;
  return {
    cfg,
    clock: monotonicClock,
    device: { kind: 'none' as const, reason: 'a test without storage' },
    workers: 2,
    recorder: new Recorder(),
    requests: metrics(),
    stop,
    users: (i: number) => stepsOf(3, i),
    serve: async (r: Request) => void served.push(r.id),
  };
}

test('measured phase: runs every user dry, then reports the window (no device in trace mode, no autoscaling)', async () => {
  const stop = new StopController();
  const served: string[] = [];
  const m = await runMeasuredPhase(phaseInputs(stop, served));
  assert.deepEqual([...served].sort(), ['u0_0', 'u0_1', 'u0_2', 'u1_0', 'u1_1', 'u1_2']);
  assert.equal(stop.stopped, false);
  assert.equal(stop.reason('workload_complete'), 'workload_complete');
  assert.ok(m.elapsedSec >= 0);
  assert.equal(m.device, undefined);
  assert.equal(m.autoscaling, undefined);
  assert.deepEqual(Object.keys(m.eventLoopDelayMs), ['mean', 'p50', 'p99', 'max']);
});

test('measured phase: an interrupt given during preparation stops it before any request', async () => {
  const stop = new StopController();
  const served: string[] = [];
  await runMeasuredPhase({ ...phaseInputs(stop, served), interrupt: AbortSignal.abort() });
  assert.deepEqual(served, []);
  assert.equal(stop.reason('workload_complete'), 'interrupted');
});
