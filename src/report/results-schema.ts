// The one source of the results documents' shape: zod schemas of the run results JSON (the
// reference's fields, then our `kvcache_bench` block) and of the replay results JSON. Builders return
// the inferred types, readers (console, spreadsheet, bench scripts) read typed fields, and the JSON
// Schema that `kv-cache schema` publishes is generated from here, never written by hand.
import * as z from 'zod';
import { CacheStatsSchema } from '../metrics/cache-stats-schema.js';
import { KvPoolSchema } from './kv-pool-schema.js';
import { KvBlocksSchema } from './kv-blocks-schema.js';
import { CpuSecondsSchema } from './cpu-seconds-schema.js';
import { SlabSchema } from './slab-schema.js';
import { FAILURE_CLASSES } from '../metrics/recorder.js';
import { DeviceLatencyTracingSchema, LatencyTracingSchema } from './tracing-schema.js'; // block-layer tracing (issue 13)
import { TtftModelledSchema } from './ttft-schema.js'; // the modelled time to first token (issue 23)

/**
 * Version of the documents' shape. Bump the minor for an added field, the major for a renamed or
 * removed field or a changed meaning.
 */
export const SCHEMA_VERSION = '2.7.0';

const ms = (what: string): z.ZodNumber => z.number().nonnegative().describe(`${what} (ms)`);
const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const bytes = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(`${what} (bytes)`);
const rate = (what: string, unit: string): z.ZodNumber => z.number().nonnegative().describe(`${what} over the measured window (${unit})`);

export const LatencyBlockSchema = z
  .strictObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number(), p999: z.number(), p9999: z.number() })
  .describe('Latency distribution summary (ms)');
export type LatencyBlock = z.output<typeof LatencyBlockSchema>;

/** One operation's times of an object store (kvcache_bench.object_store). */
const ObjectStoreLatencySchema = z.strictObject({
  count: count('operations'),
  mean_ms: ms('mean'),
  p50_ms: ms('median'),
  p95_ms: ms('95th percentile'),
  p99_ms: ms('99th percentile'),
  max_ms: ms('largest'),
});

/** The S3 storage tier's own account (issue 25); absent for the other kinds. */
const ObjectStoreSchema = z
  .strictObject({
    endpoint_host: z.string().describe('host[:port] of the endpoint only (no path, no credentials)'),
    bucket: z.string(),
    prefix: z.string().describe("key prefix of the run's objects (kvc-<run id>-*.bin under it)"),
    region: z.string().describe('signing region'),
    addressing: z.enum(['path', 'virtual-host']),
    client: z.string().describe('the HTTP client and signer'),
    max_connections: count('requests in flight at most (keep-alive sockets)'),
    idle_timeout_ms: ms('a request whose socket is silent this long fails (ETIMEDOUT)'),
    max_attempts: count('tries per request, the first included (5xx, 503 SlowDown and connection failures are retried)'),
    multipart_above_bytes: count('entries above this size are multipart uploads'),
    part_bytes: count('multipart part size'),
    requests: count('HTTP requests sent, retries included'),
    retries: count('of them retries (their time is inside the operation that retried)'),
    puts: count('entries uploaded'),
    multipart_uploads: count('of them as multipart uploads'),
    gets: count('entries downloaded whole'),
    deletes: count('objects deleted'),
    failures: z
      .record(z.string(), count('failed operations'))
      .describe('failed operations by class (HTTP_403, HTTP_404, HTTP_5XX, SLOWDOWN, ECONNRESET, ECONNREFUSED, ETIMEDOUT, EDQUOT, …)'),
    get_first_byte_ms: ObjectStoreLatencySchema.describe('GET: request start to the response headers (time to first byte)'),
    put_ms: ObjectStoreLatencySchema.describe('PUT: request start to the answer, payload waits excluded'),
  })
  .describe(
    "The object store's view from the client: requests, retries, failures by class and time to first byte. Storage latencies split host = request signing, device = the HTTP requests (every attempt and back-off)",
  );

const QosClassSchema = z.union([
  z.strictObject({ no_data: z.literal(true) }).describe('The class saw no request'),
  z.strictObject({
    total_requests: count('completed requests of the class'),
    latency_ms: z
      .strictObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number(), max: z.number() })
      .describe('end-to-end latency (ms)'),
    sla: z.strictObject({
      target_p95_ms: ms('the class target p95'),
      actual_p95_ms: ms('measured p95'),
      compliance: z.number().min(0).max(1).describe('share of requests within the target'),
      met: z.boolean().describe('compliance ≥ 0.95'),
    }),
    violations: count('requests over the target'),
  }),
]);

