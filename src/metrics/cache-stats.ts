// Builds the reference's `cache_stats` block (docs/reference-compat.md#rc-42) and `storage_health` (#rc-43) from recorded
// data, with the same names, units (GiB = 2^30) and formulas, plus honest fields under new names.
import type { TierName } from '../tiers/backend.js';
import { GiB } from '../util/units.js';
import { LatencyHistogram } from './latency.js';
import type { RecorderSnapshot } from './recorder.js';
import { kvReadBytes, kvWriteBytes } from './recorder.js';
import { PERCENTILES, TIERS } from './cache-stats-schema.js';
import type { CacheStats, HealthCriterion, PercentileName, StorageHealth, StoragePartName, TierLatencyName } from './cache-stats-schema.js';

export type PerformanceProfile = 'latency' | 'throughput';
export type { CacheStats, HealthCriterion, StorageHealth };

/** What the cache holds at the end of the run, per tier. */
export interface TierOccupancy {
  readonly entries: number;
  readonly usedBytes: number;
  readonly limitBytes: number;
}

type Percentiles<N extends string> = Partial<Record<`${N}_${PercentileName}_ms`, number>>;

/** `<name>_<pNN>_ms` of histogram `name`, or nothing when it has no samples. */
function percentileFields<const N extends TierLatencyName | StoragePartName>(rec: RecorderSnapshot, name: N): Percentiles<N> {
  const h = rec.latencies[name];
  if (h === undefined) return {};
  return Object.fromEntries(PERCENTILES.map(([p]) => [`${name}_${p}_ms`, h[p]])) as Percentiles<N>;
}

/** One tier's fields named `tier_<t>_<field>`, in the order `fields` lists them. */
function tierFields<F extends Record<string, unknown>>(
  t: TierName,
  fields: F,
): { [K in keyof F & string as `tier_${TierName}_${K}`]: F[K] } {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [`tier_${t}_${k}`, v])) as {
    [K in keyof F & string as `tier_${TierName}_${K}`]: F[K];
  };
}

/** Every tier's fields, tier after tier (the reference's key order). */
function perTier<T extends object>(fields: (t: TierName) => T): T {
  return Object.assign({}, ...TIERS.map(fields)) as T;
}

const READ_WRITE = ['read', 'write'] as const;

export function cacheHitRate(rec: RecorderSnapshot): number {
  const { cacheHits, cacheMisses } = rec.counters;
  return cacheHits + cacheMisses === 0 ? 0 : cacheHits / (cacheHits + cacheMisses);
}

/**
 * `elapsedSec` is the denominator of every bandwidth: the wall-clock window in which the counted
 * bytes moved. Reference-compatible byte totals per tier include demotion traffic (bytes demoted in
 * count as written, bytes demoted out as read), as the reference's tests assert.
 */
export function buildCacheStats(
  rec: RecorderSnapshot,
  occupancy: Partial<Record<TierName, TierOccupancy>>,
  elapsedSec: number,
  profile: PerformanceProfile,
): CacheStats {
  const c = rec.counters;
  const rate = (bytes: number): number => (elapsedSec > 0 ? bytes / elapsedSec : 0);
  return {
    cache_hit_rate: cacheHitRate(rec),
    cache_hits: c.cacheHits,
    cache_misses: c.cacheMisses,
    gpu_entries: occupancy.gpu?.entries ?? 0,
    cpu_entries: occupancy.cpu?.entries ?? 0,
    storage_entries: occupancy.storage?.entries ?? 0,
    gpu_memory_used_gb: (occupancy.gpu?.usedBytes ?? 0) / GiB,
    cpu_memory_used_gb: (occupancy.cpu?.usedBytes ?? 0) / GiB,
    offloads_cpu: c.offloadsCpu,
    offloads_storage: c.offloadsStorage,
    storage_health: storageHealth(rec, profile, elapsedSec),
    prefill_writes: c.prefillWrites,
    decode_reads: c.decodeReads,
    ...perTier((t) =>
      tierFields(t, {
        kv_bytes_written_gb: kvWriteBytes(rec.traffic[t]) / GiB,
        kv_bytes_read_gb: kvReadBytes(rec.traffic[t]) / GiB,
      }),
    ),
    ...perTier((t) =>
      tierFields(t, {
        read_bandwidth_gbps: rate(kvReadBytes(rec.traffic[t])) / GiB,
        write_bandwidth_gbps: rate(kvWriteBytes(rec.traffic[t])) / GiB,
      }),
    ),
    system_prompt_hits: c.systemPromptHits,
    common_phrase_hits: c.commonPhraseHits,
    user_cache_hits: c.userCacheHits,
    multi_turn_hits: c.multiTurnHits,
    total_read_bytes: c.totalReadBytes,
    total_write_bytes: c.totalWriteBytes,
    total_read_gb: c.totalReadBytes / GiB,
    total_write_gb: c.totalWriteBytes / GiB,
    read_write_ratio: c.totalReadBytes / Math.max(c.totalWriteBytes, 1),
    // The reference's "iops" are operation counts, not rates; kept as such for compatibility.
    read_iops: c.readOperations,
    write_iops: c.writeOperations,
    storage_tokens_processed: c.storageTokensProcessed,
    ...perTier(
      (t) =>
        Object.assign({}, ...READ_WRITE.map((op) => percentileFields(rec, `${t}_${op}`))) as Percentiles<`${TierName}_${'read' | 'write'}`>,
    ),
    ...(Object.assign(
      {},
      ...READ_WRITE.flatMap((op) => (['device', 'host'] as const).map((part) => percentileFields(rec, `storage_${op}_${part}`))),
    ) as Percentiles<StoragePartName>),
    ...honestFields(rec, occupancy, elapsedSec),
  };
}

