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