const PrefixCacheStatsSchema = z.union([
  z.strictObject({}).describe('Prefix caching disabled'),
  z.strictObject({
    prefix_hits: count('requests whose prefix was cached'),
    prefix_misses: count('requests whose prefix was not'),
    system_prompt_reuse: count('system-prompt reuses'),
    common_phrase_reuse: count('common-phrase reuses'),
    bytes_saved: z.number().nonnegative().describe('prefix bytes not written again (bytes)'),
  }),
]);

const ScaleEventSchema = z.strictObject({
  timestamp: z.number().describe('seconds since the measured phase started'),
  mode: z.enum(['qos', 'capacity']),
  action: z.enum(['scale_up', 'scale_down', 'hold', 'cooldown', 'stop']),
  users: count('users after the decision'),
  // Issue 15: both user counts explicitly (the timeline's `users` is the count during the sample).
  users_during: count('users in force while the sample was taken: the load that produced its figures'),
  users_after: count('users from this decision on (= users)'),
  saturation_level: z.number(),
  read_latency_p95_ms: ms('windowed storage read p95'),
  write_latency_p95_ms: ms('windowed storage write p95'),
  throughput_tokens_per_sec: z.number().nonnegative(),
  peak_throughput_tokens_per_sec: z.number().nonnegative().optional().describe('capacity mode only'),
});

const AutoscalingSummarySchema = z.strictObject({
  initial_users: count('users at start'),
  final_users: count('users at the end'),
  total_scale_events: count('scale-ups and scale-downs'),
  peak_user_count: count('users at the throughput peak (capacity mode only)').optional(),
  peak_throughput_tokens_per_sec: z.number().nonnegative().optional().describe('capacity mode only'),
});

const TimelinePointSchema = z.strictObject({
  timestamp: z.number().describe('seconds since the measured phase started'),
  throughput_tokens_per_sec: z.number().nonnegative(),
  users: count('users that produced the sample (= users_during)'),
  // Issue 15: the same two counts as the decision at this timestamp in autoscaling_stats.
  users_during: count('users in force while the sample was taken'),
  users_after: count('users after the decision taken at this sample'),
});

export const SummarySchema = z.strictObject({
  total_requests: count('completed requests'),
  total_tokens: count('generated tokens'),
  elapsed_time: z.number().nonnegative().describe('the measured window (s)'),
  avg_throughput_tokens_per_sec: z.number().nonnegative().describe('generated tokens ÷ measured window'),
  total_storage_io_time: z.number().nonnegative().describe('sum of per-request storage I/O time (s)'),
  storage_throughput_tokens_per_sec: z
    .number()
    .nonnegative()
    .describe(
      "The reference's formula: generated tokens ÷ the SUM of per-request I/O time over all concurrent requests (a per-request serial rate, not a system rate)",
    ),
  requests_per_second: z.number().nonnegative().describe('completed requests ÷ measured window'),
  end_to_end_latency_ms: LatencyBlockSchema,
  storage_io_latency_ms: LatencyBlockSchema,
  generation_latency_ms: LatencyBlockSchema,
  cache_stats: CacheStatsSchema,
  qos_metrics: z.record(z.string(), QosClassSchema).describe('Per QoS class (interactive, responsive, batch)'),
  prefix_cache_stats: PrefixCacheStatsSchema,
  autoscaling_stats: z.array(ScaleEventSchema).describe('Every autoscaler decision; empty without autoscaling'),
  autoscaling_summary: AutoscalingSummarySchema.nullable().describe('null without autoscaling'),
  multi_turn_stats: z.strictObject({
    cache_hits: count('earlier turns found in the cache'),
    cache_misses: count('earlier turns not found'),
    hit_rate: z.number().min(0).max(1),
  }),
});
export type Summary = z.output<typeof SummarySchema>;

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

