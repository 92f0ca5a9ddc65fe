import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeCache, readBack, TINY_BPT } from './helpers.js';
import { payloadBytes } from '../../src/data/payload.js';
import { GiB, MiB } from '../../src/util/units.js';
import { SEED } from './helpers.js';

test('placement: CPU limit is exact, a 100-token entry lands on the CPU tier and reads back', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 0.1 * GiB });
  assert.equal(cache.limitBytes('cpu'), 0.1 * 1024 ** 3);
  assert.equal(cache.usedBytes('cpu'), 0);
  assert.deepEqual(cache.order, ['cpu', 'storage']);
  const r = await cache.allocate('k1', 100);
  assert.equal(r.ok, true);
  assert.equal(r.tier, 'cpu');
  assert.ok(r.latencyMs >= 0);
  assert.equal(rec.traffic.cpu.writeBytes, 100 * TINY_BPT);
  assert.equal(rec.traffic.gpu.writeBytes, 0);
  const a = await cache.access('k1');
  assert.equal(a.tier, 'cpu');
  assert.equal(rec.counters.cacheHits, 1);
  assert.equal(rec.traffic.cpu.readBytes, 100 * TINY_BPT);
  assert.equal(rec.traffic.gpu.readBytes, 0);
  const miss = await cache.access('nope');
  assert.deepEqual(miss, { tier: null, latencyMs: 0 });
  assert.equal(rec.counters.cacheMisses, 1);
});

test('a GPU tier comes first in the order', () => {
  const { cache } = makeCache({ gpuBytes: MiB, cpuBytes: MiB });
  assert.deepEqual(cache.order, ['gpu', 'cpu', 'storage']);
});

test('allocating an existing key writes nothing and returns its tier with latency 0', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await cache.allocate('k', 10);
  const again = await cache.allocate('k', 10);
  assert.deepEqual(again, { ok: true, wrote: false, tier: 'cpu', latencyMs: 0 });
  assert.equal(rec.counters.writeOperations, 1);
});

test('an entry larger than the CPU tier skips it and goes to storage', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 0.001 * GiB });
  const entryBytes = 1000 * TINY_BPT; // 24.6 MB, above 95 % of the CPU tier's 1.07 MB
  for (let i = 0; i < 20; i++) assert.equal((await cache.allocate(`k${i}`, 1000)).tier, 'storage');
  assert.equal(rec.traffic.storage.writeOps, 20);
  assert.equal(rec.traffic.storage.writeBytes, 20 * entryBytes);
  assert.equal(rec.traffic.storage.demoteInOps, 0);
  assert.equal(rec.traffic.cpu.writeOps, 0);
  assert.equal(cache.usedBytes('storage'), 20 * entryBytes);
  assert.equal(cache.usedBytes('cpu'), 0);
});

test('storage tier full: oldest entries are deleted, the newest stay, allocation keeps succeeding', async () => {
  // Entries of 245,760 bytes: the CPU tier (1 MiB, filled to 80 %) holds 3, storage (0.01 GiB) 43.
  const { cache, rec } = makeCache({ cpuBytes: MiB, storageBytes: 0.01 * GiB });
  const entryBytes = 10 * TINY_BPT;
  for (let i = 0; i < 200; i++) assert.equal((await cache.allocate(`k${i}`, 10)).tier, 'cpu');
  // Every entry after the third pushes the CPU tier's oldest down; storage deletes all but 43 of those.
  assert.equal(rec.traffic.cpu.demoteOutOps, 197);
  assert.equal(rec.traffic.storage.demoteInBytes, 197 * entryBytes);
  assert.equal(rec.traffic.storage.evictDeleteOps, 154);
  assert.equal(rec.traffic.storage.evictDeleteBytes, 154 * entryBytes);
  assert.equal(rec.counters.evictions, 197 + 154);
  const where = Array.from({ length: 200 }, (_, i) => cache.locate(`k${i}`));
  const expected = Array.from({ length: 200 }, (_, i) => (i < 154 ? null : i < 197 ? 'storage' : 'cpu'));
  assert.deepEqual(where, expected);
  assert.equal((await cache.allocate('one-more', 10)).ok, true);
  assert.equal(cache.locate('k154'), null);
});

