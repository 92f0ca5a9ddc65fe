// The results file (spec §6.3): every field of the reference with its name, unit and formula, so its
// consumers keep working, plus our additions in a `kvcache_bench` block and under new names.
import { buildCacheStats } from '../metrics/cache-stats.js';
import type { LatencySnapshot, LatencySummaryMs } from '../metrics/latency.js';
import { kvReadBytes, kvWriteBytes } from '../metrics/recorder.js';
import type { RunResult } from '../metrics/result.js';
import type { DiskDelta } from '../metrics/diskstats.js';
import { GiB } from '../util/units.js';

function latencyBlock(s: LatencySummaryMs): Record<string, number> {
  return { mean: s.mean, p50: s.p50, p95: s.p95, p99: s.p99, p999: s.p999, p9999: s.p9999 };
}

/** The reference's `summary` block. */
function buildSummary(r: RunResult): Record<string, unknown> {
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
    // requests — a per-request serial rate, not a system rate (spec §11.2). Kept for compatibility.
    storage_throughput_tokens_per_sec: storageSec > 0 ? m.tokensGenerated / storageSec : 0,
    requests_per_second: elapsed > 0 ? m.requestsCompleted / elapsed : 0,
    end_to_end_latency_ms: latencyBlock(m.e2e),
    storage_io_latency_ms: latencyBlock(m.storage),
    generation_latency_ms: latencyBlock(m.generation),
    cache_stats: buildCacheStats(r.recorded, r.occupancy, elapsed, r.performanceProfile),
    qos_metrics: m.qos,
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
    autoscaling_stats: r.autoscaling?.events ?? [],
    autoscaling_summary: r.autoscaling?.summary ?? null,
    multi_turn_stats: {
      cache_hits: m.multiTurnHits,
      cache_misses: m.multiTurnMisses,
      hit_rate: mtTotal === 0 ? 0 : m.multiTurnHits / mtTotal,
    },
  };
}

/** Figures the reference lacks, each named for what it is (bytes, seconds, wall-clock rates). */
function buildAdditions(r: RunResult): Record<string, unknown> {
  const m = r.requests;
  const rec = r.recorded;
  const elapsed = r.elapsedSec;
  const perSec = (bytes: number): number => (elapsed > 0 ? bytes / elapsed : 0);
  const st = rec.traffic.storage;
  const histograms: Record<string, { encoded: string; count: number; sum_ms: number }> = {};
  const add = (name: string, h: LatencySnapshot | undefined): void => {
    if (h !== undefined && h.count > 0) histograms[name] = { encoded: h.encoded, count: h.count, sum_ms: h.mean * h.count };
  };
  for (const [name, h] of Object.entries(rec.latencies)) add(name, h);
  add('request_end_to_end', m.e2e);
  add('request_storage', m.storage);
  add('request_generation', m.generation);
  add('request_queue_wait', m.queueWait);
  add('request_prefill', m.prefill);
  add('request_decode', m.decode);
  return {
    tool: 'kvcache-bench',
    version: r.toolVersion,
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
    workload_source: r.workloadSource,
    storage_dir: r.storage.dir,
    storage_io_mode: r.storage.ioMode,
    storage_file_system: r.storage.fileSystem,
    event_loop_delay_ms: r.eventLoopDelayMs,
    conversations_lost_to_limit: r.conversationsLost,
    entry_sizes: r.entrySizes,
    warnings: r.warnings,
    effective_config: r.effectiveConfig,
    latency_histograms: histograms,
  };
}

/** The whole results object, in the reference's top-level layout. */
/** Device bytes (from /proc/diskstats) over a window of `elapsedSec`: the fields runs and replays share. */
export function deviceIoJson(device: { readonly name: string; readonly delta: DiskDelta }, elapsedSec: number): Record<string, unknown> {
  const perSec = (bytes: number): number => (elapsedSec > 0 ? bytes / elapsedSec : 0);
  return {
    device: device.name,
    read_bytes: device.delta.readBytes,
    written_bytes: device.delta.writeBytes,
    read_bytes_per_sec: perSec(device.delta.readBytes),
    write_bytes_per_sec: perSec(device.delta.writeBytes),
  };
}

export function buildResultsJson(r: RunResult): Record<string, unknown> {
  const m = r.requests;
  const out: Record<string, unknown> = {
    requests_completed: m.requestsCompleted,
    total_tokens_generated: m.tokensGenerated,
    total_storage_io_latency: m.totalStorageMs / 1000,
    total_generation_latency: m.totalGenerationMs / 1000,
  };
  if (m.raw !== undefined) Object.assign(out, m.raw);
  Object.assign(out, {
    throughput_timeline: r.autoscaling?.timeline ?? [],
    multi_turn_cache_hits: m.multiTurnHits,
    multi_turn_cache_misses: m.multiTurnMisses,
    seed: r.seed,
    summary: buildSummary(r),
    kvcache_bench: buildAdditions(r),
  });
  return out;
}
