// Random sequences of allocate / access / delete, sequential and concurrent, against small tiers:
// the accounting invariants must hold whatever the interleaving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeCache, TINY_BPT } from './helpers.js';
import type { TieredCache } from '../../src/cache/tiered-cache.js';
import type { Recorder } from '../../src/metrics/recorder.js';
import { Rng } from '../../src/util/rng.js';
import { MiB } from '../../src/util/units.js';
import { drive } from '../../src/util/steps.js';

export function checkInvariants(cache: TieredCache, rec: Recorder): void {
  for (const tier of cache.order) {
    let sum = 0;
    const keys = new Set<string>();
    for (const e of cache.entries.lruOrder(tier)) {
      sum += e.size;
      keys.add(e.key);
      assert.equal(e.tier, tier);
    }
    assert.equal(cache.usedBytes(tier), sum, `${tier}: usage equals the sum of its entries`);
    assert.equal(cache.entries.residentBytes(tier), sum);
    assert.ok(cache.usedBytes(tier) >= 0);
    assert.deepEqual(new Set(cache.backend(tier).keys()), keys, `${tier}: backend holds exactly the live entries`);
  }
  for (let i = 0; i + 1 < cache.order.length; i++) {
    const from = rec.traffic[cache.order[i] as 'gpu' | 'cpu'];
    const to = rec.traffic[cache.order[i + 1] as 'cpu' | 'storage'];
    assert.equal(from.demoteOutBytes, to.demoteInBytes, 'bytes demoted out equal bytes demoted in');
    assert.equal(from.demoteOutOps, to.demoteInOps);
  }
}

async function randomOps(cache: TieredCache, rec: Recorder, seed: number, steps: number): Promise<void> {
  const rng = new Rng(seed, 'ops');
  const keys: string[] = [];
  let negative = false;
  const watch = (): void => {
    for (const t of cache.order) if (cache.usedBytes(t) < 0) negative = true;
  };
  for (let step = 0; step < steps; step++) {
    const batch = rng.int(1, 8); // several operations in flight at once
    const ops: Array<Promise<unknown>> = [];
    for (let j = 0; j < batch; j++) {
      const u = rng.random();
      if (u < 0.5 || keys.length === 0) {
        const key = `k${step}_${j}`;
        keys.push(key);
        ops.push(
          cache.allocate(key, rng.int(1, 60)).then((r) => {
            assert.equal(r.ok, true, 'every allocation succeeds: the last tier always accepts');
            watch();
          }),
        );
      } else if (u < 0.9) {
        ops.push(cache.access(rng.pick(keys), rng.random() < 0.5 ? 'decode' : 'prefill', 'user').then(watch));
      } else {
        ops.push(cache.delete(rng.pick(keys)).then(watch));
      }
    }
    await Promise.all(ops);
    assert.equal(negative, false, 'usage never negative');
    checkInvariants(cache, rec);
  }
}

for (const seed of [1, 2, 3, 4, 5]) {
  test(`invariants hold over random concurrent operations, three tiers (seed ${seed})`, async () => {
    const { cache, rec } = makeCache({ gpuBytes: 0.6 * MiB, cpuBytes: 1.1 * MiB, storageBytes: 2.5 * MiB });
    await randomOps(cache, rec, seed, 120);
    assert.ok(rec.counters.evictions > 0, 'the sequence exercised eviction');
    assert.ok(rec.traffic.storage.evictDeleteOps > 0);
  });
}

test('invariants hold with a storage-only cache', async () => {
  const { cache, rec } = makeCache({ storageBytes: 40 * 30 * TINY_BPT });
  await randomOps(cache, rec, 11, 150);
  assert.ok(rec.counters.evictions > 0);
});

test('invariants hold with immediate (null) tiers, where operations never wait and take no locks', async () => {
  const { cache, rec } = makeCache({ kind: 'null', gpuBytes: 0.6 * MiB, cpuBytes: 1.1 * MiB, storageBytes: 2.5 * MiB });
  await randomOps(cache, rec, 7, 120);
  assert.ok(rec.counters.evictions > 0);
});

test('the synchronous path (null tiers) makes the same decisions as the asynchronous one (memory tiers)', async () => {
  const spec = { gpuBytes: 0.6 * MiB, cpuBytes: 1.1 * MiB, storageBytes: 2.5 * MiB };
  const runs = await Promise.all(
    (['memory', 'null'] as const).map(async (kind) => {
      const { cache, rec } = makeCache({ ...spec, kind });
      const rng = new Rng(21, 'same-decisions');
      const keys: string[] = [];
      const outcomes: string[] = [];
      for (let i = 0; i < 400; i++) {
        const u = rng.random();
        if (u < 0.45 || keys.length === 0) {
          keys.push(`k${i}`);
          const r = await cache.allocate(`k${i}`, rng.int(1, 60));
          outcomes.push(`a ${r.ok} ${r.tier}`);
        } else if (u < 0.9) outcomes.push(`r ${(await cache.access(rng.pick(keys))).tier}`);
        else outcomes.push(`d ${await cache.delete(rng.pick(keys))}`);
      }
      const lru = cache.order.map((t) => [...cache.entries.keysIn(t)].join(','));
      const { evictions, cacheHits, cacheMisses, offloadsCpu, offloadsStorage } = rec.counters;
      return {
        outcomes,
        lru,
        counters: { evictions, cacheHits, cacheMisses, offloadsCpu, offloadsStorage },
        demoted: rec.traffic.cpu.demoteInBytes,
      };
    }),
  );
  const [mem, sync] = runs;
  assert.ok(mem !== undefined && sync !== undefined);
  assert.ok(mem.counters.evictions > 0);
  assert.deepEqual(sync, mem);
});

test('with immediate tiers an allocation, its demotions and a read complete synchronously', () => {
  const { cache } = makeCache({ kind: 'null', gpuBytes: 4 * MiB, storageBytes: 40 * MiB });
  for (let i = 0; i < 20; i++) {
    const placed = drive(cache.allocateSteps(`k${i}`, 40));
    assert.ok(!(placed instanceof Promise), 'no promise: nothing waited');
    assert.equal(placed.ok, true);
  }
  assert.equal(cache.locate('k0'), 'storage', 'the oldest entries were demoted on the way');
  const read = drive(cache.accessSteps('k0'));
  assert.ok(!(read instanceof Promise));
  assert.equal(read.tier, 'storage');
});
