// Semaphore and per-key mutex: who runs when, driven by gates the test opens (no timers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedMutex, KeyedRwLock, Semaphore } from '../../src/util/lock.js';
import type { LockMode } from '../../src/util/lock.js';
import { settle } from './manual-time.js';

/** A promise the test resolves when it chooses. */
function gate(): { readonly opened: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

test('semaphore: at most `permits` jobs run; waiters start in arrival order as permits are released', async () => {
  const s = new Semaphore(2);
  const gates = Array.from({ length: 5 }, gate);
  const started: number[] = [];
  const finished: number[] = [];
  const all = Promise.all(
    gates.map((g, i) =>
      s.run(async () => {
        started.push(i);
        await g.opened;
        finished.push(i);
      }),
    ),
  );
  await settle();
  assert.deepEqual(started, [0, 1]);
  assert.equal(s.tryAcquire(), false, 'no permit free');
  gates[1]?.open();
  await settle();
  assert.deepEqual(started, [0, 1, 2], 'the released permit goes to the first waiter');
  gates[0]?.open();
  gates[2]?.open();
  await settle();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  gates[3]?.open();
  gates[4]?.open();
  await all;
  assert.deepEqual(finished, [1, 0, 2, 3, 4]);
  assert.equal(s.tryAcquire(), true, 'every permit came back');
  assert.equal(s.tryAcquire(), true);
  assert.equal(s.tryAcquire(), false);
});

test('semaphore: a failing job releases its permit; zero permits is refused', async () => {
  const s = new Semaphore(1);
  await assert.rejects(
    s.run(async () => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.equal(s.tryAcquire(), true);
  assert.throws(() => new Semaphore(0), RangeError);
});

test('keyed mutex serialises one key, not others, and forgets a key once free', async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  const gates = new Map([
    ['a1', gate()],
    ['a2', gate()],
    ['b1', gate()],
  ]);
  const job = (key: string, tag: string): Promise<void> =>
    m.with(key, async () => {
      log.push(`${tag}+`);
      await gates.get(tag)?.opened;
      log.push(`${tag}-`);
    });
  const all = Promise.all([job('a', 'a1'), job('a', 'a2'), job('b', 'b1')]);
  await settle();
  assert.deepEqual(log, ['a1+', 'b1+'], 'a2 waits for a1; b1 does not');
  assert.equal(m.tryLock('a'), false);
  gates.get('a1')?.open();
  await settle();
  assert.deepEqual(log, ['a1+', 'b1+', 'a1-', 'a2+']);
  gates.get('a2')?.open();
  gates.get('b1')?.open();
  await all;
  assert.equal(m.isLocked('a'), false);
  assert.equal(m.isLocked('b'), false);
  assert.throws(() => m.unlock('a'), /not locked/);
});

test('keyed mutex: waiters on one key are served in order', async () => {
  const m = new KeyedMutex();
  m.tryLock('k');
  const order: number[] = [];
  const waiters = [1, 2, 3].map((n) => m.lock('k').then(() => order.push(n)));
  m.unlock('k');
  await settle();
  assert.deepEqual(order, [1]);
  m.unlock('k');
  m.unlock('k');
  await Promise.all(waiters);
  assert.deepEqual(order, [1, 2, 3]);
  m.unlock('k');
  assert.equal(m.isLocked('k'), false);
});

test('keyed readers–writer lock: readers share, a writer is alone, and a waiting writer is not overtaken', async () => {
  const l = new KeyedRwLock();
  const log: string[] = [];
  const take = (mode: LockMode, tag: string): Promise<void> => l.lock('k', mode).then(() => void log.push(tag));
  await take('shared', 'r1');
  await take('shared', 'r2'); // readers at once
  const w1 = take('exclusive', 'w1');
  const r3 = take('shared', 'r3'); // arrives after a waiting writer: waits behind it
  const r4 = take('shared', 'r4');
  const w2 = take('exclusive', 'w2');
  await settle();
  assert.deepEqual(log, ['r1', 'r2']);
  assert.equal(l.tryLock('k', 'shared'), false, 'a writer is waiting');
  l.unlock('k', 'shared');
  await settle();
  assert.deepEqual(log, ['r1', 'r2'], 'w1 waits for the last reader');
  l.unlock('k', 'shared');
  await w1;
  assert.deepEqual(log, ['r1', 'r2', 'w1']);
  l.unlock('k', 'exclusive');
  await Promise.all([r3, r4]);
  assert.deepEqual(log, ['r1', 'r2', 'w1', 'r3', 'r4'], 'both readers up to the next writer, together');
  l.unlock('k', 'shared');
  l.unlock('k', 'shared');
  await w2;
  assert.equal(l.tryLock('other', 'exclusive'), true, 'keys are independent');
  l.unlock('other', 'exclusive');
  l.unlock('k', 'exclusive');
  assert.equal(l.isLocked('k'), false, 'a free key is forgotten');
  assert.throws(() => l.unlock('k', 'shared'), /not locked/);
  assert.equal(l.tryLock('k', 'shared'), true);
  assert.throws(() => l.unlock('k', 'exclusive'), /not locked that way/);
});
