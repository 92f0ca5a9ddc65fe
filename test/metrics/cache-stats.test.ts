import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCacheStats } from '../../src/metrics/cache-stats.js';
import type { TierOccupancy } from '../../src/metrics/cache-stats.js';
import { CacheStatsSchema } from '../../src/metrics/cache-stats-schema.js';
import { makeCache } from '../cache/helpers.js';
import type { TieredCache } from '../../src/cache/tiered-cache.js';
import { GiB, MiB } from '../../src/util/units.js';

function occupancy(cache: TieredCache): Record<string, TierOccupancy> {
  const o: Record<string, TierOccupancy> = {};
  for (const t of cache.order) o[t] = { entries: cache.entries.count(t), usedBytes: cache.usedBytes(t), limitBytes: cache.limitBytes(t) };
  return o;
}

test('cache_stats carries every reference field, storage fields, per-tier byte totals and bandwidths', async () => {
  const { cache, rec } = makeCache({ cpuBytes: 0.1 * GiB });
  await cache.allocate('a', 100);
  await cache.access('a');
  await cache.access('zzz');
  const s = buildCacheStats(rec.snapshot(), occupancy(cache), 2, 'latency');
  const required = [
    'cache_hit_rate',
    'cache_hits',
    'cache_misses',
    'gpu_entries',
    'cpu_entries',
    'storage_entries',
    'gpu_memory_used_gb',
    'cpu_memory_used_gb',
    'offloads_cpu',
    'offloads_storage',
    'storage_health',
    'prefill_writes',
    'decode_reads',
    'system_prompt_hits',
    'common_phrase_hits',
    'user_cache_hits',
    'multi_turn_hits',
    'total_read_bytes',
    'total_write_bytes',
    'total_read_gb',
    'total_write_gb',
    'read_write_ratio',
    'read_iops',
    'write_iops',
    'storage_tokens_processed',
  ];
  for (const k of required) assert.ok(k in s, k);
  for (const t of ['gpu', 'cpu', 'storage']) {
    for (const d of ['written', 'read']) assert.ok(`tier_${t}_kv_bytes_${d}_gb` in s);
    for (const d of ['read', 'write']) assert.ok(`tier_${t}_${d}_bandwidth_gbps` in s);
  }
  assert.ok(Object.keys(s).some((k) => k.startsWith('tier_storage_')));
  assert.equal(s.cache_hit_rate, 0.5);
  assert.equal(s.tier_gpu_kv_bytes_written_gb, 0);
  assert.equal(s.tier_gpu_kv_bytes_read_gb, 0);
  assert.ok(s.tier_cpu_kv_bytes_written_gb > 0);
  assert.ok(s.tier_cpu_kv_bytes_read_gb > 0);
  assert.equal(s.tier_cpu_write_bandwidth_gbps, s.tier_cpu_kv_bytes_written_gb / 2);
  assert.ok('cpu_write_p95_ms' in s && 'cpu_read_p50_ms' in s);
  assert.ok(!('storage_write_p95_ms' in s), 'no storage latency fields without storage samples');
  assert.equal(s.read_write_ratio, 1);
  assert.equal(s.evictions, 0);
});

test('demotion traffic counts in the tier byte totals; latency fields only for placements and hits', async () => {
  const { cache, rec } = makeCache({ gpuBytes: 2 * MiB, cpuBytes: 2 * MiB, storageBytes: 2 * MiB });
  for (let i = 0; i < 50; i++) await cache.allocate(`k${i}`, 10);
  const s = buildCacheStats(rec.snapshot(), occupancy(cache), 1, 'latency');
  assert.ok(s.tier_cpu_kv_bytes_written_gb > 0);
  assert.ok(s.tier_storage_kv_bytes_written_gb > 0);
  assert.equal(s.tier_gpu_kv_bytes_read_gb, s.tier_cpu_kv_bytes_written_gb);
  assert.ok(s.tier_storage_write_bandwidth_gbps > 0);
  assert.ok(!('storage_write_p95_ms' in s), 'demotion writes are not placement latencies');
  assert.ok('storage_demote_write_p95_ms' in s);
  assert.ok(s.evictions > 0);
});

test('cache_stats matches its schema exactly: every key declared, none stray, with demotions and all tiers', async () => {
  const { cache, rec } = makeCache({ gpuBytes: 2 * MiB, cpuBytes: 2 * MiB, storageBytes: 2 * MiB });
  for (let i = 0; i < 50; i++) await cache.allocate(`k${i}`, 10);
  for (let i = 40; i < 50; i++) await cache.access(`k${i}`);
  const s = buildCacheStats(rec.snapshot(), occupancy(cache), 1, 'latency');
  const parsed = CacheStatsSchema.safeParse(s);
  assert.equal(parsed.success, true, parsed.error?.message);
  assert.ok(Object.keys(s).length > 100);
});
