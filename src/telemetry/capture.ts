// What one tracing session captured, as plain data (it travels in the RunResult and is rebuilt from
// saved bpftrace output by `kv-cache distill-fio`), and the per-histogram view the reports show:
// buckets, statistics, and a reason when a histogram has no samples, never a silently empty one.
import { HISTOGRAM_NAMES, HISTOGRAMS } from './catalog.js';
import type { HistogramName, HistogramUnit } from './catalog.js';
import { histogramStats, parseBpftraceOutput } from './histogram.js';
import type { HistogramStats } from './histogram.js';
import type { Bucket, DeviceFilter, TraceCapture, TraceFilters } from '../metrics/trace-capture.js';

export function captureFromOutput(text: string, filters: TraceFilters, windowSec: number | null): TraceCapture {
  const p = parseBpftraceOutput(text);
  return {
    filters,
    windowSec,
    histograms: Object.fromEntries(p.histograms),
    scalars: Object.fromEntries(p.scalars),
    truncated: p.truncated,
    unreadLines: p.unreadLines.length,
  };
}

export function describeDeviceFilter(d: DeviceFilter): string {
  if (d.kind === 'all') return `all block devices (${d.reason})`;
  if (d.kind === 'recorded') return d.text;
  const via = d.chain.length > 1 ? ` via ${d.chain.slice(0, -1).join(' → ')}` : '';
  return `${d.name} (${d.major}:${d.minor})${via}`;
}

/** What the reports need to explain an empty histogram. */
export interface ReasonContext {
  /** The traced process is kv-cache itself (--enable-latency-tracing), with its storage I/O mode. */
  readonly selfRun?: { readonly ioMode: string };
}

export interface HistogramReport {
  readonly name: HistogramName;
  readonly unit: HistogramUnit;
  readonly layer: 'block' | 'syscall';
  readonly description: string;
  readonly buckets: readonly Bucket[];
  readonly stats: HistogramStats;
  /** Why there are no samples (null when there are). */
  readonly reason: string | null;
}

const directionOf = (name: HistogramName): 'read' | 'write' => (name.includes('read') ? 'read' : 'write');

function emptyReason(name: HistogramName, c: TraceCapture, ctx: ReasonContext): string {
  const dir = directionOf(name);
  const device = c.filters.device.kind === 'device' ? c.filters.device.name : 'any device';
  const blockNone = `no ${dir} requests reached ${device} in the window${
    dir === 'read' && ctx.selfRun?.ioMode === 'buffered' ? ' (buffered I/O: the reads were served from the page cache)' : ''
  }`;
  const proc = c.filters.pid === null ? 'the traced process' : `process ${c.filters.pid}`;
  const calls = (kind: string): string => `${proc} made no ${kind} calls in the window`;
  switch (name) {
    case 'q2d_read_us':
    case 'q2d_write_us':
      return (c.histograms[`d2c_${dir}_us`] ?? []).length > 0
        ? 'no request was inserted into an I/O scheduler before its issue (scheduler none, or issued directly): there is no queue time to measure'
        : blockNone;
    case 'vfs_read_us':
      return calls(c.filters.syscalls === 'all' ? 'read/pread64/preadv' : 'pread64/preadv');
    case 'vfs_write_us':
      return calls(c.filters.syscalls === 'all' ? 'write/pwrite64/pwritev' : 'pwrite64/pwritev');
    case 'fsync_us':
      return calls('fsync/fdatasync');
    case 'write_to_fsync_us':
      return `no fsync/fdatasync of ${proc} followed a write on the same thread`;
    case 'fadvise_to_read_us':
      return ctx.selfRun !== undefined
        ? 'kv-cache never calls posix_fadvise (Node.js has no binding for it; under O_DIRECT there is no page cache to advise)'
        : `${proc} made no fadvise64 followed by a read on the same thread`;
    default:
      return blockNone;
  }
}

/** The 15 histograms in the reference's order, each with its statistics or the reason it is empty. */
export function describeHistograms(c: TraceCapture, ctx: ReasonContext = {}): HistogramReport[] {
  return HISTOGRAM_NAMES.map((name) => {
    const buckets = c.histograms[name] ?? [];
    const stats = histogramStats(buckets);
    const info = HISTOGRAMS[name];
    const alwaysAbsent = name === 'fadvise_to_read_us' && ctx.selfRun !== undefined;
    return {
      name,
      unit: info.unit,
      layer: info.layer,
      description: info.description,
      buckets,
      stats,
      reason: stats.samples === 0 || alwaysAbsent ? emptyReason(name, c, ctx) : null,
    };
  });
}
