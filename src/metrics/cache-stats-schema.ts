// The shape of the `cache_stats` block (docs/reference-compat.md#rc-42) as a zod schema: the reference's fields, then ours.
// It lives beside its builder (cache-stats.ts), which returns the type inferred here; the results
// document's schema (report/results-schema.ts) embeds it. Per-tier names are generated from the tier
// list, so the key types are template literals the compiler checks at every read.
import * as z from 'zod';
import type { TierName } from '../tiers/backend.js';

export const TIERS = ['gpu', 'cpu', 'storage'] as const satisfies readonly TierName[];

/** The percentiles of a `<name>_<pNN>_ms` field family, in output order. */
export const PERCENTILES = [
  ['p50', 50],
  ['p95', 95],
  ['p99', 99],
  ['p999', 99.9],
  ['p9999', 99.99],
] as const;
export type PercentileName = (typeof PERCENTILES)[number][0];

/** Histograms whose percentiles are exported: placement/hit (read, write) and demotion traffic per tier. */
export type TierLatencyName = `${TierName}_${'read' | 'write' | 'demote_read' | 'demote_write'}`;
/** The storage tier's device and host parts of placement writes and hit reads. */
export type StoragePartName = `storage_${'read' | 'write'}_${'device' | 'host'}`;

/** `{ k: schema(k) }` for every key, with the keys' literal types kept. */
export function shapeOf<const K extends string, S extends z.ZodType>(keys: readonly K[], schema: (key: K) => S): Record<K, S> {
  return Object.fromEntries(keys.map((k) => [k, schema(k)])) as Record<K, S>;
}

const tierKeys = <const S extends string>(suffix: S): Array<`tier_${TierName}_${S}`> => TIERS.map((t) => `tier_${t}_${suffix}` as const);
const percentileKeys = <const N extends string>(names: readonly N[]): Array<`${N}_${PercentileName}_ms`> =>
  names.flatMap((n) => PERCENTILES.map(([p]) => `${n}_${p}_ms` as const));

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const gib = (what: string): z.ZodNumber => z.number().nonnegative().describe(`${what} (GiB, 2^30 bytes)`);

export const HealthCriterionSchema = z.strictObject({
  name: z.string(),
  target: z.number(),
  actual: z.number().nullable().describe('the measured figure; null when it has too few samples to judge (see samples)'),
  unit: z.string().describe("'ms', 'ratio' or 'GiB/s'"),
  passed: z.boolean().nullable().describe('null when actual is null: no verdict without samples'),
  samples: count(
    'samples of real I/O behind actual: latency samples (a p95 needs 20), cache lookups, or completed storage transfers (0 in trace mode)',
  ),
});
export type HealthCriterion = z.output<typeof HealthCriterionSchema>;

export const StorageHealthSchema = z
  .strictObject({
    overall_status: z
      .enum(['PASS', 'FAIL', 'INCOMPLETE'])
      .describe('FAIL when a judged criterion failed, else INCOMPLETE when one could not be judged (passed null), else PASS'),
    criteria: z.array(HealthCriterionSchema),
    passed_count: z.number().int().nonnegative(),
    total_count: z.number().int().nonnegative(),
  })
  .describe("The reference's PASS/FAIL verdict on whole-entry latencies, plus INCOMPLETE: never PASS without samples");
export type StorageHealth = z.output<typeof StorageHealthSchema>;

/** Latency percentiles (ms) of one histogram; present only when it has samples. */
const percentileShape = <const N extends string>(names: readonly N[], what: string) =>
  shapeOf(percentileKeys(names), (k) =>
    z
      .number()
      .nonnegative()
      .optional()
      .describe(`${what}: ${k.replace(/_ms$/, '')} (ms); absent without samples`),
  );

const TIER_LATENCY_NAMES = TIERS.flatMap((t) => (['read', 'write'] as const).map((op) => `${t}_${op}` as const));
const TIER_DEMOTE_NAMES = TIERS.flatMap((t) => (['demote_read', 'demote_write'] as const).map((op) => `${t}_${op}` as const));
const STORAGE_PART_NAMES = (['read', 'write'] as const).flatMap((op) =>
  (['device', 'host'] as const).map((part) => `storage_${op}_${part}` as const),
);

