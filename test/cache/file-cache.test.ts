// The cache over the real file tier: files on disk match live storage entries exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { makeCache, readBack, SEED, TINY_BPT } from './helpers.js';
import { FileBackend } from '../../src/tiers/file.js';
import type { TieredCache } from '../../src/cache/tiered-cache.js';
import { payloadBytes } from '../../src/data/payload.js';
import { MiB } from '../../src/util/units.js';
import { allocatedUnder } from '../util/allocated.js';

async function filesOnDisk(fb: FileBackend): Promise<Set<string>> {
  return new Set((await readdir(fb.dir)).filter((f) => f.endsWith('.bin')));
}

async function assertNoOrphans(cache: TieredCache, fb: FileBackend): Promise<void> {
  const live = new Set([...cache.entries.keysIn('storage')].map((k) => fb.pathFor(k).split('/').pop()!));
  assert.deepEqual(await filesOnDisk(fb), live, 'every file is a live storage entry and every entry has its file');
}

test('storage-only over files: all allocations succeed, old entries deleted, no orphan files', async () => {
  const fb = await FileBackend.create({ chunkBytes: MiB, stagingSlots: 4 });
  const { cache, rec } = makeCache({ storage: fb, storageBytes: 2 * MiB });
  try {
    for (let i = 0; i < 30; i++) assert.equal((await cache.allocate(`k${i}`, 10)).tier, 'storage');
    assert.ok(rec.counters.evictions > 0);
    await assertNoOrphans(cache, fb);
    for (let i = 0; i < 20; i++) assert.equal((await cache.allocate(`r${i}`, 10)).ok, true);
    await assertNoOrphans(cache, fb);
    const last = 'r19';
    assert.ok(Buffer.from(await readBack(cache, last)).equals(payloadBytes(SEED, last, 10 * TINY_BPT)));
  } finally {
    await cache.close();
  }
});

test('three tiers over files under concurrent load: usage, files and conservation agree', async () => {
  const fb = await FileBackend.create({ chunkBytes: MiB, stagingSlots: 2 });
  const { cache, rec } = makeCache({ gpuBytes: 0.5 * MiB, cpuBytes: MiB, storage: fb, storageBytes: 3 * MiB });
  try {
    for (let round = 0; round < 10; round++) {
      await Promise.all(Array.from({ length: 6 }, (_, i) => cache.allocate(`k${round}_${i}`, 5 + ((round * 7 + i) % 20))));
      await Promise.all(Array.from({ length: 6 }, (_, i) => cache.access(`k${round}_${(i + 1) % 6}`)));
      for (const t of cache.order) assert.equal(cache.usedBytes(t), cache.entries.residentBytes(t));
      await assertNoOrphans(cache, fb);
    }
    assert.equal(rec.traffic.gpu.demoteOutBytes, rec.traffic.cpu.demoteInBytes);
    assert.equal(rec.traffic.cpu.demoteOutBytes, rec.traffic.storage.demoteInBytes);
    assert.ok(rec.traffic.storage.demoteInBytes > 0);
    assert.ok(rec.latencyIfAny('storage_demote_write_device') !== undefined);
  } finally {
    await cache.close();
  }
});

test('the storage limit is hard on disk: sampled every 20 ms under concurrent writes, evictions and reads, the peak stays under it', async () => {
  const fb = await FileBackend.create({ chunkBytes: MiB, stagingSlots: 8 });
  const limit = 6 * MiB;
  const { cache } = makeCache({ cpuBytes: MiB, storage: fb, storageBytes: limit });
  let peak = 0;
  let samples = 0;
  const sample = (): void => {
    peak = Math.max(peak, allocatedUnder(fb.dir));
    samples++;
  };
  const sampler = setInterval(sample, 20);
  try {
    // Entries of 0.5–2.3 MiB, 8 at a time: a sum far over the limit, always some in flight.
    for (let round = 0; round < 12; round++) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => cache.allocate(`k${round}_${i}`, 20 + ((round * 13 + i * 29) % 80))));
      sample();
      await Promise.all(Array.from({ length: 4 }, (_, i) => cache.access(`k${round}_${i}`)));
    }
    sample();
  } finally {
    clearInterval(sampler);
    await cache.close();
  }
  assert.ok(samples >= 12, `${samples} samples`);
  assert.ok(peak <= limit, `peak on disk ${peak} > limit ${limit}`);
  assert.ok(cache.peakAllocatedBytes('storage') <= limit, `accounted peak ${cache.peakAllocatedBytes('storage')}`);
  assert.ok(peak > limit / 2, `the test should fill the tier (peak ${peak})`);
});

test('after the run, makeRoomAfterRun deletes the least recently used entries until the room is free, records nothing, and leaves no orphan', async () => {
  const fb = await FileBackend.create({ chunkBytes: MiB, stagingSlots: 2 });
  const { cache, rec, clock } = makeCache({ storage: fb, storageBytes: 2 * MiB });
  try {
    for (let i = 0; i < 30; i++) {
      clock.advance(1);
      await cache.allocate(`k${i}`, 10);
    }
    const before = structuredClone(rec.snapshot());
    const lru = [...cache.entries.lruOrder('storage')].map((e) => e.key);
    const room = (): number => cache.limitBytes('storage') - cache.allocatedBytes('storage');
    const want = room() + 3 * cache.sizeOf(10); // three entries' worth beyond what is free
    assert.ok((await cache.makeRoomAfterRun('storage', want)) >= want);
    const left = [...cache.entries.keysIn('storage')];
    const gone = lru.filter((k) => !left.includes(k));
    assert.ok(gone.length >= 3 && gone.length <= 4, `${gone.length} deleted`);
    assert.deepEqual(gone, lru.slice(0, gone.length), 'least recently used first');
    await assertNoOrphans(cache, fb);
    assert.deepEqual(rec.snapshot(), before, 'the window is over: nothing is recorded');
    // More room than the tier has: every entry goes, and what is free then is the whole limit.
    assert.equal(await cache.makeRoomAfterRun('storage', 10 * MiB), cache.limitBytes('storage'));
    assert.equal(cache.entries.count('storage'), 0);
    await assertNoOrphans(cache, fb);
  } finally {
    await cache.close();
  }
});
