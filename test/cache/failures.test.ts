// Failed tier operations in the cache: each is counted once, per tier, operation and errno class,
// moves no bytes in any figure, gives its room back (or keeps it when the bytes stay), and is told to
// the run (onFailure). Entries that fit nowhere are refused, not written over a limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TierFailure } from '../../src/cache/tiered-cache.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import type { IOTiming } from '../../src/tiers/backend.js';
import { GiB, MiB } from '../../src/util/units.js';
import { TINY_BPT, makeCache } from './helpers.js';

const errno = (code: string): Error => Object.assign(new Error(`${code}: simulated`), { code });
const ENTRY = 10 * TINY_BPT; // 245,760 bytes: 10 tokens

test('a placement write failing with ENOSPC counts as a failure only, and is told to the run', async () => {
  const seen: TierFailure[] = [];
  const { cache, rec } = makeCache({ storageBytes: GiB, extra: { onFailure: (f) => seen.push(f) } });
  const storage = cache.backend('storage');
  const write = storage.write.bind(storage);
  storage.write = async () => Promise.reject(errno('ENOSPC'));
  assert.deepEqual(await cache.allocate('x', 10), { ok: false, wrote: false, tier: null, latencyMs: 0 });
  const s = rec.snapshot();
  assert.deepEqual([s.counters.writeOperations, s.counters.totalWriteBytes, s.counters.prefillWrites], [0, 0, 0]);
  assert.deepEqual([s.traffic.storage.writeOps, s.traffic.storage.writeBytes, s.traffic.storage.failedOps], [0, 0, 1]);
  assert.deepEqual(s.failures, [{ tier: 'storage', operation: 'placement_write', error: 'ENOSPC', count: 1 }]);
  assert.deepEqual(
    seen.map((f) => [f.tier, f.operation, f.error]),
    [['storage', 'placement_write', 'ENOSPC']],
  );
  assert.equal(cache.usedBytes('storage'), 0);
  assert.equal(cache.allocatedBytes('storage'), 0);
  storage.write = write;
  assert.equal((await cache.allocate('x', 10)).ok, true);
  assert.deepEqual([rec.counters.writeOperations, rec.counters.totalWriteBytes, rec.counters.prefillWrites], [1, ENTRY, 1]);
});

test('a hit whose read fails served nothing: a failure and a miss, not a hit', async () => {
  const { cache, rec } = makeCache({ storageBytes: GiB });
  await cache.allocate('k', 10);
  cache.backend('storage').read = async () => Promise.reject(errno('EIO'));
  assert.deepEqual(await cache.access('k', 'decode'), { tier: null, latencyMs: 0 });
  const c = rec.snapshot().counters;
  assert.deepEqual([c.cacheHits, c.cacheMisses, c.readOperations, c.totalReadBytes, c.decodeReads], [0, 1, 0, 0, 0]);
  assert.deepEqual(rec.snapshot().failures, [{ tier: 'storage', operation: 'hit_read', error: 'EIO', count: 1 }]);
});

test('a demotion names the side that failed: the write below, or the read above', async () => {
  // The CPU tier holds 3 entries (80 % of 1 MiB); the fourth demotes the oldest to storage.
  for (const side of ['write', 'read'] as const) {
    const { cache, rec } = makeCache({ cpuBytes: MiB, storageBytes: GiB });
    for (let i = 0; i < 3; i++) await cache.allocate(`k${i}`, 10);
    const backend = cache.backend(side === 'write' ? 'storage' : 'cpu');
    if (side === 'write') backend.write = async () => Promise.reject(errno('EDQUOT'));
    else backend.read = async () => Promise.reject(errno('EIO'));
    const r = await cache.allocate('k3', 10);
    const failures = rec.snapshot().failures;
    if (side === 'write') {
      // The victim stays in the CPU tier; the new entry's own write to storage fails as well.
      assert.deepEqual(failures, [
        { tier: 'storage', operation: 'demote_write', error: 'EDQUOT', count: 1 },
        { tier: 'storage', operation: 'placement_write', error: 'EDQUOT', count: 1 },
      ]);
      assert.equal(r.ok, false);
    } else {
      assert.deepEqual(failures, [{ tier: 'cpu', operation: 'demote_read', error: 'EIO', count: 1 }]);
      assert.equal(r.tier, 'storage'); // the CPU tier could not make room: the entry went below
    }
    assert.equal(cache.locate('k0'), 'cpu');
    assert.deepEqual([rec.counters.evictions, rec.traffic.storage.demoteInBytes, rec.traffic.cpu.demoteOutBytes], [0, 0, 0]);
    assert.equal(cache.usedBytes('storage'), r.tier === 'storage' ? ENTRY : 0);
  }
});

