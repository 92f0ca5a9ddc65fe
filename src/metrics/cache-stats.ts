// Builds the reference's `cache_stats` block (spec §6.3) and `storage_health` (§6.4) from recorded
// data, with the same names, units (GiB = 2^30) and formulas, plus honest fields under new names.
import type { TierName } from '../tiers/backend.js';
import { GiB } from '../util/units.js';
import { LatencyHistogram } from './latency.js';
import type { RecorderSnapshot } from './recorder.js';
import { TIER_NAMES, kvReadBytes, kvWriteBytes } from './recorder.js';

export type PerformanceProfile = 'latency' | 'throughput';

/** What the cache holds at the end of the run, per tier. */
export interface TierOccupancy {
  readonly entries: number;
  readonly usedBytes: number;
  readonly limitBytes: number;
}

export interface HealthCriterion {
  readonly name: string;
  readonly target: number;
  readonly actual: number;
  readonly unit: string;
  readonly passed: boolean;
}

export interface StorageHealth {
  readonly overall_status: 'PASS' | 'FAIL';
  readonly criteria: HealthCriterion[];
  readonly passed_count: number;
  readonly total_count: number;
}

const PERCENTILES = ['p50', 'p95', 'p99', 'p999', 'p9999'] as const;

function percentileFields(rec: RecorderSnapshot, histogram: string, prefix: string, out: Record<string, unknown>): void {
  const h = rec.latencies[histogram];
  if (h === undefined) return;
  for (const p of PERCENTILES) out[`${prefix}_${p}_ms`] = h[p];
}

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
): Record<string, unknown> {
  const c = rec.counters;
  const out: Record<string, unknown> = {
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
  };
  const rate = (bytes: number): number => (elapsedSec > 0 ? bytes / elapsedSec : 0);
  for (const t of TIER_NAMES) {
    const tr = rec.traffic[t];
    out[`tier_${t}_kv_bytes_written_gb`] = kvWriteBytes(tr) / GiB;
    out[`tier_${t}_kv_bytes_read_gb`] = kvReadBytes(tr) / GiB;
  }
  for (const t of TIER_NAMES) {
    const tr = rec.traffic[t];
    out[`tier_${t}_read_bandwidth_gbps`] = rate(kvReadBytes(tr)) / GiB;
    out[`tier_${t}_write_bandwidth_gbps`] = rate(kvWriteBytes(tr)) / GiB;
  }
  Object.assign(out, {
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
  });
  for (const t of TIER_NAMES) {
    for (const op of ['read', 'write'] as const) {
      percentileFields(rec, `${t}_${op}`, `${t}_${op}`, out);
    }
  }
  for (const op of ['read', 'write'] as const) {
    for (const part of ['device', 'host'] as const) percentileFields(rec, `storage_${op}_${part}`, `storage_${op}_${part}`, out);
  }
  Object.assign(out, honestFields(rec, occupancy, elapsedSec));
  return out;
}

/** Fields the reference lacks: exact bytes per kind of traffic, wall-clock rates, demotion latencies. */
function honestFields(rec: RecorderSnapshot, occupancy: Partial<Record<TierName, TierOccupancy>>, elapsedSec: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    evictions: rec.counters.evictions,
    measured_window_sec: elapsedSec,
  };
  for (const t of TIER_NAMES) {
    const tr = rec.traffic[t];
    const occ = occupancy[t];
    Object.assign(out, {
      [`tier_${t}_placement_write_bytes`]: tr.writeBytes,
      [`tier_${t}_placement_write_ops`]: tr.writeOps,
      [`tier_${t}_hit_read_bytes`]: tr.readBytes,
      [`tier_${t}_hit_read_ops`]: tr.readOps,
      [`tier_${t}_demote_in_bytes`]: tr.demoteInBytes,
      [`tier_${t}_demote_in_ops`]: tr.demoteInOps,
      [`tier_${t}_demote_out_bytes`]: tr.demoteOutBytes,
      [`tier_${t}_demote_out_ops`]: tr.demoteOutOps,
      [`tier_${t}_evict_delete_bytes`]: tr.evictDeleteBytes,
      [`tier_${t}_evict_delete_ops`]: tr.evictDeleteOps,
      [`tier_${t}_explicit_delete_ops`]: tr.explicitDeleteOps,
      [`tier_${t}_failed_ops`]: tr.failedOps,
      [`tier_${t}_aborted_ops`]: tr.abortedOps,
      [`tier_${t}_read_bytes_per_sec`]: elapsedSec > 0 ? kvReadBytes(tr) / elapsedSec : 0,
      [`tier_${t}_write_bytes_per_sec`]: elapsedSec > 0 ? kvWriteBytes(tr) / elapsedSec : 0,
      [`tier_${t}_used_bytes`]: occ?.usedBytes ?? 0,
      [`tier_${t}_limit_bytes`]: occ === undefined ? 0 : Number.isFinite(occ.limitBytes) ? occ.limitBytes : null,
    });
    for (const op of ['demote_read', 'demote_write'] as const) percentileFields(rec, `${t}_${op}`, `${t}_${op}`, out);
  }
  return out;
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
