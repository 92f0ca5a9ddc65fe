// The results fields of block-layer tracing, computed from the run's capture: the 15 histograms
// with their statistics (device_latency_tracing), the distilled fio job (fio_workload) and the
// kvcache_bench.latency_tracing block. Pure: the ini file is written by the command (run-command.ts).
import type { RunResult } from '../metrics/result.js';
import { describeDeviceFilter, describeHistograms } from '../telemetry/capture.js';
import type { HistogramReport } from '../telemetry/capture.js';
import type { Bucket, LatencyTracingOutcome, TraceCapture } from '../metrics/trace-capture.js';
import { distillFio } from '../telemetry/distill.js';
import type { DistillExtras, Distilled } from '../telemetry/distill.js';
import type { DeviceLatencyTracingJson, LatencyTracingJson, TracedHistogramJson } from './tracing-schema.js';

export function histogramJson(h: HistogramReport): TracedHistogramJson {
  const s = h.stats;
  const range = (r: readonly [number, number | null] | null): [number, number | null] | null => (r === null ? null : [r[0], r[1]]);
  return {
    unit: h.unit,
    layer: h.layer,
    description: h.description,
    buckets: h.buckets.map((b) => ({ range_us: [b.lo, b.hi], count: b.count })),
    count: s.samples,
    p50: s.p50,
    p95: s.p95,
    p99: s.p99,
    p50_bucket: range(s.p50Bucket),
    p95_bucket: range(s.p95Bucket),
    p99_bucket: range(s.p99Bucket),
    min_bucket: s.minBucket,
    max_bucket: s.maxBucket,
    reason: h.reason,
  };
}

export function deviceLatencyTracingJson(reports: readonly HistogramReport[]): DeviceLatencyTracingJson {
  return Object.fromEntries(reports.map((h) => [h.name, histogramJson(h)])) as DeviceLatencyTracingJson;
}

/** Exact block totals of the window from the traced counters. */
export function blockRequests(c: TraceCapture): NonNullable<LatencyTracingJson['block_requests']> {
  const v = (k: string): number => c.scalars[k] ?? 0;
  return {
    read: v('issued_read'),
    write: v('issued_write'),
    read_bytes: v('bytes_read'),
    write_bytes: v('bytes_write'),
    requeued_reissues: v('reissued'),
    completed_read: v('completed_read'),
    completed_write: v('completed_write'),
    completed_read_bytes: v('completed_bytes_read'),
    completed_write_bytes: v('completed_bytes_write'),
    inflight_counter_at_end: v('inflight'),
    device_time_sec: (v('d2c_sum_us_read') + v('d2c_sum_us_write')) / 1e6,
  };
}

/** What the run's distiller is given besides the capture: the tool's own storage operations back up the syscall counts. */
export function runDistillExtras(r: RunResult, t: LatencyTracingOutcome): DistillExtras {
  const st = r.recorded.traffic.storage;
  return {
    tool: {
      reads: st?.readOps ?? 0,
      writes: (st?.writeOps ?? 0) + (st?.demoteInOps ?? 0),
      source: "kv-cache's storage-tier operations (whole entries: hit reads; placements and demotions in)",
    },
    ...(t.nfs !== undefined ? { nfs: t.nfs } : {}),
  };
}

/** The fio job of a run: its header names the run. */
export function runFioJob(r: RunResult, capture: TraceCapture, extras: DistillExtras): Distilled {
  return distillFio({
    capture,
    ...extras,
    jobName: 'kv-cache-traced',
    about: [
      `fio job distilled by kvcache-bench ${r.toolVersion} (kv-cache --enable-latency-tracing), run started ${r.startedAt}`,
      `model ${r.modelKey} (${r.bytesPerToken} KV bytes/token), nominal duration ${r.nominalDurationSec} s, storage ${r.storage.dir} (${r.storage.ioMode} I/O)`,
    ],
  });
}

export interface TracingFields {
  readonly root: { device_latency_tracing?: DeviceLatencyTracingJson; fio_workload?: string };
  readonly block?: LatencyTracingJson;
}

export function tracingFields(r: RunResult): TracingFields {
  const t = r.latencyTracing;
  if (t === undefined) return { root: {} };
  const c = t.capture;
  if (c === undefined) {
    return {
      root: {},
      block: {
        status: 'unavailable',
        reason: t.failure ?? 'no capture',
        block_filter: null,
        process_id: null,
        window_sec: null,
        block_requests: null,
        output_truncated: false,
        fio: null,
      },
    };
  }
  const extras = runDistillExtras(r, t);
  const fio = runFioJob(r, c, extras);
  return {
    root: {
      device_latency_tracing: deviceLatencyTracingJson(describeHistograms(c, { selfRun: { ioMode: r.storage.ioMode } })),
      fio_workload: fio.ini,
    },
    block: tracedBlockJson(c, fio, extras),
  };
}

/** `latency_tracing` of a capture and its distilled job (also what `kv-cache trace` prints from). */
export function tracedBlockJson(c: TraceCapture, fio: Distilled, extras: DistillExtras): LatencyTracingJson {
  return {
    status: 'traced',
    reason: null,
    block_filter: describeDeviceFilter(c.filters.device),
    process_id: c.filters.pid,
    window_sec: c.windowSec,
    block_requests: blockRequests(c),
    output_truncated: c.truncated,
    fio: { size_source: fio.sizeSource, bssplit: fio.bssplit, rwmixread: fio.rwmixread, iodepth: fio.iodepth, warnings: [...fio.warnings] },
    distill_inputs: distillInputsJson(c, extras),
  };
}

const sizeBuckets = (b: readonly Bucket[] | undefined): Array<{ range_kib: [number, number | null]; count: number }> =>
  (b ?? []).map((x) => ({ range_kib: [x.lo, x.hi], count: x.count }));

/** Everything but the histograms that the distiller read, so that distill-fio on the results file gives the same job. */
function distillInputsJson(c: TraceCapture, extras: DistillExtras): NonNullable<LatencyTracingJson['distill_inputs']> {
  return {
    call_sizes: { read: sizeBuckets(c.histograms.vfs_read_kb), write: sizeBuckets(c.histograms.vfs_write_kb) },
    tool_ops: extras.tool === undefined ? null : { reads: extras.tool.reads, writes: extras.tool.writes, source: extras.tool.source },
    nfs: extras.nfs === undefined ? null : { rsize: extras.nfs.rsize, wsize: extras.nfs.wsize },
  };
}