export const CacheStatsSchema = z
  .strictObject({
    cache_hit_rate: z.number().min(0).max(1).describe('hits ÷ (hits + misses)'),
    cache_hits: count('cache lookups that found the entry'),
    cache_misses: count('cache lookups that did not'),
    gpu_entries: count('entries in the GPU tier at the end'),
    cpu_entries: count('entries in the CPU tier at the end'),
    storage_entries: count('entries in the storage tier at the end'),
    gpu_memory_used_gb: gib('GPU tier occupancy at the end'),
    cpu_memory_used_gb: gib('CPU tier occupancy at the end'),
    offloads_cpu: count('entries placed in the CPU tier'),
    offloads_storage: count('entries placed in the storage tier'),
    storage_health: StorageHealthSchema,
    prefill_writes: count('prefill writes'),
    decode_reads: count('decode reads'),
    ...shapeOf(tierKeys('kv_bytes_written_gb'), (k) => gib(`${k}: placement writes plus demotions into the tier`)),
    ...shapeOf(tierKeys('kv_bytes_read_gb'), (k) => gib(`${k}: hit reads plus demotions out of the tier`)),
    ...shapeOf(tierKeys('read_bandwidth_gbps'), () => z.number().nonnegative().describe('kv bytes read ÷ measured window (GiB/s)')),
    ...shapeOf(tierKeys('write_bandwidth_gbps'), () => z.number().nonnegative().describe('kv bytes written ÷ measured window (GiB/s)')),
    system_prompt_hits: count('hits on shared system-prompt entries'),
    common_phrase_hits: count('hits on common-phrase entries'),
    user_cache_hits: count("hits on a user's own entries"),
    multi_turn_hits: count('hits on earlier turns of a conversation'),
    total_read_bytes: count('bytes read by hits (bytes)'),
    total_write_bytes: count('bytes written by placements (bytes)'),
    total_read_gb: gib('total_read_bytes'),
    total_write_gb: gib('total_write_bytes'),
    read_write_ratio: z.number().nonnegative().describe('total_read_bytes ÷ max(total_write_bytes, 1)'),
    read_iops: count("read operations: a COUNT, not a rate (the reference's name)"),
    write_iops: count("write operations: a COUNT, not a rate (the reference's name)"),
    storage_tokens_processed: z
      .number()
      .nonnegative()
      .describe('logical tokens written to, demoted to or read from storage (fractional after tensor-parallel division)'),
    ...percentileShape(TIER_LATENCY_NAMES, 'placement-write or hit-read latency of the tier'),
    ...percentileShape(STORAGE_PART_NAMES, 'device or host part of a storage-tier operation'),
    // Ours (docs/reference-compat.md#rc-42, additions): exact bytes per kind of traffic, wall-clock rates, occupancy.
    evictions: count('every demotion and every last-tier deletion'),
    measured_window_sec: z.number().nonnegative().describe('the denominator of every rate (s)'),
    ...shapeOf(tierKeys('placement_write_bytes'), () => count('bytes of new entries placed in the tier')),
    ...shapeOf(tierKeys('placement_write_ops'), () => count('new entries placed in the tier')),
    ...shapeOf(tierKeys('hit_read_bytes'), () => count('bytes of cache hits served by the tier')),
    ...shapeOf(tierKeys('hit_read_ops'), () => count('cache hits served by the tier')),
    ...shapeOf(tierKeys('demote_in_bytes'), () => count('bytes demoted into the tier')),
    ...shapeOf(tierKeys('demote_in_ops'), () => count('entries demoted into the tier')),
    ...shapeOf(tierKeys('demote_out_bytes'), () => count('bytes demoted out of the tier')),
    ...shapeOf(tierKeys('demote_out_ops'), () => count('entries demoted out of the tier')),
    ...shapeOf(tierKeys('evict_delete_bytes'), () => count('bytes deleted by eviction')),
    ...shapeOf(tierKeys('evict_delete_ops'), () => count('entries deleted by eviction')),
    ...shapeOf(tierKeys('explicit_delete_ops'), () => count('entries deleted on request')),
    ...shapeOf(tierKeys('failed_ops'), () => count('backend operations that failed')),
    ...shapeOf(tierKeys('aborted_ops'), () => count('operations cut short by the end of the run')),
    ...shapeOf(tierKeys('read_bytes_per_sec'), () => z.number().nonnegative().describe('kv bytes read ÷ measured window (bytes/s)')),
    ...shapeOf(tierKeys('write_bytes_per_sec'), () => z.number().nonnegative().describe('kv bytes written ÷ measured window (bytes/s)')),
    ...shapeOf(tierKeys('used_bytes'), () => count('occupancy at the end (bytes)')),
    ...shapeOf(tierKeys('limit_bytes'), () =>
      z.number().nonnegative().nullable().describe('capacity (bytes); null when unlimited, 0 when the tier is absent'),
    ),
    ...percentileShape(TIER_DEMOTE_NAMES, 'demotion read or write latency of the tier'),
  })
  .describe("The reference's cache_stats (GiB = 2^30; bandwidths over the measured window), then ours");
export type CacheStats = z.output<typeof CacheStatsSchema>;
