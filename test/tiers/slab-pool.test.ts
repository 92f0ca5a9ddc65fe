// The slab pool's arithmetic and its slot index: exact shapes, places and slot reuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { poolFileBytes, slabGeometry, SlotIndex, slotPlace, slotSizeOf } from '../../src/tiers/slab-pool.js';
import { GiB, MiB } from '../../src/util/units.js';

test('slots round up to 4 KiB', () => {
  assert.equal(slotSizeOf(1), 4096);
  assert.equal(slotSizeOf(6 * MiB), 6 * MiB);
  assert.equal(slotSizeOf(6 * MiB + 1), 6 * MiB + 4096);
});

test('a capacity becomes whole slots in a few files, or in files of the size asked', () => {
  assert.deepEqual(slabGeometry(GiB, 6 * MiB, 0), { slotBytes: 6 * MiB, slots: 170, slotsPerFile: 43, files: 4, poolBytes: 170 * 6 * MiB });
  const g = slabGeometry(GiB, 6 * MiB, 100 * MiB);
  assert.deepEqual(g, { slotBytes: 6 * MiB, slots: 170, slotsPerFile: 16, files: 11, poolBytes: 170 * 6 * MiB });
  if (typeof g === 'string') return;
  assert.equal(poolFileBytes(g, 0), 96 * MiB);
  assert.equal(poolFileBytes(g, 10), 10 * 6 * MiB); // the last file holds the 10 slots left
  assert.deepEqual(slotPlace(g, 0), { file: 0, offset: 0 });
  assert.deepEqual(slotPlace(g, 17), { file: 1, offset: 6 * MiB });
  assert.deepEqual(slotPlace(g, 169), { file: 10, offset: 9 * 6 * MiB });
});

test('a capacity below one slot, or unknown, is a problem, not a pool', () => {
  const none = slabGeometry(MiB, 6 * MiB, 0);
  assert.ok(typeof none === 'string' && none.includes('holds no slot of 6291456 bytes'));
  assert.equal(typeof slabGeometry(Infinity, 6 * MiB, 0), 'string');
});

test('the index: a key takes a free slot, keeps it when rewritten, gives it back on release; the last freed is reused first', () => {
  const ix = new SlotIndex(3);
  assert.equal(ix.take('a'), 0);
  assert.equal(ix.take('b'), 1);
  ix.commit('a', 10);
  ix.commit('b', 20);
  assert.deepEqual(ix.entry('a'), { slot: 0, size: 10 });
  assert.equal(ix.take('a'), 0); // a rewrite keeps its slot …
  assert.equal(ix.entry('a'), undefined); // … and is not readable until committed again
  ix.commit('a', 11);
  assert.equal(ix.take('c'), 2);
  assert.equal(ix.take('d'), undefined); // all three held
  assert.equal(ix.release('b'), true);
  assert.equal(ix.release('b'), false);
  assert.equal(ix.take('d'), 1);
  assert.deepEqual([...ix.keys()].sort(), ['a']); // c and d hold slots but were not committed
  assert.equal(ix.peakUsed, 3);
  assert.equal(ix.freed, 1);
  ix.clear();
  assert.equal(ix.used, 0);
  assert.equal(ix.freed, 4);
});
