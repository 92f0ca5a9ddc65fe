// The results file (docs/reference-compat.md#rc-42): every field of the reference with its name, unit and formula, so its
// consumers keep working, plus our additions in a `kvcache_bench` block and under new names. The
// shape is results-schema.ts; this file only computes values into it.
import { kvBlocksJson } from './kv-blocks-json.js';
import { kvPoolJson } from './kv-pool-json.js';
import { buildCacheStats } from '../metrics/cache-stats.js';
import type { LatencySnapshot, LatencySummaryMs } from '../metrics/latency.js';
import { kvReadBytes, kvWriteBytes } from '../metrics/recorder.js';
import type { FileIoStats, MachineContext, RunResult } from '../metrics/result.js';
import type { DiskDelta } from '../metrics/diskstats.js';
import { fileIoShares, payloadWaitShare, validityFactsOf, validityOf } from '../metrics/validity.js';
import { GiB } from '../util/units.js';
import { compareWithTrace } from '../metrics/trace-comparison.js';
import { metadataCalibrationJson } from './metadata-calibration-schema.js';
import { cpuSecondsJson } from './cpu-seconds-schema.js';
import { slabJson } from './slab-schema.js';
import { metadataOpsJson } from './metadata-ops-json.js';
import { SCHEMA_VERSION } from './results-schema.js';
import { tracingFields } from './tracing-json.js';
import { ttftModelledJson } from './ttft-json.js';
import type { ObjectStoreReport } from '../tiers/storage-kind.js';
import type { TracingFields } from './tracing-json.js'; // block-layer tracing (issue 13)
import type {
  EffectiveConfig,
  KvcacheBench,
  LatencyBlock,
  MachineJson,
  ResultsDocument,
  Summary,
  ValidationJson,
  WorkloadSourceJson,
} from './results-schema.js';

function latencyBlock(s: LatencySummaryMs): LatencyBlock {
  return { mean: s.mean, p50: s.p50, p95: s.p95, p99: s.p99, p999: s.p999, p9999: s.p9999 };
}

/**
 * Values the engine hands over loosely typed (`object`, `unknown`, `Record<string, unknown>` in
 * RunResult and QosCompliance): asserted to the schema's types here, in one place. Every results
 * file the tests write is validated against the generated JSON Schema, which checks these shapes.
 */
interface LooselyTyped {
  readonly qosMetrics: Summary['qos_metrics'];
  readonly workloadSource: WorkloadSourceJson;
  readonly effectiveConfig: EffectiveConfig;
  readonly autoscaling?: {
    readonly events: Summary['autoscaling_stats'];
    readonly summary: NonNullable<Summary['autoscaling_summary']>;
    readonly timeline: ResultsDocument['throughput_timeline'];
  };
}

function looselyTyped(r: RunResult): LooselyTyped {
  return {
    qosMetrics: r.requests.qos as Summary['qos_metrics'],
    workloadSource: r.workloadSource as WorkloadSourceJson,
    effectiveConfig: r.effectiveConfig as EffectiveConfig,
    ...(r.autoscaling !== undefined
      ? {
          autoscaling: {
            events: r.autoscaling.events as Summary['autoscaling_stats'],
            summary: r.autoscaling.summary as NonNullable<Summary['autoscaling_summary']>,
            timeline: r.autoscaling.timeline as ResultsDocument['throughput_timeline'],
          },
        }
      : {}),
  };
}

/** The reference's `summary` block. */
function buildSummary(r: RunResult, loose: LooselyTyped): Summary {
  const m = r.requests;
  const elapsed = r.elapsedSec;
  const storageSec = m.totalStorageMs / 1000;
  const mtTotal = m.multiTurnHits + m.multiTurnMisses;
  return {
    total_requests: m.requestsCompleted,
    total_tokens: m.tokensGenerated,
    elapsed_time: elapsed,
    avg_throughput_tokens_per_sec: elapsed > 0 ? m.tokensGenerated / elapsed : 0,
    total_storage_io_time: storageSec,
    // The reference's formula: generated tokens ÷ the SUM of per-request I/O time over all concurrent
    // requests — a per-request serial rate, not a system rate (docs/reference-compat.md#rc-41). Kept for compatibility.
    storage_throughput_tokens_per_sec: storageSec > 0 ? m.tokensGenerated / storageSec : 0,
    requests_per_second: elapsed > 0 ? m.requestsCompleted / elapsed : 0,
    end_to_end_latency_ms: latencyBlock(m.e2e),
    storage_io_latency_ms: latencyBlock(m.storage),
    generation_latency_ms: latencyBlock(m.generation),
    cache_stats: buildCacheStats(r.recorded, r.occupancy, elapsed, r.performanceProfile, { traceMode: r.storageSetup.traceMode }),
    qos_metrics: loose.qosMetrics,
    prefix_cache_stats:
      r.prefix === undefined
        ? {}
        : {
            prefix_hits: r.prefix.prefixHits,
            prefix_misses: r.prefix.prefixMisses,
            system_prompt_reuse: r.prefix.systemPromptReuse,
            common_phrase_reuse: r.prefix.commonPhraseReuse,
            bytes_saved: r.prefix.bytesSaved,
          },
    autoscaling_stats: loose.autoscaling?.events ?? [],
    autoscaling_summary: loose.autoscaling?.summary ?? null,
    multi_turn_stats: {
      cache_hits: m.multiTurnHits,
      cache_misses: m.multiTurnMisses,
      hit_rate: mtTotal === 0 ? 0 : m.multiTurnHits / mtTotal,
    },
  };
}

