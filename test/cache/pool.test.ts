// The cache over a shared pool (issue 32): two servers' caches on one pool directory. A block not in a
// server's own tiers is looked up through the storage (each lookup counted), read whoever published it
// and attributed to its publisher; a block published first by the other server is not rewritten and
// not owned; each server evicts only its own blocks; a block its publisher evicted is a miss for the
// other; one gone between lookup and read is counted as vanished; a decode re-read skips the lookup.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { settle } from '../../src/util/steps.js';
import { FileBackend } from '../../src/tiers/file.js';
import { poolNamespace } from '../../src/tiers/pool-names.js';
import type { LookupResult, TieredCache } from '../../src/cache/tiered-cache.js';
import { withTempDir } from '../util/temp-dir.js';
import { makeCache, TINY_BPT } from './helpers.js';

const NS = poolNamespace({ model: 'tiny-1b', blockTokens: 4, bytesPerToken: TINY_BPT });
const BLOCK = 4 * TINY_BPT;

const lookup = (cache: TieredCache, key: string, check = true): Promise<LookupResult> =>
  settle(cache.lookupSteps(key, 4, check ? 'prefill' : 'decode', 'user', check));

async function server(dir: string, storageBytes = Infinity) {
  const storage = await FileBackend.create({ dir, ioMode: 'buffered', pool: { namespace: NS, keep: false } });
  return { ...makeCache({ storage, storageBytes }), storage };
}

test('a block one server published is a hit for the other (another rank); its own is its own; a miss is one lookup; a decode re-read looks nothing up', async () => {
  await withTempDir(async (dir) => {
    const a = await server(dir);
    const b = await server(dir);
    try {
      assert.equal(a.cache.pooled, true);
      const put = await a.cache.allocate('k', 4);
      assert.deepEqual({ ok: put.ok, wrote: put.wrote, tier: put.tier }, { ok: true, wrote: true, tier: 'storage' });
      const fromB = await lookup(b.cache, 'k');
      assert.deepEqual({ tier: fromB.tier, origin: fromB.origin }, { tier: 'storage', origin: 'other_rank' });
      const fromA = await lookup(a.cache, 'k');
      assert.deepEqual({ tier: fromA.tier, origin: fromA.origin }, { tier: 'storage', origin: 'own' });
      const miss = await lookup(b.cache, 'absent');
      assert.deepEqual({ tier: miss.tier, origin: miss.origin }, { tier: null, origin: undefined });
      const sb = b.rec.pool.snapshot();
      assert.deepEqual({ lookups: sb.lookups, found: sb.lookupsFound }, { lookups: 2, found: 1 });
      assert.equal(b.rec.snapshot().traffic.storage.readBytes, BLOCK, 'the hit moved the whole block');
      assert.equal(a.rec.pool.snapshot().published, 1);
      assert.equal(b.cache.locate('k'), null, "b does not own a's block");
      const again = await lookup(b.cache, 'k', false);
      assert.deepEqual({ tier: again.tier, origin: again.origin }, { tier: 'storage', origin: undefined });
      assert.equal(b.rec.pool.snapshot().lookups, 2, 'a decode re-read is no lookup');
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });
});

test('a block the other server published first is not rewritten: found, not owned, its copy counted as moved and discarded', async () => {
  await withTempDir(async (dir) => {
    const a = await server(dir);
    const b = await server(dir);
    try {
      await a.cache.allocate('k', 4);
      const r = await b.cache.allocate('k', 4);
      assert.deepEqual({ ok: r.ok, wrote: r.wrote, tier: r.tier }, { ok: true, wrote: false, tier: 'storage' });
      assert.equal(b.cache.locate('k'), null);
      assert.equal(b.cache.usedBytes('storage'), 0, 'its room was given back');
      const s = b.rec.pool.snapshot();
      assert.deepEqual(
        { races: s.publishRaces, discarded: s.discardedBytes, published: s.published },
        { races: 1, discarded: BLOCK, published: 0 },
      );
      assert.equal(b.rec.snapshot().traffic.storage.writeBytes, BLOCK, 'the discarded copy did reach the storage');
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });
});

test("each server evicts only its own blocks within its share; the other's evicted block is then a miss", async () => {
  await withTempDir(async (dir) => {
    // Room for two blocks each (whole file-system blocks: allocatedBytes rounds up).
    const a = await server(dir, 2 * a4k(BLOCK));
    const b = await server(dir, 2 * a4k(BLOCK));
    try {
      await b.cache.allocate('b0', 4);
      for (const k of ['a0', 'a1', 'a2']) await a.cache.allocate(k, 4);
      assert.equal(a.cache.locate('a0'), null, "a's oldest block was evicted by a");
      assert.equal((await lookup(b.cache, 'b0')).origin, 'own', "a never touched b's block");
      assert.equal((await lookup(b.cache, 'a0')).tier, null, 'gone for b too: a miss');
      assert.equal((await lookup(b.cache, 'a2')).origin, 'other_rank');
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });
});

test('its own block removed by someone else: a miss, dropped from its index (never unlinked by it later)', async () => {
  await withTempDir(async (dir) => {
    const a = await server(dir);
    try {
      await a.cache.allocate('k', 4);
      await rm(a.storage.pathFor('k'));
      assert.equal((await lookup(a.cache, 'k')).tier, null);
      assert.equal(a.cache.locate('k'), null);
      assert.equal(a.rec.pool.snapshot().lostOwn, 1);
      assert.equal(a.cache.usedBytes('storage'), 0);
      assert.deepEqual([...a.storage.keys()], []);
    } finally {
      await a.cache.close();
    }
  });
});

test('a block gone between lookup and read is a miss counted as vanished, not a failure', async () => {
  await withTempDir(async (dir) => {
    const a = await server(dir);
    const b = await server(dir);
    try {
      await a.cache.allocate('k', 4);
      const pool = b.storage.pool;
      assert.ok(pool !== undefined);
      // The publisher evicts it right after b's lookup answered.
      const realLookup = pool.lookup.bind(pool);
      Object.assign(pool, {
        lookup: async (key: string) => {
          const probe = await realLookup(key);
          await a.cache.delete(key);
          return probe;
        },
      });
      const r = await lookup(b.cache, 'k');
      assert.equal(r.tier, null);
      const s = b.rec.pool.snapshot();
      assert.deepEqual({ lookups: s.lookups, found: s.lookupsFound, vanished: s.vanished }, { lookups: 1, found: 1, vanished: 1 });
      assert.deepEqual(b.rec.snapshot().failures, [], 'not a failure');
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });
});

/** Bytes a block takes on a 4 KiB-block file system. */
function a4k(bytes: number): number {
  return Math.ceil(bytes / 4096) * 4096 + 4096;
}
