// Builds the reference's `cache_stats` block (docs/reference-compat.md#rc-42) and `storage_health` (#rc-43) from recorded
// data, with the same names, units (GiB = 2^30) and formulas, plus honest fields under new names.
import type { TierName } from '../tiers/backend.js';
import { GiB } from '../util/units.js';
import { LatencyHistogram } from './latency.js';
import type { RecorderSnapshot } from './recorder.js';
import { kvReadBytes, kvWriteBytes } from './recorder.js';
import { PERCENTILES, TIERS } from './cache-stats-schema.js';
import { MIN_SAMPLES, MIN_STORAGE_TRANSFERS } from './sample-minimums.js';
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
  health: HealthContext = {},
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
    storage_health: storageHealth(rec, profile, elapsedSec, { cpuTier: (occupancy.cpu?.limitBytes ?? 0) > 0, ...health }),
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

/**
 * The storage histograms the verdicts judge, per direction: every write into the storage tier
 * (placements and demotions — a run whose storage writes are all demotions still has a write
 * latency) and every hit read from it. storage_health merges their device parts; the validity
 * check counts their samples (validity.ts).
 */
export const STORAGE_VERDICT_HISTOGRAMS = {
  read: ['storage_read'],
  write: ['storage_write', 'storage_demote_write'],
} as const satisfies Record<'read' | 'write', readonly string[]>;

/** Samples of `names` together. */
export function samplesOf(rec: RecorderSnapshot, names: readonly string[]): number {
  return names.reduce((n, name) => n + (rec.latencies[name]?.count ?? 0), 0);
}

/** The histograms `names` merged into one (their `_device` parts when `part` says so and they exist). */
function merged(rec: RecorderSnapshot, names: readonly string[], part: '' | '_device'): LatencyHistogram {
  const out = new LatencyHistogram();
  for (const n of names) {
    const h = rec.latencies[`${n}${part}`] ?? rec.latencies[n];
    if (h !== undefined) out.add(LatencyHistogram.decode(h.encoded, h.mean * h.count));
  }
  return out;
}

/** What storage_health needs beyond the recorder: whether its samples are real I/O, which tiers exist. */
export interface HealthContext {
  /** Trace mode: null tiers, no real I/O, so no latency or bandwidth criterion can be judged. */
  readonly traceMode?: boolean;
  /** The CPU tier exists (its criterion is then listed even without samples). */
  readonly cpuTier?: boolean;
}

/**
 * The reference's verdict, with no verdict without samples: a criterion whose figure rests on too
 * few samples (a p95 on fewer than MIN_SAMPLES.p95, a rate on fewer than MIN_STORAGE_TRANSFERS, a hit rate on no
 * lookup, anything timed in trace mode) is listed with `actual` and `passed` null, and the overall
 * status is then INCOMPLETE unless a judged criterion failed.
 */
export function storageHealth(
  rec: RecorderSnapshot,
  profile: PerformanceProfile,
  elapsedSec: number,
  ctx: HealthContext = {},
): StorageHealth {
  const real = ctx.traceMode !== true;
  const criteria: HealthCriterion[] = [];
  const add = (
    name: string,
    target: number,
    unit: string,
    samples: number,
    enough: boolean,
    actual: number,
    pass: (v: number) => boolean,
  ): void => {
    const judged = enough && samples > 0;
    criteria.push({ name, target, actual: judged ? actual : null, unit, passed: judged ? pass(actual) : null, samples });
  };
  const p95 = (names: readonly string[], part: '' | '_device'): [samples: number, p95: number] => {
    const samples = real ? samplesOf(rec, names) : 0;
    return [samples, samples > 0 ? merged(rec, names, part).percentileMs(95) : 0];
  };
  if (profile === 'latency') {
    const [ws, w] = p95(STORAGE_VERDICT_HISTOGRAMS.write, '_device');
    add('Storage Tier Write Device P95 < 500ms', 500, 'ms', ws, ws >= MIN_SAMPLES.p95, w, (v) => v < 500);
    const [rs, r] = p95(STORAGE_VERDICT_HISTOGRAMS.read, '_device');
    add('Storage Tier Read Device P95 < 200ms', 200, 'ms', rs, rs >= MIN_SAMPLES.p95, r, (v) => v < 200);
    const cpuNames = ['cpu_read', 'cpu_write'];
    if (ctx.cpuTier === true || samplesOf(rec, cpuNames) > 0) {
      const [cs, c] = p95(cpuNames, '');
      add('CPU RAM P95 < 150ms', 150, 'ms', cs, cs >= MIN_SAMPLES.p95, c, (v) => v < 150);
    }
    const { cacheHits, cacheMisses } = rec.counters;
    add('Cache Hit Rate > 30%', 0.3, 'ratio', cacheHits + cacheMisses, true, cacheHitRate(rec), (v) => v > 0.3);
  } else {
    const st = rec.traffic.storage;
    const gibps = (b: number): number => (elapsedSec > 0 ? b / elapsedSec / GiB : 0);
    // Completed whole-entry transfers (timed operations), the same count the validity check uses.
    const reads = real ? samplesOf(rec, [...STORAGE_VERDICT_HISTOGRAMS.read, 'storage_demote_read']) : 0;
    const writes = real ? samplesOf(rec, STORAGE_VERDICT_HISTOGRAMS.write) : 0;
    add('Storage KV Read Bandwidth', 0, 'GiB/s', reads, reads >= MIN_STORAGE_TRANSFERS, gibps(kvReadBytes(st)), (v) => v > 0);
    add('Storage KV Write Bandwidth', 0, 'GiB/s', writes, writes >= MIN_STORAGE_TRANSFERS, gibps(kvWriteBytes(st)), (v) => v > 0);
  }
  const passed = criteria.filter((x) => x.passed === true).length;
  const failed = criteria.some((x) => x.passed === false);
  const unjudged = criteria.length === 0 || criteria.some((x) => x.passed === null);
  return {
    overall_status: failed ? 'FAIL' : unjudged ? 'INCOMPLETE' : 'PASS',
    criteria,
    passed_count: passed,
    total_count: criteria.length,
  };
}