/** Every latency distribution with samples, as a mergeable HdrHistogram. */
function latencyHistograms(r: RunResult): KvcacheBench['latency_histograms'] {
  const m = r.requests;
  const histograms: KvcacheBench['latency_histograms'] = {};
  const add = (name: string, h: LatencySnapshot | undefined): void => {
    if (h !== undefined && h.count > 0) histograms[name] = { encoded: h.encoded, count: h.count, sum_ms: h.mean * h.count };
  };
  for (const [name, h] of Object.entries(r.recorded.latencies)) add(name, h);
  add('request_end_to_end', m.e2e);
  add('request_storage', m.storage);
  add('request_generation', m.generation);
  add('request_queue_wait', m.queueWait);
  add('request_prefill', m.prefill);
  add('request_decode', m.decode);
  return histograms;
}

/** The host as the engine captured it, in the file's snake_case. */
export function machineJson(m: MachineContext): MachineJson {
  return {
    cpu_model: m.cpuModel,
    cpu_count: m.cpuCount,
    total_memory_bytes: m.totalMemoryBytes,
    kernel_release: m.kernelRelease,
    node_version: m.nodeVersion,
    io_buffers: m.ioBuffers,
    cache_dir:
      m.cacheDir === null
        ? null
        : { file_system: m.cacheDir.fileSystem, block_device: m.cacheDir.blockDevice, device_model: m.cacheDir.deviceModel },
  };
}