test('an unlimited storage tier never evicts', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 0 });
  for (let i = 0; i < 20; i++) await cache.allocate(`k${i}`, 500);
  assert.equal(cache.entries.count('storage'), 20);
  assert.equal(rec.counters.evictions, 0);
});

test('reading an evicted key is a miss with latency 0', async () => {
  const { cache } = makeCache({ cpuBytes: MiB, storageBytes: 0.005 * GiB });
  await cache.allocate('victim', 500);
  for (let i = 0; i < 50; i++) await cache.allocate(`fill${i}`, 500);
  const r = await cache.access('victim');
  if (r.tier === null) assert.equal(r.latencyMs, 0);
  else assert.ok(['cpu', 'storage'].includes(r.tier));
});

test('three-tier cascade: demotions, deletions and byte conservation', async () => {
  const { cache, rec } = makeCache({ gpuBytes: 2 * MiB, cpuBytes: 2 * MiB, storageBytes: 2 * MiB });
  for (let i = 0; i < 50; i++) {
    const r = await cache.allocate(`k${i}`, 10);
    assert.equal(r.ok, true);
    assert.equal(r.tier, 'gpu'); // every new entry is admitted to the fastest tier
  }
  const c = rec.counters;
  assert.ok(c.evictions > 0);
  assert.ok(c.offloadsCpu > 0);
  assert.ok(c.offloadsStorage > 0);
  const t = rec.traffic;
  assert.ok(t.cpu.demoteInBytes > 0 && t.storage.demoteInBytes > 0);
  assert.ok(t.gpu.demoteOutBytes > 0 && t.cpu.demoteOutBytes > 0);
  assert.equal(t.gpu.demoteOutBytes, t.cpu.demoteInBytes);
  assert.equal(t.cpu.demoteOutBytes, t.storage.demoteInBytes);
  const deletes = c.evictions - c.offloadsCpu - c.offloadsStorage;
  assert.ok(deletes > 0);
  assert.equal(deletes, t.storage.evictDeleteOps);
  assert.ok(cache.entries.size < 50);
  assert.ok(rec.latencyIfAny('storage_demote_write') !== undefined);
  assert.ok(rec.latencyIfAny('gpu_demote_read') !== undefined);
  assert.equal((await cache.allocate('one-more', 10)).ok, true);
});

test('data survives demotion byte for byte', async () => {
  const { cache } = makeCache({ gpuBytes: 0.5 * MiB, cpuBytes: 0.5 * MiB, storageBytes: 10 * MiB });
  await cache.allocate('precious', 10);
  for (let i = 0; i < 20; i++) await cache.allocate(`a${i}`, 10);
  assert.notEqual(cache.locate('precious'), 'gpu');
  for (let i = 0; i < 40; i++) await cache.allocate(`b${i}`, 10);
  const tier = cache.locate('precious');
  assert.ok(tier === 'storage' || tier === null);
  if (tier !== null) {
    const got = await readBack(cache, 'precious');
    assert.deepEqual(got, payloadBytes(SEED, 'precious', 10 * TINY_BPT));
  }
});

test('storage-only: every allocation succeeds and evicts as needed', async () => {
  const { cache, rec } = makeCache({ storageBytes: 2 * MiB });
  for (let i = 0; i < 30; i++) assert.equal((await cache.allocate(`k${i}`, 10)).tier, 'storage');
  assert.ok(rec.counters.evictions > 0);
  assert.equal(rec.counters.offloadsCpu, 0);
  assert.equal(rec.counters.offloadsStorage, 30); // a direct write to storage counts as an offload
  const firstLeft = Array.from({ length: 10 }, (_, i) => cache.locate(`k${i}`)).filter((t) => t !== null).length;
  assert.ok(firstLeft < 10);
  assert.ok([25, 26, 27, 28, 29].some((i) => cache.locate(`k${i}`) !== null));
  for (let i = 0; i < 20; i++) assert.equal((await cache.allocate(`r2-${i}`, 10)).ok, true);
  assert.ok(cache.usedBytes('storage') >= 0);
  assert.equal(cache.usedBytes('storage'), cache.entries.residentBytes('storage'));
});