/** Fields the reference lacks: exact bytes per kind of traffic, wall-clock rates, demotion latencies. */
function honestFields(rec: RecorderSnapshot, occupancy: Partial<Record<TierName, TierOccupancy>>, elapsedSec: number) {
  const rate = (bytes: number): number => (elapsedSec > 0 ? bytes / elapsedSec : 0);
  const tier = (t: TierName) => {
    const tr = rec.traffic[t];
    const occ = occupancy[t];
    return {
      ...tierFields(t, {
        placement_write_bytes: tr.writeBytes,
        placement_write_ops: tr.writeOps,
        hit_read_bytes: tr.readBytes,
        hit_read_ops: tr.readOps,
        demote_in_bytes: tr.demoteInBytes,
        demote_in_ops: tr.demoteInOps,
        demote_out_bytes: tr.demoteOutBytes,
        demote_out_ops: tr.demoteOutOps,
        evict_delete_bytes: tr.evictDeleteBytes,
        evict_delete_ops: tr.evictDeleteOps,
        explicit_delete_ops: tr.explicitDeleteOps,
        failed_ops: tr.failedOps,
        aborted_ops: tr.abortedOps,
        read_bytes_per_sec: rate(kvReadBytes(tr)),
        write_bytes_per_sec: rate(kvWriteBytes(tr)),
        used_bytes: occ?.usedBytes ?? 0,
        limit_bytes: occ === undefined ? 0 : Number.isFinite(occ.limitBytes) ? occ.limitBytes : null,
      }),
      ...percentileFields(rec, `${t}_demote_read`),
      ...percentileFields(rec, `${t}_demote_write`),
    };
  };
  return {
    evictions: rec.counters.evictions,
    measured_window_sec: elapsedSec,
    ...perTier(tier),
  };
}

function p95Ms(rec: RecorderSnapshot, ...names: string[]): number | undefined {
  for (const n of names) {
    const h = rec.latencies[n];
    if (h !== undefined) return h.p95;
  }
  return undefined;
}

/** The reference's PASS/FAIL verdict; each criterion appears only when it has data. */
export function storageHealth(rec: RecorderSnapshot, profile: PerformanceProfile, elapsedSec: number): StorageHealth {
  const criteria: HealthCriterion[] = [];
  const add = (name: string, target: number, actual: number, unit: string, passed: boolean): void => {
    criteria.push({ name, target, actual, unit, passed });
  };
  if (profile === 'latency') {
    const w = p95Ms(rec, 'storage_write_device', 'storage_write');
    if (w !== undefined) add('Storage Tier Write Device P95 < 500ms', 500, w, 'ms', w < 500);
    const r = p95Ms(rec, 'storage_read_device', 'storage_read');
    if (r !== undefined) add('Storage Tier Read Device P95 < 200ms', 200, r, 'ms', r < 200);
    const cpu = rec.latencies.cpu_read;
    const cpuW = rec.latencies.cpu_write;
    if (cpu !== undefined || cpuW !== undefined) {
      const both = new LatencyHistogram();
      if (cpu !== undefined) both.add(LatencyHistogram.decode(cpu.encoded));
      if (cpuW !== undefined) both.add(LatencyHistogram.decode(cpuW.encoded));
      const p = both.percentileMs(95);
      add('CPU RAM P95 < 150ms', 150, p, 'ms', p < 150);
    }
    const { cacheHits, cacheMisses } = rec.counters;
    if (cacheHits + cacheMisses > 0) {
      const hr = cacheHitRate(rec);
      add('Cache Hit Rate > 30%', 0.3, hr, 'ratio', hr > 0.3);
    }
  } else {
    const st = rec.traffic.storage;
    const readBytes = kvReadBytes(st);
    const writeBytes = kvWriteBytes(st);
    const gibps = (b: number): number => (elapsedSec > 0 ? b / elapsedSec / GiB : 0);
    if (readBytes > 0 || writeBytes === 0) add('Storage KV Read Bandwidth', 0, gibps(readBytes), 'GiB/s', gibps(readBytes) > 0);
    if (writeBytes > 0 || readBytes === 0) add('Storage KV Write Bandwidth', 0, gibps(writeBytes), 'GiB/s', gibps(writeBytes) > 0);
  }
  const passed = criteria.filter((x) => x.passed).length;
  return {
    overall_status: passed === criteria.length ? 'PASS' : 'FAIL',
    criteria,
    passed_count: passed,
    total_count: criteria.length,
  };
}