/** Figures the reference lacks, each named for what it is (bytes, seconds, wall-clock rates). */
function buildAdditions(r: RunResult, loose: LooselyTyped, tracing: TracingFields): KvcacheBench {
  const m = r.requests;
  const elapsed = r.elapsedSec;
  const perSec = (bytes: number): number => (elapsed > 0 ? bytes / elapsed : 0);
  const st = r.recorded.traffic.storage;
  return {
    tool: 'kvcache-bench',
    version: r.toolVersion,
    schema_version: SCHEMA_VERSION,
    started_at: r.startedAt,
    stop_reason: r.stopReason,
    interrupted: r.stopReason === 'interrupted',
    measured_window_sec: elapsed,
    nominal_duration_sec: r.nominalDurationSec,
    requests_aborted_at_stop: m.requestsAborted,
    workers: r.workers,
    model: r.modelKey,
    kv_bytes_per_token: r.bytesPerToken,
    queue_wait_ms: latencyBlock(m.queueWait),
    prefill_latency_ms: latencyBlock(m.prefill),
    decode_latency_ms: latencyBlock(m.decode),
    storage_bytes: {
      read_bytes: kvReadBytes(st),
      written_bytes: kvWriteBytes(st),
      read_bytes_per_sec: perSec(kvReadBytes(st)),
      write_bytes_per_sec: perSec(kvWriteBytes(st)),
      read_gib_per_sec: perSec(kvReadBytes(st)) / GiB,
      write_gib_per_sec: perSec(kvWriteBytes(st)) / GiB,
    },
    device_io:
      r.device === undefined
        ? null
        : {
            ...deviceIoJson(r.device, elapsed),
            read_ops: r.device.delta.readOps,
            write_ops: r.device.delta.writeOps,
            note: 'whole-device counters from /proc/diskstats over the measured window; include any other I/O to that device',
          },
    workload_source: loose.workloadSource,
    storage_dir: r.storage.dir,
    storage_io_mode: r.storage.ioMode,
    ...(r.storage.layout !== undefined ? { storage_layout: r.storage.layout } : {}),
    ...(r.storage.fileCalls !== undefined ? { storage_file_calls: r.storage.fileCalls } : {}),
    storage_file_system: r.storage.fileSystem,
    event_loop_delay_ms: r.eventLoopDelayMs,
    conversations_lost_to_limit: r.conversationsLost,
    entry_sizes: r.entrySizes,
    warnings: [...r.warnings],
    failed_operations: r.recorded.failures.map((f) => ({ ...f })),
    refused_allocations: { ...r.recorded.refusedAllocations },
    stale_entries:
      r.staleEntries == null
        ? null
        : {
            count: r.staleEntries.count,
            bytes: r.staleEntries.bytes,
            allocated_bytes: r.staleEntries.allocatedBytes,
            removed: r.staleEntries.removed,
          },
    storage_capacity:
      r.storageCapacity == null
        ? null
        : {
            limit_bytes: Number.isFinite(r.storageCapacity.limitBytes) ? r.storageCapacity.limitBytes : null,
            peak_allocated_bytes: r.storageCapacity.peakAllocatedBytes,
          },
    ...(r.objectStore !== undefined ? { object_store: objectStoreJson(r.objectStore) } : {}),
    effective_config: loose.effectiveConfig,
    machine: machineJson(r.machine),
    latency_histograms: latencyHistograms(r),
    // The per-second series as measured (metrics/timeline.ts, metrics/device-series.ts use the file's names);
    // the arrays are copied only because the file type is mutable.
    timeline: r.timeline === undefined ? { interval_sec: 1, points: [] } : { interval_sec: 1, points: [...r.timeline.points] },
    device_telemetry: r.deviceTelemetry == null ? null : { ...r.deviceTelemetry, points: [...r.deviceTelemetry.points] },
    main_thread_busy_fraction: Math.min(1, Math.max(0, r.mainThreadBusy)),
    ...(r.payload !== undefined
      ? {
          payload_generation: {
            filler: r.payload.filler,
            stamped_bytes: r.payload.stampedBytes,
            copied_bytes: r.payload.copiedBytes,
            write_wait_ms: r.payload.consumerWaitMs,
            chunks_waited_for: r.payload.chunksWaitedFor,
            write_wait_share: payloadWaitShare(r.payload.consumerWaitMs, r.recorded),
          },
        }
      : {}),
    ...(r.fileIo !== undefined ? { file_io: fileIoJson(r.fileIo, r) } : {}),
    ...(r.kvBlocks !== undefined ? { kv_blocks: kvBlocksJson(r.kvBlocks, r.elapsedSec) } : {}),
    ...(r.kvPool !== undefined ? { kv_pool: kvPoolJson(r.kvPool, r.elapsedSec, r.kvBlocks?.stats.tokensAsked ?? 0) } : {}),
    ...(r.harnessCpu !== undefined ? { cpu_seconds: cpuSecondsJson(r.harnessCpu, kvReadBytes(st) + kvWriteBytes(st)) } : {}),
    ...(r.metadataCalibration !== undefined
      ? {
          metadata_calibration: metadataCalibrationJson(
            r.metadataCalibration,
            r.metadataOps !== undefined ? { files: r.metadataOps.create.count, dirs: r.metadataOps.mkdir.count } : undefined,
          ),
        }
      : {}),
    ...(r.slab !== undefined ? { slab: slabJson(r.slab) } : {}),
    ...(r.metadataOps !== undefined ? { metadata_ops: metadataOpsJson(r.metadataOps, elapsed, kvReadBytes(st) + kvWriteBytes(st)) } : {}),
    validity: validityJson(r),
    ranks: r.ranks === undefined ? null : ranksJson(r.ranks),
    ...(tracing.block !== undefined ? { latency_tracing: tracing.block } : {}), // block-layer tracing (issue 13)
    ...(r.ttftModelled !== undefined ? { ttft_modelled: ttftModelledJson(r.ttftModelled) } : {}), // modelled TTFT (issue 23)
  };
}

/** The file tier's harness figures (tiers/file-io-gauge.ts) in the file's snake_case, with the shares the verdict judges. */
function fileIoJson(f: FileIoStats, r: RunResult): NonNullable<KvcacheBench['file_io']> {
  const shares = fileIoShares(f, r.recorded, r.elapsedSec);
  return {
    pool_threads: f.poolThreads,
    max_in_flight: f.maxInFlight,
    queued_ms: f.queuedMs,
    queued_share: shares.poolQueuedShare,
    calls_queued: f.callsQueued,
    staging_wait_ms: f.stagingWaitMs,
    staging_waits: f.stagingWaits,
    staging_wait_share: shares.stagingWaitShare,
  };
}

/** A rank's facts (issue 14) in the file's snake_case. */
function ranksJson(k: NonNullable<RunResult['ranks']>): NonNullable<KvcacheBench['ranks']> {
  return {
    rank: k.rank,
    world_size: k.worldSize,
    launcher: k.launcher,
    world_size_from: k.worldSizeFrom,
    host: k.host,
    barrier:
      k.barrier === null
        ? null
        : {
            dir: k.barrier.dir,
            timeout_sec: k.barrier.timeoutSec,
            start_wait_ms: Math.max(0, k.barrier.startWaitMs),
            end_wait_ms: k.barrier.endWaitMs === null ? null : Math.max(0, k.barrier.endWaitMs),
            end_problem: k.barrier.endProblem,
          },
    agreed_start_epoch_ms: k.agreedStartEpochMs,
    agreed_end_epoch_ms: k.agreedEndEpochMs,
    window_start_epoch_ms: k.windowStartEpochMs,
    window_end_epoch_ms: k.windowEndEpochMs,
    start_skew_ms: k.startSkewMs,
    end_skew_ms: k.endSkewMs,
    clock_source: k.clockSource,
    peers: k.peers.map((p) => ({ rank: p.rank, host: p.host, arrived_epoch_ms: p.arrivedEpochMs })),
  };
}