export const MachineSchema = z
  .strictObject({
    cpu_model: z.string(),
    cpu_count: count('CPUs this process may use (os.availableParallelism)'),
    total_memory_bytes: bytes('physical memory'),
    kernel_release: z.string(),
    node_version: z.string(),
    io_buffers: z
      .string()
      .optional()
      .describe(
        "how the tool's I/O buffers are backed, e.g. '2 MiB transparent huge pages (advised: enabled = madvise)' or '4 KiB pages (why)': " +
          'buffers in 4 KiB pages split O_DIRECT requests at the queue segment limit; absent before schema 2.2.0',
      ),
    cache_dir: z
      .strictObject({
        file_system: z.string(),
        block_device: z
          .string()
          .nullable()
          .describe('the physical device under the cache dir; null when not resolvable (tmpfs, overlay, RAID…)'),
        device_model: z.string().nullable().describe('/sys/block/<dev>/device/model; null when unknown'),
      })
      .nullable()
      .describe('null in trace mode (no cache directory)'),
  })
  .describe('The host, captured once at run time');
export type MachineJson = z.output<typeof MachineSchema>;

const HistogramSchema = z.strictObject({
  encoded: z.string().describe('compressed base64 HdrHistogram, microsecond values'),
  count: count('samples'),
  sum_ms: z.number().nonnegative().describe('exact sum of the samples (ms)'),
});

const ValidityFindingSchema = z.strictObject({
  code: z.string().describe('stable snake_case identifier, e.g. device_reads_exceed_tool'),
  message: z.string().describe('what happened and what to do'),
});

const StopReasonSchema = z.enum([
  'duration',
  'max_requests',
  'interrupted',
  'failed',
  'capacity_peak',
  'workload_complete',
  'storage_full',
]);

// --- Trials (--trials) and the validation trace (--validation-trace) ---

const nullableFigure = (what: string) => z.number().nullable().describe(what);

/** The headline figures of one trial, the ones its spread is judged on. */
export const TrialFiguresSchema = z
  .strictObject({
    storage_bytes_per_sec: nullableFigure(
      'storage tier KV bytes read + written ÷ measured window (bytes/s): the figure the median trial is chosen by',
    ),
    storage_read_bytes_per_sec: nullableFigure('kvcache_bench.storage_bytes.read_bytes_per_sec (bytes/s)'),
    storage_write_bytes_per_sec: nullableFigure('kvcache_bench.storage_bytes.write_bytes_per_sec (bytes/s)'),
    requests_per_second: nullableFigure('summary.requests_per_second (requests/s)'),
    avg_throughput_tokens_per_sec: nullableFigure('summary.avg_throughput_tokens_per_sec (tokens/s)'),
    storage_read_device_p95_ms: nullableFigure('cache_stats.storage_read_device_p95_ms (ms); null without storage reads'),
    storage_write_device_p95_ms: nullableFigure('cache_stats.storage_write_device_p95_ms (ms); null without storage writes'),
    end_to_end_p95_ms: nullableFigure('summary.end_to_end_latency_ms.p95 (ms)'),
    cache_hit_rate: nullableFigure('cache_stats.cache_hit_rate (0–1)'),
  })
  .describe('Headline figures of one trial');
export type TrialFiguresJson = z.output<typeof TrialFiguresSchema>;

const FigureStatsSchema = z.strictObject({
  n: count('trials that had the figure'),
  median: z.number().nullable().describe('middle value; the mean of the two middle values for an even n'),
  min: z.number().nullable(),
  max: z.number().nullable(),
  mean: z.number().nullable(),
  cv: z
    .number()
    .nonnegative()
    .nullable()
    .describe('sample coefficient of variation: standard deviation with the n − 1 denominator ÷ mean; null when n < 2 or the mean is 0'),
});

export const TrialsSchema = z
  .strictObject({
    requested: count('--trials'),
    completed: count('trials that ran to their end (counted in the statistics)'),
    pause_sec: z.number().nonnegative().describe('--trial-pause (s)'),
    median_by: z
      .literal('storage_bytes_per_sec')
      .describe('the figure that picks the median trial (a device ranking ranks by storage bytes/s)'),
    median_trial: z
      .number()
      .int()
      .positive()
      .nullable()
      .describe(
        '1-based number of the median trial, whose full results this document holds: the middle one by median_by, the lower middle one for an even count; null when no trial completed',
      ),
    cv_kind: z.literal('sample').describe('the CVs use the sample standard deviation (n − 1)'),
    cv_warning_threshold: z.number().describe('a figure whose CV exceeds this fraction is named in warnings'),
    runs: z
      .array(
        z.strictObject({
          trial: z.number().int().positive(),
          file: z.string().describe("the trial's full results file"),
          stop_reason: StopReasonSchema,
          counted: z.boolean().describe('false for an interrupted or failed trial: its partial figures are shown, never counted'),
          figures: TrialFiguresSchema,
        }),
      )
      .describe('every trial that started, in order'),
    stats: z.record(z.string(), FigureStatsSchema).describe('per headline figure, over the counted trials'),
    warnings: z.array(z.string()),
  })
  .describe('Repeated trials of the same workload (--trials > 1)');
