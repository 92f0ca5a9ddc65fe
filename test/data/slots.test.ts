// SlotPool: slots chosen by a caller's preference, and a released slot handed to the waiter that wants it most.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlotPool } from '../../src/data/slots.js';

const SLOT = 4096;

test('tryAcquire takes the free slot the preference scores highest, the latest freed among equals', () => {
  const pool = new SlotPool(4, SLOT);
  const slots = [0, 1, 2, 3].map(() => pool.tryAcquire());
  const [a, b, c, d] = slots;
  assert.ok(a !== undefined && b !== undefined && c !== undefined && d !== undefined);
  for (const s of [a, b, c, d]) pool.release(s);
  assert.equal(
    pool.tryAcquire((s) => (s === b ? 2 : 0)),
    b,
  );
  assert.equal(
    pool.tryAcquire(() => 0),
    d,
    'ties: the latest freed',
  );
  assert.equal(pool.tryAcquire(), c, 'no preference: the latest freed');
  assert.equal(pool.available, 1);
});

test('tryAcquire stops at the first slot scoring the top score: the latest freed such slot, the others not scored', () => {
  const pool = new SlotPool(5, SLOT);
  const slots = [0, 1, 2, 3, 4].map(() => pool.tryAcquire() ?? assert.fail('a free slot'));
  for (const s of slots) pool.release(s); // the latest freed is slots[4]
  const scored: number[] = [];
  const score = (s: Uint8Array): number => {
    const i = slots.indexOf(s);
    scored.push(i);
    return i === 1 || i === 3 ? 2 : i === 0 ? 1 : 0;
  };
  assert.equal(pool.tryAcquire(score, 2), slots[3], 'the latest freed of those scoring the top');
  assert.deepEqual(scored, [4, 3], 'the search ended at the first top score');
  scored.length = 0;
  assert.equal(pool.tryAcquire(score), slots[1], 'without a top: every slot scored, the best taken');
  assert.deepEqual(scored, [4, 2, 1, 0]);
});

test('a released slot goes to the waiter that scores it above 0, else to the first waiter', async () => {
  const pool = new SlotPool(2, SLOT);
  const x = pool.tryAcquire();
  const y = pool.tryAcquire();
  assert.ok(x !== undefined && y !== undefined);
  const got: string[] = [];
  const first = pool.acquire(() => 0).then((s) => got.push(`first:${s === x ? 'x' : 'y'}`));
  const wantsY = pool.acquire((s) => (s === y ? 2 : 0)).then((s) => got.push(`wantsY:${s === y ? 'y' : 'x'}`));
  pool.release(y); // wanted by the second waiter: it jumps the queue
  pool.release(x); // nobody scores it: the first waiter
  await Promise.all([first, wantsY]);
  assert.deepEqual(got.sort(), ['first:x', 'wantsY:y']);
  assert.equal(pool.available, 0);
});

test('a slot released twice, a sub-view or another pool’s slot is refused, loudly: two users would share it', async () => {
  const pool = new SlotPool(2, SLOT);
  const other = new SlotPool(1, SLOT);
  const a = pool.tryAcquire() ?? assert.fail('a free slot');
  pool.release(a);
  assert.throws(() => pool.release(a), /not lent out/);
  const b = pool.tryAcquire() ?? assert.fail('a free slot');
  assert.throws(() => pool.release(b.subarray(0, 10)), /not lent out/);
  assert.throws(() => pool.release(other.tryAcquire() ?? assert.fail('a free slot')), /not lent out/);
  // Handed straight to a waiter, a slot is still lent: its next release is its only one.
  const c = pool.tryAcquire() ?? assert.fail('a free slot');
  const waiting = pool.acquire();
  pool.release(b);
  assert.equal(await waiting, b);
  assert.throws(() => pool.release(b.subarray(0)), /not lent out/);
  pool.release(b);
  pool.release(c);
  assert.equal(pool.available, 2);
});