/** The validity verdict of the run (metrics/validity.ts), in the file's mutable arrays. */
function validityJson(r: RunResult): KvcacheBench['validity'] {
  const v = validityOf(validityFactsOf(r));
  return { valid: v.valid, reasons: [...v.reasons], warnings: [...v.warnings] };
}

/** Device bytes (from /proc/diskstats) over a window of `elapsedSec`: the fields runs and replays share. */
export function deviceIoJson(
  device: { readonly name: string; readonly delta: DiskDelta },
  elapsedSec: number,
): { device: string; read_bytes: number; written_bytes: number; read_bytes_per_sec: number; write_bytes_per_sec: number } {
  const perSec = (bytes: number): number => (elapsedSec > 0 ? bytes / elapsedSec : 0);
  return {
    device: device.name,
    read_bytes: device.delta.readBytes,
    written_bytes: device.delta.writeBytes,
    read_bytes_per_sec: perSec(device.delta.readBytes),
    write_bytes_per_sec: perSec(device.delta.writeBytes),
  };
}

/**
 * The run against --validation-trace: the run's hit rate and total read/write bytes as the reference
 * reports them (cache_stats), bytes per completed request, and the context lengths of completed requests.
 */
function validationJson(trace: NonNullable<RunResult['validationTrace']>, r: RunResult, summary: Summary): ValidationJson {
  const cs = summary.cache_stats;
  const ctx = r.requests.contextTokens;
  const report = compareWithTrace(
    {
      requests: r.requests.requestsCompleted,
      cacheHitRate: cs.cache_hit_rate,
      readBytes: cs.total_read_bytes,
      writeBytes: cs.total_write_bytes,
      contextTokens: { mean: ctx.mean, p50: ctx.p50, p95: ctx.p95 },
    },
    trace.stats,
  );
  return { trace_file: trace.path, ...report, comparison: { ...report.comparison } };
}

/** The whole results object, in the reference's top-level layout. */
export function buildResultsJson(r: RunResult): ResultsDocument {
  const m = r.requests;
  const loose = looselyTyped(r);
  const summary = buildSummary(r, loose);
  const tracing = tracingFields(r); // distils the fio job once, for both places
  return {
    requests_completed: m.requestsCompleted,
    total_tokens_generated: m.tokensGenerated,
    total_storage_io_latency: m.totalStorageMs / 1000,
    total_generation_latency: m.totalGenerationMs / 1000,
    ...(m.raw ?? {}),
    throughput_timeline: loose.autoscaling?.timeline ?? [],
    multi_turn_cache_hits: m.multiTurnHits,
    multi_turn_cache_misses: m.multiTurnMisses,
    seed: r.seed,
    summary,
    kvcache_bench: buildAdditions(r, loose, tracing),
    ...(r.validationTrace !== undefined ? { validation: validationJson(r.validationTrace, r, summary) } : {}),
    ...tracing.root, // block-layer tracing (issue 13): device_latency_tracing, fio_workload
  };
}

function latencyJson(l: ObjectStoreReport['putMs']): {
  count: number;
  mean_ms: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
} {
  return { count: l.count, mean_ms: l.meanMs, p50_ms: l.p50Ms, p95_ms: l.p95Ms, p99_ms: l.p99Ms, max_ms: l.maxMs };
}

/** kvcache_bench.object_store from the S3 tier's report. */
export function objectStoreJson(o: ObjectStoreReport): NonNullable<ResultsDocument['kvcache_bench']['object_store']> {
  return {
    endpoint_host: o.endpointHost,
    bucket: o.bucket,
    prefix: o.prefix,
    region: o.region,
    addressing: o.addressing,
    client: o.client,
    max_connections: o.maxConnections,
    idle_timeout_ms: o.idleTimeoutMs,
    max_attempts: o.maxAttempts,
    multipart_above_bytes: o.multipartAboveBytes,
    part_bytes: o.partBytes,
    requests: o.requests,
    retries: o.retries,
    puts: o.puts,
    multipart_uploads: o.multipartUploads,
    gets: o.gets,
    deletes: o.deletes,
    failures: { ...o.failures },
    get_first_byte_ms: latencyJson(o.getFirstByteMs),
    put_ms: latencyJson(o.putMs),
  };
}
