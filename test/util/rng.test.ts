// The seeded generator: reproducible per (seed, stream), independent forks, inclusive int ranges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';

test('same seed and stream give the same sequence; forks are independent', () => {
  const a = new Rng(7);
  const b = new Rng(7);
  const xs = Array.from({ length: 50 }, () => a.nextU32());
  assert.deepEqual(
    Array.from({ length: 50 }, () => b.nextU32()),
    xs,
  );
  const c = new Rng(8);
  assert.notDeepEqual(
    Array.from({ length: 50 }, () => c.nextU32()),
    xs,
  );
  const f1 = new Rng(7).fork('user_1');
  const f2 = new Rng(7).fork('user_2');
  assert.notEqual(f1.nextU32(), f2.nextU32());
  assert.equal(new Rng(7).fork('user_1').random(), new Rng(7).fork('user_1').random());
});

test('int is inclusive and uniform enough; random in [0,1)', () => {
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

test('uniform, pick: within their bounds; pick and int refuse empty ranges', () => {
  const r = new Rng(5);
  for (let i = 0; i < 1000; i++) {
    const u = r.uniform(2, 3);
    assert.ok(u >= 2 && u < 3);
  }
  const picked = new Set(Array.from({ length: 200 }, () => r.pick(['x', 'y', 'z'])));
  assert.deepEqual([...picked].sort(), ['x', 'y', 'z']);
  assert.throws(() => r.pick([]), RangeError);
});

test('a fork is named by its path: the same path gives the same stream, whatever the parent drew', () => {
  const parent = new Rng(11);
  parent.nextU32();
  assert.equal(parent.fork('a').fork('b').stream, 'a/b');
  assert.equal(parent.fork('a').fork('b').nextU32(), new Rng(11, 'a/b').nextU32());
});
