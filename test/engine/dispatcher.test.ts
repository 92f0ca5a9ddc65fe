import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { dispatch, firstRequestsInScheduleOrder } from '../../src/engine/dispatcher.js';
import type { StepSource } from '../../src/engine/dispatcher.js';
import type { Request } from '../../src/workload/request.js';
import type { SessionStep } from '../../src/workload/session.js';
import { monotonicClock } from '../../src/util/clock.js';

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
  assert.deepEqual(ids(sources[0] as StepSource), ['10', '20']);
  assert.deepEqual(ids(sources[1] as StepSource), ['5', '25', '26']);
});

function pool(sources: StepSource[]): { users: (i: number) => StepSource; initialUsers: number } {
  return { users: (i) => sources[i] as StepSource, initialUsers: sources.length };
}

function listSource(steps: SessionStep[]): StepSource {
  let i = 0;
  return { next: () => steps[i++] };
}

test('closed loop: a user never has two requests in flight, and every request runs once', async () => {
  const inFlight = new Map<string, number>();
  const done: string[] = [];
  const stop = new AbortController();
  await dispatch({
    ...pool(['a', 'b', 'c'].map((u) => listSource([0, 1, 2, 3].map((n) => step(u, n, 0))))),
    workers: 3,
    clock: monotonicClock,
    startMs: monotonicClock.now(),
    serve: async (req) => {
      const n = (inFlight.get(req.userId) ?? 0) + 1;
      assert.equal(n, 1, 'one request of a user at a time');
      inFlight.set(req.userId, n);
      await sleep(2);
      inFlight.set(req.userId, n - 1);
      done.push(req.id);
    },
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: stop.signal,
  });
  assert.equal(done.length, 12);
  assert.equal(new Set(done).size, 12);
  // Within a user, turns complete in order.
  for (const u of ['a', 'b', 'c']) assert.deepEqual(done.filter((d) => d.startsWith(`${u}_`)), [0, 1, 2, 3].map((n) => `${u}_req_${n}`));
});

test('a request is not issued before its scheduled time', async () => {
  const start = monotonicClock.now();
  const issued: number[] = [];
  await dispatch({
    ...pool([listSource([step('a', 0, 0), step('a', 1, 60)])]),
    workers: 1,
    clock: monotonicClock,
    startMs: start,
    serve: async () => void issued.push(monotonicClock.now() - start),
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: new AbortController().signal,
  });
  assert.equal(issued.length, 2);
  assert.ok((issued[1] ?? 0) >= 55, `second request issued at ${issued[1]} ms`);
});

test('higher priority is served first when workers are scarce', async () => {
  const order: number[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const p = dispatch({
    // 20 ms apart, so the blocker is surely taken first even on a loaded machine.
    ...pool([listSource([step('blocker', 0, 0)]), listSource([step('low', 0, 20, 1)]), listSource([step('high', 0, 40, 3)])]),
    workers: 1,
    clock: monotonicClock,
    startMs: monotonicClock.now(),
    serve: async (req) => {
      if (req.userId === 'blocker') await gate;
      order.push(req.priority);
    },
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: new AbortController().signal,
  });
  await sleep(80);
  release();
  await p;
  assert.deepEqual(order, [1, 3, 1]);
});

test('stop drops queued requests and returns once in-flight work ends', async () => {
  const stop = new AbortController();
  let processed = 0;
  const p = dispatch({
    ...pool([listSource(Array.from({ length: 100 }, (_, n) => step('a', n, n * 1000)))]),
    workers: 2,
    clock: monotonicClock,
    startMs: monotonicClock.now(),
    serve: async () => void processed++,
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: stop.signal,
  });
  await sleep(20);
  stop.abort();
  await p;
  assert.equal(processed, 1);
});

test('scaleTo really changes the number of users issuing requests', async () => {
  const perUser = new Map<string, number>();
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
    clock: monotonicClock,
    startMs: monotonicClock.now(),
    serve: async (req) => {
      perUser.set(req.userId, (perUser.get(req.userId) ?? 0) + 1);
      await sleep(2);
    },
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    stop: stop.signal,
    onStart: (c) => (control = c),
  });
  await sleep(60);
  assert.deepEqual([...perUser.keys()], ['u0']);
  control?.scaleTo(4);
  await sleep(60);
  assert.equal(control?.activeUsers, 4);
  assert.deepEqual([...perUser.keys()].sort(), ['u0', 'u1', 'u2', 'u3']);
  control?.scaleTo(2);
  await sleep(20); // users 2 and 3 finish their current request
  const before = new Map(perUser);
  await sleep(60);
  assert.equal(perUser.get('u2'), before.get('u2'));
  assert.equal(perUser.get('u3'), before.get('u3'));
  assert.ok((perUser.get('u0') ?? 0) > (before.get('u0') ?? 0));
  stop.abort();
  await p;
});
