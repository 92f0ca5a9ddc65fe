// The cache's per-tier bookkeeping on its own: room reserved and given back in entry bytes and in
// bytes on the medium, the peak, operations in flight, and the allocations waiting for room.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TierUsage } from '../../src/cache/tier-usage.js';
import { MemoryBackend } from '../../src/tiers/memory.js';
import { NullBackend } from '../../src/tiers/null.js';

const usage = (): TierUsage =>
  new TierUsage([
    { backend: new MemoryBackend('cpu', 4096), limitBytes: 64 * 1024 },
    { backend: new NullBackend('storage'), limitBytes: Infinity },
  ]);

test('reserve and release count entry bytes and, against the limit, whole pages on the medium; the peak stays', () => {
  const u = usage();
  assert.equal(u.limitBytes('cpu'), 65536);
  assert.equal(u.limitBytes('storage'), Infinity);
  assert.equal(u.limitBytes('gpu'), 0);
  u.reserve('cpu', 5000); // two 4 KiB pages
  u.reserve('cpu', 100); // one page
  assert.equal(u.usedBytes('cpu'), 5100);
  assert.equal(u.allocatedBytes('cpu'), 3 * 4096);
  u.release('cpu', 5000);
  assert.equal(u.usedBytes('cpu'), 100);
  assert.equal(u.allocatedBytes('cpu'), 4096);
  assert.equal(u.peakAllocatedBytes('cpu'), 3 * 4096);
  u.reserve('storage', 5000); // no pages: what it takes is its size
  assert.equal(u.allocatedBytes('storage'), 5000);
  assert.equal(u.footprint('cpu', 1), 4096);
  assert.deepEqual(
    u.backends.map((b) => b.tier),
    ['cpu', 'storage'],
  );
  assert.throws(() => u.backend('gpu'), /no gpu tier/);
});

test('operations in flight: writes and demotions per tier plus hit reads', () => {
  const u = usage();
  u.landing('cpu');
  u.landing('cpu');
  u.landing('storage');
  u.readStarted();
  assert.equal(u.inFlightTo('cpu'), 2);
  assert.equal(u.operationsInFlight(), 4);
  u.landed('cpu');
  u.readEnded();
  assert.equal(u.inFlightTo('cpu'), 1);
  assert.equal(u.operationsInFlight(), 2);
});

test('a release wakes every allocation waiting for room in that tier, once; other tiers are not woken', async () => {
  const u = usage();
  const woken: string[] = [];
  void u.spaceChange('cpu').then(() => woken.push('cpu 1'));
  void u.spaceChange('cpu').then(() => woken.push('cpu 2'));
  void u.spaceChange('storage').then(() => woken.push('storage'));
  u.reserve('cpu', 10);
  u.release('cpu', 10);
  u.release('cpu', 0); // nobody waits any more: nothing to wake twice
  await Promise.resolve();
  assert.deepEqual(woken, ['cpu 1', 'cpu 2']);
  u.notifySpace('storage');
  await Promise.resolve();
  assert.deepEqual(woken, ['cpu 1', 'cpu 2', 'storage']);
});
