// The dispatcher on manual time: users, the QoS queue and workers, asserted by order and counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispatch, firstRequestsInScheduleOrder } from '../../src/engine/dispatcher.js';
import type { StepSource } from '../../src/engine/dispatcher.js';
import type { Request } from '../../src/workload/request.js';
import type { SessionStep } from '../../src/workload/session.js';
import { ManualTime, settle } from '../util/manual-time.js';

function step(userId: string, n: number, scheduledAtMs: number, priority = 1): SessionStep {
  const request: Request = {
    id: `${userId}_req_${n}`,
    kind: 'chat',
    userId,
    qos: 'batch',
    priority,
    contextTokens: 1,
    generationTokens: 1,
    phase: 'both',
    cacheKey: `${userId}_${n}`,
    turn: n,
    previousTurnKeys: [],
    scheduledAtMs,
  };
  return { thinkTimeS: 0, request, conversationLost: false };
}

function fakeSession(userId: string, times: number[]): { nextRequest(): SessionStep } {
  let i = 0;
  return { nextRequest: () => step(userId, i, times[i++] ?? 1e12) };
}

test('the first N requests are chosen by scheduled time across users', () => {
  const sources = firstRequestsInScheduleOrder([fakeSession('a', [10, 20, 30, 40]), fakeSession('b', [5, 25, 26, 27])], 5);
  const ids = (s: StepSource): string[] => {
    const out: string[] = [];
    for (let x = s.next(); x !== undefined && !(x instanceof Promise); x = s.next()) out.push(`${x.request.scheduledAtMs}`);
    return out;
  };
  assert.deepEqual(ids(sources[0]), ['10', '20']);
  assert.deepEqual(ids(sources[1]), ['5', '25', '26']);
});

function pool(sources: StepSource[]): { users: (i: number) => StepSource; initialUsers: number } {
  return { users: (i) => sources[i], initialUsers: sources.length };
}

function listSource(steps: SessionStep[]): StepSource {
  let i = 0;
  return { next: () => steps[i++] };
}

/** The dispatch options that tie it to manual time; the run starts at time 0. */
function onManualTime(time: ManualTime): { clock: ManualTime; startMs: number; sleep: (ms: number, signal: AbortSignal) => Promise<void> } {
  return { clock: time, startMs: 0, sleep: time.sleep };
}

/** Advances manual time in `stepMs` steps until `done` settles (fails rather than spin forever). */
async function runToEnd(time: ManualTime, done: Promise<void>, stepMs: number, maxSteps = 1000): Promise<void> {
  let finished = false;
  void done.finally(() => (finished = true));
  await settle();
  for (let i = 0; i < maxSteps && !finished; i++) await time.advance(stepMs);
  assert.ok(finished, `dispatch still running after ${maxSteps} steps of ${stepMs} ms`);
  await done;
}

test('closed loop: a user never has two requests in flight, and every request runs once', async () => {
  const time = new ManualTime();
  const inFlight = new Map<string, number>();
  const done: string[] = [];
  const p = dispatch({
    ...pool(['a', 'b', 'c'].map((u) => listSource([0, 1, 2, 3].map((n) => step(u, n, 0))))),
    workers: 3,
    ...onManualTime(time),
    serve: async (req) => {
      const n = (inFlight.get(req.userId) ?? 0) + 1;
      assert.equal(n, 1, 'one request of a user at a time');
      inFlight.set(req.userId, n);
      await time.sleep(2);
      inFlight.set(req.userId, n - 1);
      done.push(`${time.now()}:${req.id}`);
    },
    stop: new AbortController().signal,
  });
  await runToEnd(time, p, 1);
  // Three workers for three users: each user's turns complete in order, one every 2 ms.
  for (const u of ['a', 'b', 'c'])
    assert.deepEqual(
      done.filter((d) => d.includes(`:${u}_`)),
      [0, 1, 2, 3].map((n) => `${2 * (n + 1)}:${u}_req_${n}`),
    );
  assert.equal(done.length, 12);
});

test('a request is issued at its scheduled time, not before', async () => {
  const time = new ManualTime();
  const issued: number[] = [];
  const p = dispatch({
    ...pool([listSource([step('a', 0, 0), step('a', 1, 60), step('a', 2, 61)])]),
    workers: 1,
    ...onManualTime(time),
    serve: async () => void issued.push(time.now()),
    stop: new AbortController().signal,
  });
  await runToEnd(time, p, 1);
  assert.deepEqual(issued, [0, 60, 61]);
});

