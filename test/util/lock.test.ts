// Semaphore and per-key mutex: who runs when, driven by gates the test opens (no timers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedMutex, Semaphore } from '../../src/util/lock.js';
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