test('concurrent allocations into a small storage tier keep accounting exact', async () => {
  const { cache } = makeCache({ storageBytes: 2 * MiB });
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => cache.allocate(`c${i}`, 10)));
  assert.ok(results.every((r) => r.ok));
  assert.equal(cache.usedBytes('storage'), cache.entries.residentBytes('storage'));
  // The limit is hard: allocations that find only in-flight writes wait for them to land, then evict.
  assert.equal(cache.entries.count('storage'), 8); // 8 × 245,760 bytes fit in 2 MiB, 9 do not
  assert.ok(cache.peakAllocatedBytes('storage') <= 2 * MiB, `peak ${cache.peakAllocatedBytes('storage')}`);
});

test('multi-turn read pattern: 4 turns give 4 writes and 10 decode reads', async () => {
  const { cache, rec } = makeCache({ storageBytes: 0.5 * GiB });
  const keys: string[] = [];
  for (let turn = 1; turn <= 4; turn++) {
    for (const prev of keys) await cache.access(prev, 'decode', 'multi_turn');
    const key = `conv_turn_${turn}`;
    await cache.allocate(key, 200);
    await cache.access(key, 'decode');
    keys.push(key);
  }
  assert.equal(cache.entries.count('storage'), 4);
  assert.equal(rec.counters.prefillWrites, 4);
  assert.equal(rec.counters.decodeReads, 10);
  assert.equal(rec.counters.multiTurnHits, 6);
});

test('multi-turn with room for 3.5 entries: some reloads miss, evictions happen', async () => {
  const { cache, rec } = makeCache({ storageBytes: 3.5 * 200 * TINY_BPT });
  const keys: string[] = [];
  let mtMiss = 0;
  let mtHit = 0;
  for (let turn = 1; turn <= 6; turn++) {
    for (const prev of keys) {
      if ((await cache.access(prev, 'decode', 'multi_turn')).tier === null) mtMiss++;
      else mtHit++;
    }
    const key = `conv_turn_${turn}`;
    await cache.allocate(key, 200);
    keys.push(key);
  }
  assert.ok(mtMiss > 0 && mtHit > 0);
  assert.ok(rec.counters.evictions > 0);
  assert.ok(rec.counters.cacheMisses >= mtMiss);
  assert.ok(cache.entries.count('storage') <= 4);
});

for (const tp of [1, 2, 4]) {
  test(`storage tokens processed counts logical tokens under tensor parallel ${tp}`, async () => {
    const { cache, rec } = makeCache({ storageBytes: GiB, tensorParallel: tp });
    await cache.allocate('e', 64);
    assert.equal(rec.counters.storageTokensProcessed, 64);
    assert.equal(cache.entries.get('e')?.size, Math.floor((64 * TINY_BPT) / tp));
    await cache.access('e');
    assert.ok(Math.abs(rec.counters.storageTokensProcessed - 128) < 1e-9 * 128);
  });
}

test('reset zeroes statistics and keeps entries', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 0.1 * GiB });
  for (let i = 0; i < 5; i++) await cache.allocate(`k${i}`, 10);
  for (let i = 0; i < 5; i++) await cache.access(`k${i}`);
  assert.ok(rec.latencyIfAny('cpu_read') !== undefined);
  rec.reset();
  const c = rec.counters;
  assert.equal(c.cacheHits + c.cacheMisses + c.writeOperations + c.readOperations + c.evictions, 0);
  assert.equal(rec.latencyIfAny('cpu_read'), undefined);
  assert.equal(rec.latencyIfAny('cpu_write'), undefined);
  assert.equal(cache.entries.size, 5);
});

