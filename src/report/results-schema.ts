// The one source of the results documents' shape: zod schemas of the run results JSON (the
// reference's fields, then our `kvcache_bench` block) and of the replay results JSON. Builders return
// the inferred types, readers (console, spreadsheet, bench scripts) read typed fields, and the JSON
// Schema that `kv-cache schema` publishes is generated from here, never written by hand.
import * as z from 'zod';
import { CacheStatsSchema } from '../metrics/cache-stats-schema.js';
import { KvPoolSchema } from './kv-pool-schema.js';
import { KvBlocksSchema } from './kv-blocks-schema.js';
import { CpuSecondsSchema } from './cpu-seconds-schema.js';
import { MetadataOpsSchema } from './metadata-ops-schema.js';
import { MetadataCalibrationSchema } from './metadata-calibration-schema.js';
import { SlabSchema } from './slab-schema.js';
import { FAILURE_CLASSES } from '../metrics/recorder.js';
import { DeviceLatencyTracingSchema, LatencyTracingSchema } from './tracing-schema.js'; // block-layer tracing (issue 13)
import { TtftModelledSchema } from './ttft-schema.js'; // the modelled time to first token (issue 23)
import { ObjectStoreSchema } from './object-store-schema.js'; // the S3 tier (issue 25)
import { LatencyBlockSchema, SummarySchema, TimelinePointSchema } from './summary-schema.js';
import { MachineSchema } from './machine-schema.js';
import { StopReasonSchema, TrialsSchema } from './trials-schema.js';
import { ValidationSchema } from './validation-schema.js';
import { DeviceTelemetrySchema, TimelineSchema } from './timeline-schema.js';
import { FileIoSchema, PayloadGenerationSchema } from './harness-schema.js';
import { RanksSchema } from './ranks-schema.js';
import { bytes, count, rate } from './schema-units.js';

// Each large block has its own file; every name they export stays importable from here.
export * from './summary-schema.js';
export * from './machine-schema.js';
export * from './trials-schema.js';
export * from './validation-schema.js';
export * from './timeline-schema.js';
export * from './object-store-schema.js';
export * from './harness-schema.js';
export * from './ranks-schema.js';

/**
 * Version of the documents' shape. Bump the minor for an added field, the major for a renamed or
 * removed field or a changed meaning.
 */
export const SCHEMA_VERSION = '2.10.0';

/** Device counters shared by runs and replays. */
const DeviceIoBase = {
  device: z.string().describe('kernel name of the block device, e.g. nvme0n1'),
  read_bytes: bytes('read from the device'),
  written_bytes: bytes('written to the device'),
  read_bytes_per_sec: rate('device read bytes', 'bytes/s'),
  write_bytes_per_sec: rate('device write bytes', 'bytes/s'),
};
export const ReplayDeviceIoSchema = z.strictObject(DeviceIoBase);
export const DeviceIoSchema = z.strictObject({
  ...DeviceIoBase,
  read_ops: count('read operations the device completed'),
  write_ops: count('write operations the device completed'),
  note: z.string(),
});
export type DeviceIo = z.output<typeof DeviceIoSchema>;

export const WorkloadSourceSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('synthetic') }),
  z.strictObject({
    kind: z.literal('sharegpt'),
    path: z.string(),
    tokenizer: z.string().describe("'cl100k_base' or 'chars'"),
    records: count('records read'),
    conversationsLoaded: count('conversations with at least one turn'),
    turns: count('turns loaded'),
    skippedPairs: count('message pairs that were not (human, assistant)'),
    skippedRecords: count('records that gave no turn'),
  }),
  z.strictObject({
    kind: z.literal('burstgpt'),
    files: z.array(z.string()),
    rows: count('valid rows read (first pass)'),
    skipped_rows: count('unparsable rows skipped'),
    skipped_examples: z
      .array(z.strictObject({ file: z.string(), line: z.number().int().positive(), reason: z.string() }))
      .describe('the first five skipped rows'),
  }),
  // Missing before 2.7.0, so a Mooncake run's results file did not parse for merge, report or compare.
  z.strictObject({
    kind: z.literal('mooncake'),
    path: z.string(),
    compressed: z.boolean().describe('read through zstd'),
    block_tokens: count('tokens per KV block of the run'),
    trace_block_tokens: count('tokens one hash id of the trace covers'),
    records: count('usable records read (first pass)'),
    skipped_lines: count('lines skipped as unusable'),
    skipped_examples: z
      .array(z.strictObject({ line: z.number().int().positive(), reason: z.string() }))
      .describe('the first five skipped lines'),
  }),
]);
export type WorkloadSourceJson = z.output<typeof WorkloadSourceSchema>;