export type TrialsJson = z.output<typeof TrialsSchema>;

const FigureComparisonSchema = z.strictObject({
  benchmark: z.number().describe("the run's value"),
  trace: z.number().describe("the trace's value"),
  error_pct: z.number().nonnegative().nullable().describe('|benchmark − trace| ÷ trace × 100; null when the trace value is 0'),
  within_5pct: z.boolean(),
});

export const ValidationSchema = z
  .strictObject({
    trace_file: z.string(),
    passed: z.boolean().describe('every figure within tolerance_pct (the reference passed on the average error)'),
    avg_error_pct: z.number().nonnegative().describe("mean of the figures' relative errors (%), the reference's criterion"),
    tolerance_pct: z.number().positive(),
    comparison: z
      .record(z.string(), FigureComparisonSchema)
      .describe('cache_hit_rate (as the reference), read_write_ratio, bytes_per_request, context_tokens_mean/p50/p95'),
    trace_stats: z.strictObject({
      total_requests: count('records in the trace'),
      cache_hit_rate: z.number().min(0).max(1),
      read_write_ratio: z.number().nonnegative().describe('read ÷ max(write, 1) bytes'),
      bytes_per_request: z.number().nonnegative().describe('(read + write) bytes ÷ records'),
      context_tokens_mean: z.number().nonnegative(),
      context_tokens_p50: z.number().nonnegative(),
      context_tokens_p95: z.number().nonnegative(),
      generation_tokens_mean: z.number().nonnegative(),
    }),
  })
  .describe('The run compared with a real trace (--validation-trace); absent without it');
export type ValidationJson = z.output<typeof ValidationSchema>;

// --- end of trials and validation ---

// --- The per-second series (issues 13 and 15): the run timeline and the device telemetry ---

const nullMs = (what: string) => z.number().nonnegative().nullable().describe(`${what} (ms); null when the interval had none`);

const IntervalLatencySchema = z
  .strictObject({
    count: count('operations completed in the interval'),
    p50: nullMs('median'),
    p95: nullMs('95th percentile'),
    p99: nullMs('99th percentile'),
    max: nullMs('slowest'),
  })
  .describe("Latency of the interval's operations (interval HDR histogram)");

const TimelineTierSchema = z.strictObject({
  read_bytes: bytes('KV bytes read in the interval: hits served plus entries demoted out'),
  write_bytes: bytes('KV bytes written in the interval: entries placed plus entries demoted in'),
  read_ops: count('reads completed in the interval (hits plus demotions out)'),
  write_ops: count('writes completed in the interval (placements plus demotions in)'),
  occupancy_bytes: bytes('KV bytes of the entries the tier held at the sample instant'),
  evictions: count('entries that left the tier in the interval (demoted down or deleted to make room)'),
});

export const TimelineSchema = z
  .strictObject({
    interval_sec: z.literal(1),
    points: z.array(
      z.strictObject({
        t_sec: z.number().nonnegative().describe('end of the interval, seconds since the measured window started'),
        duration_sec: z.number().nonnegative().describe("the interval's real length (s); the last one may be shorter"),
        requests_completed: count('requests completed in the interval'),
        tokens_per_sec: z.number().nonnegative().describe('tokens generated in the interval ÷ duration_sec'),
        hit_rate: z.number().min(0).max(1).nullable().describe('cache hits ÷ lookups in the interval; null with no lookups'),
        users: count('active users at the sample instant'),
        in_flight_ops: count('tier operations in flight at the sample instant (writes, demotions, hit reads)'),
        queue_wait_ms_p95: nullMs('95th percentile queue wait of the requests dequeued in the interval'),
        evictions: count('entries moved down or dropped (any tier) in the interval'),
        tiers: z.partialRecord(z.enum(['gpu', 'cpu', 'storage']), TimelineTierSchema).describe("one key per tier of the run's hierarchy"),
        storage_read_latency_ms: IntervalLatencySchema.describe('storage-tier reads completed in the interval (hits and demotions out)'),
        storage_write_latency_ms: IntervalLatencySchema.describe(
          'storage-tier writes completed in the interval (placements and demotions in)',
        ),
      }),
    ),
  })
  .describe(
    'One point per second of the measured window; the points add up to the run totals (the last, shorter point covers the rest). Empty points when the window was shorter than 1 s',
  );