test('explicit delete removes the entry and frees its bytes', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await cache.allocate('doc', 10);
  assert.equal(await cache.delete('doc'), true);
  assert.equal(cache.locate('doc'), null);
  assert.equal(cache.usedBytes('cpu'), 0);
  assert.equal(rec.traffic.cpu.explicitDeleteOps, 1);
  assert.equal(await cache.delete('doc'), false);
});

test('LRU: an accessed entry outlives older untouched ones', async () => {
  const { cache, clock } = makeCache({ storageBytes: 3 * 10 * TINY_BPT });
  await cache.allocate('a', 10);
  clock.advance(1);
  await cache.allocate('b', 10);
  clock.advance(1);
  await cache.allocate('c', 10);
  clock.advance(1);
  await cache.access('a');
  await cache.allocate('d', 10);
  assert.notEqual(cache.locate('a'), null);
  assert.equal(cache.locate('b'), null);
});

test('a failing backend write releases its reservation', async () => {
  const { cache, rec } = makeCache({ storageBytes: GiB });
  const storage = cache.backend('storage');
  const orig = storage.write.bind(storage);
  storage.write = async () => {
    throw new Error('disk on fire');
  };
  const r = await cache.allocate('x', 10);
  assert.deepEqual(r, { ok: false, wrote: false, tier: null, latencyMs: 0 });
  assert.equal(cache.usedBytes('storage'), 0);
  assert.equal(rec.traffic.storage.failedOps, 1);
  storage.write = orig;
  assert.equal((await cache.allocate('x', 10)).ok, true);
});

test('a read of an entry whose write is in flight waits for it and hits', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  const write = cache.allocate('prefix', 10);
  const read = cache.access('prefix', 'both', 'system');
  await write;
  assert.equal((await read).tier, 'cpu');
  assert.equal(rec.counters.cacheMisses, 0);
  assert.equal(rec.counters.systemPromptHits, 1);
});

test('a write cut by the end of the run counts the bytes that moved, in every total', async () => {
  const { IoAbortedError } = await import('../../src/tiers/backend.js');
  const { cache, rec } = makeCache({ storageBytes: GiB });
  cache.backend('storage').write = async () => {
    throw new IoAbortedError(4096);
  };
  const r = await cache.allocate('cut', 10);
  assert.equal(r.ok, false);
  assert.equal(rec.traffic.storage.abortedOps, 1);
  assert.equal(rec.traffic.storage.failedOps, 0);
  assert.equal(rec.traffic.storage.writeBytes, 4096);
  assert.equal(rec.counters.totalWriteBytes, 4096);
  assert.equal(cache.usedBytes('storage'), 0);
});

test('reads of one entry by several users run at once; a delete waits for them, and a later read waits for the delete', async () => {
  const { cache } = makeCache({ storageBytes: GiB });
  assert.equal((await cache.allocate('shared', 10)).ok, true);
  const storage = cache.backend('storage');
  const orig = storage.read.bind(storage);
  const release: Array<() => void> = [];
  let reading = 0;
  let mostAtOnce = 0;
  storage.read = async (key, sink) => {
    reading++;
    mostAtOnce = Math.max(mostAtOnce, reading);
    await new Promise<void>((resolve) => release.push(resolve)); // held open until the test lets go
    reading--;
    return orig(key, sink);
  };
  const reads = [cache.access('shared'), cache.access('shared'), cache.access('shared')];
  const del = cache.delete('shared');
  const late = cache.access('shared');
  await new Promise((r) => setImmediate(r));
  assert.equal(mostAtOnce, 3, 'the three reads are in flight together');
  assert.equal(cache.locate('shared'), 'storage', 'the delete waits for the readers');
  for (const go of release.splice(0)) go();
  assert.deepEqual(
    (await Promise.all(reads)).map((r) => r.tier),
    ['storage', 'storage', 'storage'],
  );
  assert.equal(await del, true);
  assert.equal((await late).tier, null, 'a read queued behind the delete misses');
  assert.equal(release.length, 0, 'and never reached the device');
});