const JsonRecord = z.record(z.string(), z.json());
export const EffectiveConfigSchema = z
  .strictObject({
    args: JsonRecord.describe('every flag in force, snake_case'),
    model: JsonRecord.describe('the resolved model configuration'),
    config: JsonRecord.describe('the --config file after defaults, snake_case'),
  })
  .describe('The whole effective configuration');
export type EffectiveConfig = z.output<typeof EffectiveConfigSchema>;

const HistogramSchema = z.strictObject({
  encoded: z.string().describe('compressed base64 HdrHistogram, microsecond values'),
  count: count('samples'),
  sum_ms: z.number().nonnegative().describe('exact sum of the samples (ms)'),
});

const ValidityFindingSchema = z.strictObject({
  code: z.string().describe('stable snake_case identifier, e.g. device_reads_exceed_tool'),
  message: z.string().describe('what happened and what to do'),
});

/** Fields the run and replay `kvcache_bench` blocks share, in output order. */
const ToolFields = {
  tool: z.literal('kvcache-bench'),
  version: z.string().describe('kvcache-bench version'),
  schema_version: z.literal(SCHEMA_VERSION).describe('version of this document shape'),
};

export const KvcacheBenchSchema = z
  .strictObject({
    ...ToolFields,
    started_at: z.iso.datetime().describe('start of the measured window (ISO 8601, UTC)'),
    stop_reason: StopReasonSchema,
    interrupted: z.boolean(),
    measured_window_sec: z
      .number()
      .nonnegative()
      .describe('from the first issued request to the last completed I/O: the denominator of every rate (s)'),
    nominal_duration_sec: z.number().positive().describe('--duration (s)'),
    requests_aborted_at_stop: count('requests cut short by the end of the run'),
    workers: count('concurrent request workers'),
    model: z.string(),
    kv_bytes_per_token: count('KV-cache bytes per token of the model'),
    queue_wait_ms: LatencyBlockSchema,
    prefill_latency_ms: LatencyBlockSchema,
    decode_latency_ms: LatencyBlockSchema,
    storage_bytes: z
      .strictObject({
        read_bytes: bytes('storage tier kv bytes read'),
        written_bytes: bytes('storage tier kv bytes written'),
        read_bytes_per_sec: rate('read_bytes', 'bytes/s'),
        write_bytes_per_sec: rate('written_bytes', 'bytes/s'),
        read_gib_per_sec: rate('read_bytes', 'GiB/s'),
        write_gib_per_sec: rate('written_bytes', 'GiB/s'),
      })
      .describe("What the tool's storage tier moved, incl. demotions"),
    device_io: DeviceIoSchema.nullable().describe(
      '/proc/diskstats of the cache dir device over the measured window (whole-device counters); null when not resolvable',
    ),
    workload_source: WorkloadSourceSchema,
    storage_dir: z.string(),
    storage_io_mode: z.string().describe("'direct', 'buffered' or 'none (trace mode)'"),
    storage_layout: z
      .enum(['flat', 'fanout', 'slab'])
      .optional()
      .describe("the file tier's --kv-layout in effect ('fanout' for a shared pool); absent for other backends and before schema 2.8.0"),
    storage_file_calls: z
      .string()
      .optional()
      .describe(
        "how the file tier made the system calls of entries of one chunk (--file-calls): 'native io_uring: …' or 'native threads: …' one job of the C helper per file, its calls handed to the kernel through io_uring by one thread or made on the helper's threads (and why not io_uring), each call timed where it is made, or 'fs: …' one per call (and why); absent for other backends and before schema 2.9.0",
      ),
    storage_file_system: z.string(),
    event_loop_delay_ms: z
      .strictObject({ mean: z.number(), p50: z.number(), p99: z.number(), max: z.number() })
      .describe("the harness's own stalls (ms)"),
    conversations_lost_to_limit: count('conversations dropped by the live-conversation limit'),
    entry_sizes: z
      .strictObject({
        count: count('live entries at the end'),
        minBytes: bytes('smallest'),
        meanBytes: z.number().nonnegative().describe('mean (bytes)'),
        p95Bytes: bytes('95th percentile'),
        maxBytes: bytes('largest'),
      })
      .describe('Sizes of the entries live at the end of the run'),
    warnings: z.array(z.string()),
    // Failure accounting, hard capacity, stale entries (issue 11).
    failed_operations: z
      .array(
        z.strictObject({
          tier: z.enum(['gpu', 'cpu', 'storage']),
          operation: z.enum(['placement_write', 'hit_read', 'demote_read', 'demote_write', 'delete']),
          error: z.enum(FAILURE_CLASSES),
          count: count('failed operations of this tier, operation and error'),
        }),
      )
      .describe('Failed tier operations (they moved no bytes and count in no other figure); also summed in tier_<t>_failed_ops'),
    refused_allocations: z
      .strictObject({ count: count('new entries refused'), bytes: bytes('their sizes') })
      .describe('New entries that fit in no tier within its limit: not written, not counted as writes'),
    stale_entries: z
      .strictObject({
        count: count('entry files of other runs (kvc-<run id>-*.bin) found in the cache dir at start'),
        bytes: bytes('their apparent sizes'),
        allocated_bytes: bytes('what they occupy on the device (st_blocks × 512)'),
        removed: count('of them removed (--remove-stale-entries)'),
      })
      .nullable()
      .describe('Leftovers of earlier (e.g. killed) runs; null in trace mode'),
    storage_capacity: z
      .strictObject({
        limit_bytes: bytes('the storage tier limit (--storage-capacity-gb, else 95 % of the free space at start)').nullable(),
        peak_allocated_bytes: bytes('the most the tier held at once, entries being written included, in whole file-system blocks'),
      })
      .nullable()
      .describe('The hard storage limit and the peak against it; null in trace mode'),
    object_store: ObjectStoreSchema.optional(),
    effective_config: EffectiveConfigSchema,
    machine: MachineSchema,
    latency_histograms: z.record(z.string(), HistogramSchema).describe('Every latency distribution with samples, by name'),
    trials: TrialsSchema.optional(),
    // The per-second series (always written by this version; absent in files of older versions).
    timeline: TimelineSchema.optional(),
    device_telemetry: DeviceTelemetrySchema.nullable()
      .optional()
      .describe("null when the cache dir's block device cannot be resolved (the reason is in warnings) and in trace mode"),
    // Validity (README "Validity"): is this run a measurement of the storage under the cache dir?
    main_thread_busy_fraction: z
      .number()
      .min(0)
      .max(1)
      .describe("share of the measured window the harness's main thread was busy (event-loop utilisation, 0–1)"),
    payload_generation: PayloadGenerationSchema.optional().describe(
      'the payload generator over the measured window; absent in trace mode and before schema 2.3.0',
    ),
    file_io: FileIoSchema.optional().describe(
      "the file tier's use of libuv's threadpool and of its staging buffers over the measured window; absent for other storage kinds, in trace mode and before schema 2.5.0",
    ),
    kv_blocks: KvBlocksSchema.optional(),
    kv_pool: KvPoolSchema.optional(),
    cpu_seconds: CpuSecondsSchema.optional(), // the harness's CPU over the window (issue 34)
    metadata_calibration: MetadataCalibrationSchema.optional(), // the file system's bytes per new file (issue 34)
    slab: SlabSchema.optional(), // --kv-layout slab (issue 34)
    metadata_ops: MetadataOpsSchema.optional(), // the storage tier's creates, renames, links, unlinks, lookups, mkdirs (issue 34)
    validity: z
      .strictObject({
        valid: z.boolean().describe('true when no reason below applies'),
        reasons: z.array(ValidityFindingSchema).describe('why the run is NOT VALID as a storage measurement; empty when valid'),
        warnings: z.array(ValidityFindingSchema).describe('worth knowing; does not invalidate'),
      })
      .describe('The validity verdict; the console prints VALID or NOT VALID: <codes> last'),
    // Ranks of a multi-process run (issue 14; README "MLPerf submission runs").
    ranks: RanksSchema.nullable()
      .optional()
      .describe('Present (non-null) when this run was one rank of a launcher (mpirun, srun, Kubernetes indexed job)'),
    latency_tracing: LatencyTracingSchema.optional(), // block-layer tracing (issue 13)
    ttft_modelled: TtftModelledSchema.optional(), // modelled TTFT (issue 23): absent with --gpu-profile none and before schema 2.4.0
  })
  .describe('kvcache-bench additions (new names, never a changed meaning)');