test('a late user issues at once: its next request waits for the previous one, not for its schedule', async () => {
  const time = new ManualTime();
  const issued: number[] = [];
  const p = dispatch({
    ...pool([listSource([step('a', 0, 0), step('a', 1, 10), step('a', 2, 50)])]),
    workers: 1,
    ...onManualTime(time),
    serve: async () => {
      issued.push(time.now());
      await time.sleep(30); // ends after the next request's scheduled time (10)
    },
    stop: new AbortController().signal,
  });
  await runToEnd(time, p, 1);
  assert.deepEqual(issued, [0, 30, 60]);
});

test('higher priority is served first when workers are scarce', async () => {
  const time = new ManualTime();
  const order: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const p = dispatch({
    ...pool([listSource([step('blocker', 0, 0)]), listSource([step('low', 0, 20, 1)]), listSource([step('high', 0, 40, 3)])]),
    workers: 1,
    ...onManualTime(time),
    serve: async (req) => {
      if (req.userId === 'blocker') await gate;
      order.push(req.userId);
    },
    stop: new AbortController().signal,
  });
  await settle();
  await time.advance(40); // low (t=20), then high (t=40) queue behind the blocker
  assert.deepEqual(order, []);
  release();
  await p;
  assert.deepEqual(order, ['blocker', 'high', 'low']);
});

test('the wait handed to serve is from enqueue to the start of processing', async () => {
  const time = new ManualTime();
  const waits: Array<[string, number]> = [];
  const p = dispatch({
    ...pool([listSource([step('a', 0, 0)]), listSource([step('b', 0, 5)])]),
    workers: 1,
    ...onManualTime(time),
    serve: async (req, enqueuedMs) => {
      waits.push([req.userId, time.now() - enqueuedMs]);
      await time.sleep(25);
    },
    stop: new AbortController().signal,
  });
  await runToEnd(time, p, 1);
  assert.deepEqual(waits, [
    ['a', 0],
    ['b', 20],
  ]);
});

test('stop drops queued requests and returns once in-flight work ends', async () => {
  const time = new ManualTime();
  const stop = new AbortController();
  const started: number[] = [];
  const p = dispatch({
    ...pool([listSource(Array.from({ length: 100 }, (_, n) => step('a', n, n * 1000)))]),
    workers: 2,
    ...onManualTime(time),
    serve: async () => void started.push(time.now()),
    stop: stop.signal,
  });
  await settle();
  await time.advance(999);
  assert.deepEqual(started, [0]);
  await time.advance(1);
  assert.deepEqual(started, [0, 1000]);
  stop.abort();
  await p;
  assert.deepEqual(started, [0, 1000]);
  assert.equal(time.pending, 0, 'the sleeping user was woken by the stop');
});

test('stop while a request is being processed: it completes, nothing after it starts', async () => {
  const time = new ManualTime();
  const stop = new AbortController();
  const events: string[] = [];
  const p = dispatch({
    ...pool([listSource([step('a', 0, 0), step('a', 1, 0)]), listSource([step('b', 0, 0)])]),
    workers: 1,
    ...onManualTime(time),
    serve: async (req) => {
      events.push(`start ${req.id}`);
      await time.sleep(10);
      events.push(`end ${req.id}`);
    },
    stop: stop.signal,
  });
  await settle();
  stop.abort(); // b's request is queued behind a's: dropped
  await time.advance(10);
  await p;
  assert.deepEqual(events, ['start a_req_0', 'end a_req_0']);
});

test('scaleTo really changes the number of users issuing requests', async () => {
  const time = new ManualTime();
  const started = new Map<string, number>();
  const stop = new AbortController();
  const endless = (u: string): StepSource => {
    let n = 0;
    return { next: () => step(u, n++, 0) };
  };
  let control: { scaleTo(n: number): void; readonly activeUsers: number } | undefined;
  const p = dispatch({
    users: (i) => endless(`u${i}`),
    initialUsers: 1,
    workers: 8,
    ...onManualTime(time),
    serve: async (req) => {
      started.set(req.userId, (started.get(req.userId) ?? 0) + 1);
      await time.sleep(2);
    },
    stop: stop.signal,
    onStart: (c) => (control = c),
  });
  await settle();
  // Every active user starts one request per 2 ms (the one at time 0 included).
  await time.advance(20);
  assert.deepEqual([...started], [['u0', 11]]);
  assert.equal(control?.activeUsers, 1);
  control?.scaleTo(4);
  await settle();
  assert.equal(control?.activeUsers, 4);
  await time.advance(20);
  assert.deepEqual([...started].sort(), [
    ['u0', 21],
    ['u1', 11],
    ['u2', 11],
    ['u3', 11],
  ]);
  control?.scaleTo(2); // users 2 and 3 finish their current request and issue no more
  await time.advance(20);
  assert.equal(control?.activeUsers, 2);
  assert.deepEqual([...started].sort(), [
    ['u0', 31],
    ['u1', 21],
    ['u2', 11],
    ['u3', 11],
  ]);
  stop.abort();
  await time.advance(2);
  await p;
});
