// What `kv-cache report` and `kv-cache compare` read from the merged summary of an MLPerf run
// (kvcache_run_summary_<time>.json, written by `kv-cache mlperf` and `kv-cache merge`). Its shape is
// declared by src/mlperf/merge.ts (`RunSummary`), a layer the reports may not import; this schema
// names only the fields the reports show, lenient like the others, and
// test/report/html/summary-input.test.ts parses a real merge's output with it so the two cannot drift.
// Each option of the summary is one entry of a report or a comparison: all its ranks as one system.
import * as z from 'zod';
import { lenient } from './timeline-contract.js';
import { METADATA_OPS } from '../../metrics/metadata-stats.js';
import type { MetadataOp } from '../../metrics/metadata-stats.js';

/** The summary version this build reads (mlperf/merge.ts SUMMARY_SCHEMA_VERSION; a test holds them equal). */
export const SUMMARY_VERSION_READ = '1.1.0';

const Pooled = z.object({
  count: z.number().int().nonnegative(),
  p50_ms: z.number().nullable(),
  p95_ms: z.number().nullable(),
  p99_ms: z.number().nullable(),
});

/** Each class of a merged metadata_ops block (mlperf/merge-metadata.ts). */
const MergedMetadataOp = z.object({
  count: z.number().int().nonnegative(),
  per_second: z.number(),
  per_gib_moved: z.number().nullable(),
  latency: Pooled,
});
const MergedMetadataOps = Object.fromEntries(METADATA_OPS.map((op) => [op, MergedMetadataOp])) as Readonly<
  Record<MetadataOp, typeof MergedMetadataOp>
>;

const RankRowSchema = z.object({
  trial: z.number().int(),
  rank: z.number().int(),
  host: z.string(),
  file: z.string(),
  stop_reason: z.string(),
  valid_in_run: z.boolean(),
  validity_reasons: z.array(z.string()),
  storage_read_bytes: z.number(),
  storage_written_bytes: z.number(),
  measured_window_sec: z.number(),
  start_skew_ms: z.number().nullable(),
  storage_read_device_p95_ms: z.number(),
  storage_write_device_p95_ms: z.number(),
});

/**
 * A host's device in a trial against all its ranks' bytes (mlperf/merge.ts HostDevice). The first
 * 1.0.0 summaries had the device's bytes alone; metadata_write_bytes came with 1.1.0.
 */
const HostDeviceSchema = z.object({
  host: z.string(),
  device: z.string(),
  ranks: z.array(z.number().int()),
  read_bytes: z.number(),
  written_bytes: z.number(),
  tool_read_bytes: z.number().optional(),
  tool_written_bytes: z.number().optional(),
  metadata_write_bytes: z.number().nullable().optional(),
  bytes_check: z.string().optional(),
});
export type MergedHostDevice = z.output<typeof HostDeviceSchema>;

export const MergedOptionSchema = z.object({
  aggregated_read_bandwidth_gbps: z.number(),
  aggregated_write_bandwidth_gbps: z.number(),
  aggregated_avg_throughput_tokens_per_sec: z.number(),
  aggregated_storage_throughput_tokens_per_sec: z.number(),
  aggregated_device_read_p95_ms: z.number(),
  aggregated_device_write_p95_ms: z.number(),
  rank_count: z.number().int().nonnegative(),
  trial_count: z.number().int().nonnegative(),
  missing_files: z.array(z.string()),
  kvcache_bench: z.object({
    storage_read_bytes_per_sec: z.number(),
    storage_write_bytes_per_sec: z.number(),
    storage_read_gib_per_sec: z.number(),
    storage_write_gib_per_sec: z.number(),
    device_read_bytes_per_sec: z.number().nullable(),
    device_write_bytes_per_sec: z.number().nullable(),
    storage_read_device_latency: Pooled,
    storage_write_device_latency: Pooled,
    max_start_spread_ms: z.number().nullable(),
    all_ranks_valid: z.boolean(),
    trials: z.array(z.object({ trial: z.number().int(), device_per_host: z.array(HostDeviceSchema) })),
    rank_table: z.array(RankRowSchema),
    kv_pool: z
      .object({
        pool: z.string(),
        route: z.string(),
        ranks: z.number().int().nonnegative(),
        token_hit_rate: z.number(),
        trace_ideal_token_hit_rate: z.number().nullable(),
        cross_rank_hit_share: z.number().nullable(),
        lookups: z.object({ count: z.number().int().nonnegative(), per_sec: z.number(), latency: Pooled }).nullable(),
      })
      .nullable()
      .optional(), // summaries before issue 32 have none
    metadata_ops: z
      .object({
        ranks: z.number().int().nonnegative(),
        total: z.number().int().nonnegative(),
        per_second: z.number(),
        per_gib_moved: z.number().nullable(),
        ...MergedMetadataOps,
      })
      .nullable()
      .optional(), // summaries before issue 34 have none
  }),
});
export type MergedOption = z.output<typeof MergedOptionSchema>;

export const ReportSummarySchema = lenient(
  z.object({
    schema_version: z.string(),
    run_datetime: z.string(),
    host_count: z.number().int().nonnegative(),
    total_ranks: z.number().int().nonnegative(),
    trials_per_option: z.number().int().nonnegative(),
    partial_failure: z.boolean(),
    options: z.record(z.string(), MergedOptionSchema),
    kvcache_bench: z.object({
      tool: z.literal('kvcache-bench'),
      division: z.string().nullable(),
      system_name: z.string().nullable(),
    }),
  }),
);
export type ReportSummary = z.output<typeof ReportSummarySchema>;

/**
 * Which of `kv-cache mlperf`'s own files a parsed JSON value is, judged before any schema to word the
 * answer: its merged summary (options by id, the tool's block) or its plan manifest (run.json: the
 * option list and the ranks, no results), else undefined.
 */
export function mlperfFileKind(raw: unknown): 'summary' | 'manifest' | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  if (!('total_ranks' in o) || 'summary' in o || typeof o.options !== 'object' || o.options === null) return undefined;
  if (Array.isArray(o.options)) return 'manifest';
  return typeof o.kvcache_bench === 'object' ? 'summary' : undefined;
}

/** The refusal of an mlperf manifest: what it is and which files to give instead. */
export const MANIFEST_PROBLEM =
  'the plan manifest of a kv-cache mlperf run (run.json): it holds no results; give its kvcache_run_summary_*.json or its rank files (option_*/trial_*/rank_*/*.json)';

/** Why this build cannot read a summary of `version`, or undefined when it can (the summary has its own version line). */
export function summaryVersionProblem(version: string): string | undefined {
  const major = (v: string): string | undefined => /^(\d+)\.\d+\.\d+$/.exec(v)?.[1];
  const theirs = major(version);
  if (theirs === undefined) return `schema_version '${version}' is not a version (expected MAJOR.MINOR.PATCH)`;
  return theirs === major(SUMMARY_VERSION_READ)
    ? undefined
    : `summary schema_version ${version} has another major version; this kvcache-bench reads merged summaries ${SUMMARY_VERSION_READ}`;
}