test('an eviction whose delete fails keeps the room taken (the bytes are still there) and counts no eviction', async () => {
  const { cache, rec } = makeCache({ storageBytes: 2 * ENTRY });
  await cache.allocate('a', 10);
  await cache.allocate('b', 10);
  const storage = cache.backend('storage');
  const del = storage.delete.bind(storage);
  let failOnce = true;
  storage.delete = async (key: string) => {
    if (failOnce) {
      failOnce = false;
      return Promise.reject(errno('EIO'));
    }
    return del(key);
  };
  // 'a' cannot be deleted: its room stays taken; 'b' goes instead and 'c' takes its place.
  assert.equal((await cache.allocate('c', 10)).tier, 'storage');
  assert.deepEqual(rec.snapshot().failures, [{ tier: 'storage', operation: 'delete', error: 'EIO', count: 1 }]);
  assert.equal(rec.traffic.storage.evictDeleteOps, 1);
  assert.deepEqual([cache.locate('a'), cache.locate('b'), cache.locate('c')], [null, null, 'storage']);
  assert.equal(cache.allocatedBytes('storage'), 2 * ENTRY);
  assert.ok(cache.peakAllocatedBytes('storage') <= 2 * ENTRY);
});

test('an entry that fits in no tier is refused: not written, not a write, never over a limit', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 4 * ENTRY, storageBytes: 8 * ENTRY });
  assert.deepEqual(await cache.allocate('huge', 9 * 10), { ok: false, wrote: false, tier: null, latencyMs: 0 });
  assert.deepEqual(rec.snapshot().refusedAllocations, { count: 1, bytes: 9 * ENTRY });
  assert.deepEqual([rec.counters.writeOperations, rec.counters.totalWriteBytes, rec.traffic.storage.failedOps], [0, 0, 0]);
  assert.equal(cache.peakAllocatedBytes('storage'), 0);
  assert.equal((await cache.allocate('fits', 8 * 10)).tier, 'storage');
  assert.equal(cache.peakAllocatedBytes('storage'), 8 * ENTRY);
});

test('an allocation waiting for room held by a write in flight gives up at the stop, refused by nobody', async () => {
  const { cache, rec } = makeCache({ storageBytes: ENTRY });
  const storage = cache.backend('storage');
  const write = storage.write.bind(storage);
  let land: () => void = () => undefined;
  const landed = new Promise<void>((resolve) => (land = resolve));
  storage.write = async (key: string, source: ChunkSource): Promise<IOTiming> => {
    await landed;
    return write(key, source);
  };
  const first = cache.allocate('first', 10);
  const second = cache.allocate('second', 10); // no victim: 'first' is still being written
  await new Promise((r) => setImmediate(r));
  assert.equal(cache.allocatedBytes('storage'), ENTRY, 'only the first holds room');
  cache.stopInFlight();
  assert.deepEqual(await second, { ok: false, wrote: false, tier: null, latencyMs: 0 });
  land();
  assert.equal((await first).ok, true);
  assert.deepEqual(rec.snapshot().refusedAllocations, { count: 0, bytes: 0 });
  assert.ok(cache.peakAllocatedBytes('storage') <= ENTRY);
});

test('an allocation waiting for room held by a write in flight evicts it once it lands', async () => {
  const { cache } = makeCache({ storageBytes: ENTRY });
  const results = await Promise.all([cache.allocate('first', 10), cache.allocate('second', 10)]);
  assert.deepEqual(
    results.map((r) => r.tier),
    ['storage', 'storage'],
  );
  assert.deepEqual([cache.locate('first'), cache.locate('second')], [null, 'storage']);
  assert.equal(cache.peakAllocatedBytes('storage'), ENTRY);
});
