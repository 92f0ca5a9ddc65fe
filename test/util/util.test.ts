import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { KeyedMutex, Semaphore } from '../../src/util/lock.js';
import { roundUp, toGiB, GiB } from '../../src/util/units.js';

test('rng: same seed and stream give the same sequence; forks are independent', () => {
  const a = new Rng(7);
  const b = new Rng(7);
  const xs = Array.from({ length: 50 }, () => a.nextU32());
  assert.deepEqual(Array.from({ length: 50 }, () => b.nextU32()), xs);
  const c = new Rng(8);
  assert.notDeepEqual(Array.from({ length: 50 }, () => c.nextU32()), xs);
  const f1 = new Rng(7).fork('user_1');
  const f2 = new Rng(7).fork('user_2');
  assert.notEqual(f1.nextU32(), f2.nextU32());
  assert.equal(new Rng(7).fork('user_1').random(), new Rng(7).fork('user_1').random());
});

test('rng: int is inclusive and uniform enough; random in [0,1)', () => {
  const r = new Rng(1);
  const counts = new Map<number, number>();
  for (let i = 0; i < 60000; i++) {
    const v = r.int(1, 6);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  assert.deepEqual([...counts.keys()].sort(), [1, 2, 3, 4, 5, 6]);
  for (const n of counts.values()) assert.ok(Math.abs(n - 10000) < 600);
  for (let i = 0; i < 1000; i++) {
    const x = r.random();
    assert.ok(x >= 0 && x < 1);
  }
  assert.throws(() => r.int(3, 2), RangeError);
});

test('semaphore bounds concurrency and hands permits over in order', async () => {
  const s = new Semaphore(2);
  let active = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      s.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 5));
        order.push(i);
        active--;
      }),
    ),
  );
  assert.equal(peak, 2);
  assert.equal(order.length, 6);
});

test('keyed mutex serialises one key and not others', async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  const job = (key: string, tag: string) =>
    m.with(key, async () => {
      log.push(`${tag}+`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${tag}-`);
    });
  await Promise.all([job('a', 'a1'), job('a', 'a2'), job('b', 'b1')]);
  assert.ok(log.indexOf('a1-') < log.indexOf('a2+'));
  assert.ok(log.indexOf('b1+') < log.indexOf('a1-'));
  assert.equal(m.isLocked('a'), false);
  assert.throws(() => m.unlock('a'));
});

test('units', () => {
  assert.equal(GiB, 2 ** 30);
  assert.equal(toGiB(3 * 2 ** 30), 3);
  assert.equal(roundUp(4097, 4096), 8192);
  assert.equal(roundUp(0, 4096), 0);
});