export type KvcacheBench = z.output<typeof KvcacheBenchSchema>;

const SecondsList = z.array(z.number().nonnegative()).optional().describe('per-request latencies (s); only with --keep-latency-samples');

export const ResultsSchema = z
  .strictObject({
    requests_completed: count('completed requests'),
    total_tokens_generated: count('generated tokens'),
    total_storage_io_latency: z.number().nonnegative().describe('sum of per-request storage I/O time (s)'),
    total_generation_latency: z.number().nonnegative().describe('sum of per-request generation time (s)'),
    end_to_end_latencies: SecondsList,
    storage_latencies: SecondsList,
    generation_latencies: SecondsList,
    throughput_timeline: z.array(TimelinePointSchema).describe('one point per autoscaler sample'),
    multi_turn_cache_hits: count('earlier turns found in the cache'),
    multi_turn_cache_misses: count('earlier turns not found'),
    seed: z.number().int(),
    summary: SummarySchema,
    kvcache_bench: KvcacheBenchSchema,
    validation: ValidationSchema.optional(),
    // Block-layer tracing (issue 13): the reference's root keys, present when tracing ran.
    device_latency_tracing: DeviceLatencyTracingSchema.optional(),
    fio_workload: z.string().optional().describe('the distilled fio job file (ini text); also written as fio_kv_cache_workload_<ts>.ini'),
  })
  .meta({
    title: 'kvcache-bench results',
    description: `Results of a kv-cache run (schema ${SCHEMA_VERSION}). Every _gb / _gbps field is GiB / GiB/s (2^30).`,
  });