export type TimelineJson = z.output<typeof TimelineSchema>;

const perSec = (what: string, unit: string) => z.number().nonnegative().describe(`${what} (${unit})`);
const nullable = (what: string) => z.number().nonnegative().nullable().describe(`${what}; null without such requests`);

export const DeviceTelemetrySchema = z
  .strictObject({
    device: z.string().describe("kernel name of the cache dir's block device, e.g. vda"),
    source: z.string().describe('the sampled file, e.g. /sys/block/vda/stat'),
    interval_sec: z.literal(1),
    points: z.array(
      z.strictObject({
        t_sec: z.number().nonnegative().describe('end of the interval, seconds since the measured window started'),
        duration_sec: z.number().nonnegative().describe("the interval's real length (s)"),
        read_iops: perSec('reads completed', 'requests/s'),
        write_iops: perSec('writes completed', 'requests/s'),
        read_bytes_per_sec: perSec('bytes read (sectors × 512)', 'bytes/s'),
        write_bytes_per_sec: perSec('bytes written (sectors × 512)', 'bytes/s'),
        in_flight: count('requests in flight at the sample instant'),
        utilization_pct: z.number().min(0).max(100).describe('io_ticks growth ÷ interval × 100 (%)'),
        avg_queue_depth: z.number().nonnegative().describe('time_in_queue growth ÷ interval: mean requests in flight'),
        avg_read_request_bytes: nullable('bytes read ÷ reads completed (bytes)'),
        avg_write_request_bytes: nullable('bytes written ÷ writes completed (bytes)'),
        read_await_ms: nullable('read ticks ÷ reads completed: queue + device time per read (ms)'),
        write_await_ms: nullable('write ticks ÷ writes completed (ms)'),
      }),
    ),
    summary: z
      .strictObject({
        read_bytes: bytes('read by the device over the series'),
        write_bytes: bytes('written by the device over the series'),
        read_ops: count('reads completed'),
        write_ops: count('writes completed'),
        mean_utilization_pct: z.number().min(0).max(100).describe('io_ticks ÷ span × 100 (%)'),
        max_in_flight: count('most requests in flight at any sample'),
        mean_queue_depth: z.number().nonnegative().describe('time_in_queue ÷ span'),
        read_await_ms: nullable('read ticks ÷ reads (ms)'),
        write_await_ms: nullable('write ticks ÷ writes (ms)'),
      })
      .describe('The whole series: from the window start to its last point'),
  })
  .describe("The cache dir's block device, /sys/block/<dev>/stat sampled every second (whole-device counters: any other I/O to it counts)");
export type DeviceTelemetryJson = z.output<typeof DeviceTelemetrySchema>;

