// The report of `kv-cache replay`: its results document (shape in results-schema.ts) and the console
// summary, which is computed from that document so that what is printed is exactly what is saved.
import type { ReplayResult } from '../metrics/replay-result.js';
import { buildCacheStats } from '../metrics/cache-stats.js';
import type { CacheStats } from '../metrics/cache-stats.js';
import { GiB, MiB } from '../util/units.js';
import { deviceIoJson, machineJson, objectStoreJson } from './results-json.js';
import { SCHEMA_VERSION } from './results-schema.js';
import { metadataOpsJson } from './metadata-ops-json.js';
import { metadataOpsLine } from './console-metadata.js';
import { kvReadBytes, kvWriteBytes } from '../metrics/recorder.js';
import type { ReplayResultsDocument } from './results-schema.js';

/** How the trace was replayed, as the command was asked. */
export interface ReplaySettings {
  readonly tracePath: string;
  readonly concurrency: number;
  readonly paced: boolean;
  readonly allTiers: boolean;
}

export function buildReplayResultsJson(a: ReplaySettings, r: ReplayResult, version: string): ReplayResultsDocument {
  const c = r.counts;
  return {
    replay: {
      trace: a.tracePath,
      rows: c.rows,
      writes: c.writes,
      reads: c.reads,
      deletes: c.deletes,
      write_bytes: c.writeBytes,
      read_bytes: c.readBytes,
      skipped_other_tier_rows: c.skippedOtherTiers,
      missing_keys: c.missingKeys,
      concurrency: a.concurrency,
      paced: a.paced,
      all_tiers: a.allTiers,
    },
    elapsed_time: r.elapsedSec,
    summary: { cache_stats: buildCacheStats(r.recorded, {}, r.elapsedSec, 'latency') },
    kvcache_bench: {
      tool: 'kvcache-bench',
      version,
      schema_version: SCHEMA_VERSION,
      stop_reason: r.stopReason,
      interrupted: r.stopReason === 'interrupted',
      duration_limit_sec: r.durationLimitSec ?? null,
      operations_aborted_at_stop: c.abortedAtStop,
      hashed_keys: c.hashedKeys,
      measured_window_sec: r.elapsedSec,
      storage_dir: r.storage.dir,
      storage_io_mode: r.storage.ioMode,
      storage_file_system: r.storage.fileSystem,
      device_io: r.device === undefined ? null : deviceIoJson(r.device, r.elapsedSec),
      machine: machineJson(r.machine),
      ...(r.objectStore !== undefined ? { object_store: objectStoreJson(r.objectStore) } : {}),
      ...(r.metadataOps !== undefined
        ? {
            metadata_ops: metadataOpsJson(
              r.metadataOps,
              r.elapsedSec,
              kvReadBytes(r.recorded.traffic.storage) + kvWriteBytes(r.recorded.traffic.storage),
            ),
          }
        : {}),
    },
  };
}

type StorageLatency = 'storage_read' | 'storage_write' | 'storage_read_device' | 'storage_write_device';

function latencyLine(cs: CacheStats, name: StorageLatency): string {
  const p50 = cs[`${name}_p50_ms`];
  const p95 = cs[`${name}_p95_ms`];
  const p99 = cs[`${name}_p99_ms`];
  if (p50 === undefined || p95 === undefined || p99 === undefined) return '-';
  return `p50 ${p50.toFixed(2)}  p95 ${p95.toFixed(2)}  p99 ${p99.toFixed(2)} ms`;
}

export function formatReplaySummary(doc: ReplayResultsDocument): string {
  const c = doc.replay;
  const add = doc.kvcache_bench;
  const cs = doc.summary.cache_stats;
  const elapsed = doc.elapsed_time;
  const gibps = (b: number): string => (elapsed > 0 ? b / elapsed / GiB : 0).toFixed(3);
  const lines = [
    `Replayed ${c.writes} writes (${(c.write_bytes / GiB).toFixed(3)} GiB), ${c.reads} reads (${(c.read_bytes / GiB).toFixed(3)} GiB), ${c.deletes} deletes in ${elapsed.toFixed(2)} s`,
    `Skipped: ${c.skipped_other_tier_rows} rows of other tiers, ${c.missing_keys} reads/deletes of keys never written`,
    `Storage bandwidth: read ${gibps(c.read_bytes)} GiB/s, write ${gibps(c.write_bytes)} GiB/s (${add.storage_io_mode} I/O on ${add.storage_file_system})`,
    `Read latency:  ${latencyLine(cs, 'storage_read')}   (device ${latencyLine(cs, 'storage_read_device')})`,
    `Write latency: ${latencyLine(cs, 'storage_write')}   (device ${latencyLine(cs, 'storage_write_device')})`,
  ];
  if (add.stop_reason !== 'workload_complete')
    lines.splice(
      1,
      0,
      `Stopped before the end of the trace: ${add.stop_reason} (${add.operations_aborted_at_stop} operations cut short, not counted)`,
    );
  lines.push(...metadataOpsLine(add.metadata_ops));
  const dev = add.device_io;
  if (dev !== null)
    lines.push(`Device ${dev.device}: read ${(dev.read_bytes / MiB).toFixed(1)} MiB, written ${(dev.written_bytes / MiB).toFixed(1)} MiB`);
  const os = add.object_store;
  if (os !== undefined) {
    const failures = Object.entries(os.failures).map(([c, n]) => `${c} ${n}`);
    const ttfb = os.get_first_byte_ms;
    lines.push(
      `Object store ${os.endpoint_host} bucket ${os.bucket}: requests ${os.requests}, retries ${os.retries}, puts ${os.puts}, gets ${os.gets}, deletes ${os.deletes}, failures ${failures.length > 0 ? failures.join(', ') : 'none'}`,
      `GET time to first byte: p50 ${ttfb.p50_ms.toFixed(2)}  p95 ${ttfb.p95_ms.toFixed(2)}  p99 ${ttfb.p99_ms.toFixed(2)} ms (${ttfb.count} GETs)`,
    );
  }
  return lines.join('\n');
}