export type ResultsDocument = z.output<typeof ResultsSchema>;

export const ReplayResultsSchema = z
  .strictObject({
    replay: z.strictObject({
      trace: z.string(),
      rows: count('trace rows read'),
      writes: count('writes replayed'),
      reads: count('reads replayed'),
      deletes: count('deletes replayed'),
      write_bytes: bytes('written'),
      read_bytes: bytes('read'),
      skipped_other_tier_rows: count('rows of other tiers, not replayed'),
      missing_keys: count('reads or deletes of keys never written'),
      concurrency: count('operations in flight'),
      paced: z.boolean(),
      all_tiers: z.boolean(),
    }),
    elapsed_time: z.number().nonnegative().describe('the measured window (s)'),
    summary: z.strictObject({ cache_stats: CacheStatsSchema }),
    kvcache_bench: z.strictObject({
      ...ToolFields,
      // How the replay ended (issue 12): its stop, the limit it ran under, what the stop cut short.
      stop_reason: z
        .enum(['workload_complete', 'duration', 'interrupted', 'failed'])
        .describe(
          'workload_complete: the whole trace was replayed; duration: --duration ran out; interrupted: SIGINT/SIGTERM; failed: an error',
        ),
      interrupted: z.boolean(),
      duration_limit_sec: z.number().positive().nullable().describe('--duration (s); null: until the end of the trace'),
      operations_aborted_at_stop: count('operations cut short by the stop: not counted as replayed, their bytes not counted'),
      hashed_keys: count('distinct keys too long for a file name, stored under a SHA-256 name'),
      measured_window_sec: z.number().nonnegative(),
      storage_dir: z.string(),
      storage_io_mode: z.string(),
      storage_file_system: z.string(),
      device_io: ReplayDeviceIoSchema.nullable(),
      machine: MachineSchema,
      object_store: ObjectStoreSchema.optional().describe(
        'the S3 tier of --storage-backend s3 (absent for other kinds and before schema 2.7.0)',
      ),
      metadata_ops: MetadataOpsSchema.optional().describe(
        "the storage backend's metadata calls over the replay (docs/storage-io.md#the-metadata-bill); absent before schema 2.8.0",
      ),
    }),
  })
  .meta({ title: 'kvcache-bench replay results', description: `Results of kv-cache replay (schema ${SCHEMA_VERSION})` });
export type ReplayResultsDocument = z.output<typeof ReplayResultsSchema>;

export type SchemaName = 'run' | 'replay';

/** The published JSON Schema (draft 2020-12) of a results document, generated from the zod schema. */
export function resultsJsonSchema(which: SchemaName = 'run'): Record<string, unknown> {
  return z.toJSONSchema(which === 'run' ? ResultsSchema : ReplayResultsSchema, { target: 'draft-2020-12' });
}

/** A results file's text, checked against the schema (readers of saved results, e.g. bench scripts). */
export function parseResults(text: string): ResultsDocument {
  return ResultsSchema.parse(JSON.parse(text));
}