// --- end of the per-second series ---

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
    payload_generation: z
      .strictObject({
        filler: z
          .string()
          .optional()
          .describe(
            "who filled the payload buffers: native jobs on libuv's threadpool, or worker threads (with why not natively); absent before schema 2.6.0",
          ),
        stamped_bytes: z.number().int().min(0).describe("bytes made by rewriting the 512-byte blocks' stamps of a reused buffer (bytes)"),
        copied_bytes: z.number().int().min(0).describe('bytes made by a full copy from the random source (bytes)'),
        write_wait_ms: z
          .number()
          .min(0)
          .describe("milliseconds the CPU- and storage-tier writes waited for payload bytes, summed over writes; in no write's time (ms)"),
        chunks_waited_for: z.number().int().min(0).describe('payload chunks a write had to wait for'),
        write_wait_share: z
          .number()
          .min(0)
          .max(1)
          .describe(
            'write_wait_ms ÷ (write_wait_ms + the time of the writes that take payload bytes), 0–1; over 0.1 the verdict says harness_saturated',
          ),
      })
      .optional()
      .describe('the payload generator over the measured window; absent in trace mode and before schema 2.3.0'),
    file_io: z
      .strictObject({
        pool_threads: z.number().int().min(1).describe("threads in libuv's pool, where every file call runs (UV_THREADPOOL_SIZE)"),
        max_in_flight: z.number().int().min(0).describe("most of the file tier's calls in flight at once"),
        queued_ms: z.number().min(0).describe('milliseconds during which more calls were in flight than the pool has threads (ms)'),
        queued_share: z
          .number()
          .min(0)
          .max(1)
          .describe(
            'queued_ms ÷ the measured window, 0–1: the queueing is inside the latencies; over 0.1 the verdict says harness_saturated',
          ),
        calls_queued: z.number().int().min(0).describe('calls that started while every thread was taken'),
        staging_wait_ms: z
          .number()
          .min(0)
          .describe("milliseconds storage operations waited for a staging buffer, summed; in no operation's time (ms)"),
        staging_waits: z.number().int().min(0).describe('operations that had to wait for one'),
        staging_wait_share: z
          .number()
          .min(0)
          .max(1)
          .describe(
            "staging_wait_ms ÷ (staging_wait_ms + the storage reads' and writes' time), 0–1; over 0.1 the verdict says harness_saturated",
          ),
      })
      .optional()
      .describe(
        "the file tier's use of libuv's threadpool and of its staging buffers over the measured window; absent for other storage kinds, in trace mode and before schema 2.5.0",
      ),
    kv_blocks: KvBlocksSchema.optional(),
    kv_pool: KvPoolSchema.optional(),
    cpu_seconds: CpuSecondsSchema.optional(), // the harness's CPU over the window (issue 34)
    slab: SlabSchema.optional(), // --kv-layout slab (issue 34)
    validity: z
      .strictObject({
        valid: z.boolean().describe('true when no reason below applies'),
        reasons: z.array(ValidityFindingSchema).describe('why the run is NOT VALID as a storage measurement; empty when valid'),
        warnings: z.array(ValidityFindingSchema).describe('worth knowing; does not invalidate'),
      })
      .describe('The validity verdict; the console prints VALID or NOT VALID: <codes> last'),
    // Ranks of a multi-process run (issue 14; README "MLPerf submission runs").
    ranks: z
      .strictObject({
        rank: count('this rank (0-based)'),
        world_size: z.number().int().positive().describe('ranks in the run'),
        launcher: z.string().describe('openmpi, pmi, slurm or kubernetes: whose environment variables gave the rank'),
        world_size_from: z.string().describe('the variable (or --world-size) that gave the world size'),
        host: z.string().describe('host name of this rank'),
        barrier: z
          .strictObject({
            dir: z.string().describe('the shared directory the ranks met in'),
            timeout_sec: z.number().positive().describe('--barrier-timeout (s)'),
            start_wait_ms: ms('from arriving at the start barrier to the agreed start'),
            end_wait_ms: ms('waiting at the end barrier for the other ranks').nullable().describe('null when the end barrier failed'),
            end_problem: z.string().nullable().describe('why the end barrier failed (this rank’s measurement stands); null when it met'),
          })
          .nullable()
          .describe('null for a world of one rank (no barrier)'),
        agreed_start_epoch_ms: z
          .number()
          .nullable()
          .describe('the common start instant decided by rank 0 (ms since the epoch); null without a barrier'),
        agreed_end_epoch_ms: z.number().nullable().describe('agreed start + --duration (ms since the epoch): every rank stops then'),
        window_start_epoch_ms: z.number().describe('when this rank’s measured window opened (ms since the epoch)'),
        window_end_epoch_ms: z.number().describe('window start + measured_window_sec (ms since the epoch): the last I/O completed'),
        start_skew_ms: z.number().nullable().describe('window start − agreed start (ms): how late this rank began; null without a barrier'),
        end_skew_ms: z.number().nullable().describe('window end − agreed end (ms): the tail of I/O in flight at the stop'),
        clock_source: z.string().describe('the clock every epoch time here is read from'),
        peers: z
          .array(
            z.strictObject({
              rank: count('rank'),
              host: z.string(),
              arrived_epoch_ms: z.number().describe('arrival at the start barrier (ms since the epoch)'),
            }),
          )
          .describe('every rank’s arrival at the start barrier, as rank 0 saw them'),
      })
      .nullable()
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
