// kvcache_bench.kv_pool and the console's KV POOL section (issue 32) from counted events: exact
// shares, the schema holds, a private pool has no shared block, unlimited capacity is null.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PoolStats } from '../../src/metrics/pool-stats.js';
import { timing } from '../../src/tiers/backend.js';
import { kvPoolJson } from '../../src/report/kv-pool-json.js';
import { KvPoolSchema } from '../../src/report/kv-pool-schema.js';
import { kvPoolLines } from '../../src/report/console-pool.js';
import type { KvPoolFacts } from '../../src/metrics/result.js';

function counted(): PoolStats {
  const s = new PoolStats();
  s.recordLookup(timing(0, 2), true);
  s.recordLookup(timing(0, 4), true);
  s.recordLookup(timing(0, 6), false);
  s.recordHit('own', 512);
  s.recordHit('other_rank', 1024);
  s.recordPublished(4096);
  s.recordPublishRace(2048);
  s.recordVanished();
  // Requests passed: two with chains sharing a block, one another rank's.
  s.recordRouted(true, [{ key: 'a', tokens: 100 }]);
  s.recordRouted(false, [
    { key: 'a', tokens: 100 },
    { key: 'b', tokens: 50 },
  ]);
  return s;
}

const atStart = {
  location: '/pool/kvpool-0123456789abcdef',
  namespace: 'kvpool-0123456789abcdef',
  blocks: 7,
  blockBytes: 700,
  staleTemps: 1,
  staleTempBytes: 10,
  staleTempsRemoved: 0,
};

test('a shared pool: exact figures, valid against its schema, and the console says them', () => {
  const facts: KvPoolFacts = {
    pool: 'shared',
    route: 'round-robin',
    rank: 1,
    worldSize: 2,
    shared: { atStart, shareBytes: 1 << 30, keep: true },
    stats: counted().snapshot(),
  };
  const j = KvPoolSchema.parse(kvPoolJson(facts, 2, 2048));
  assert.deepEqual([j.requests_passed, j.requests_served], [2, 1]);
  assert.deepEqual(j.trace_ideal, { tracked: true, tokens_asked: 250, token_hit_rate: 100 / 250 });
  const s = j.shared;
  assert.ok(s !== null);
  assert.deepEqual([s.lookups.count, s.lookups.found, s.lookups.per_sec], [3, 2, 1.5]);
  assert.ok(Math.abs(s.lookups.latency_ms.mean - 4) < 0.01);
  assert.deepEqual(s.hits_by_origin.own, { tokens: 512, blocks: 1, token_hit_rate: 0.25 });
  assert.deepEqual(s.hits_by_origin.other_rank, { tokens: 1024, blocks: 1, token_hit_rate: 0.5 });
  assert.deepEqual(s.hits_by_origin.earlier_run, { tokens: 0, blocks: 0, token_hit_rate: 0 });
  assert.deepEqual([s.published_blocks, s.published_bytes, s.publish_races, s.discarded_bytes, s.vanished], [1, 4096, 1, 2048, 1]);
  assert.equal(s.capacity_share_bytes, 1 << 30);
  const text = kvPoolLines(j).join('\n');
  assert.match(text, /### KV POOL \(shared; rank 1 of 2; route round-robin/);
  assert.match(text, /1 served here of 2 passed/);
  assert.match(text, /this rank 25\.0 % \(1 blocks\), another rank 50\.0 % \(1\), an earlier run 0\.0 % \(0\)/);
  assert.match(text, /lookups \(existence checks on the storage\): 3 \(2 found\), 1\.5\/s/);
  assert.match(text, /at start: 7 blocks .* 1 temporary files of killed writers/);
});

test('a private pool dividing a trace: no shared block; a passed request without blocks stops the ideal', () => {
  const s = new PoolStats();
  s.recordRouted(true, undefined);
  const j = KvPoolSchema.parse(kvPoolJson({ pool: 'private', route: 'session', rank: 0, worldSize: 4, stats: s.snapshot() }, 1, 0));
  assert.equal(j.shared, null);
  assert.deepEqual(j.trace_ideal, { tracked: false, tokens_asked: 0, token_hit_rate: null });
  assert.match(kvPoolLines(j).join('\n'), /the whole trace's reuse: not tracked/);
});

test('unlimited capacity is null, not a number', () => {
  const j = kvPoolJson(
    {
      pool: 'shared',
      route: 'round-robin',
      rank: 0,
      worldSize: 1,
      shared: { atStart, shareBytes: Infinity, keep: false },
      stats: new PoolStats().snapshot(),
    },
    1,
    0,
  );
  assert.equal(j.shared?.capacity_share_bytes, null);
  assert.match(kvPoolLines(KvPoolSchema.parse(j)).join('\n'), /this rank's share unlimited/);
});
