// One tracing session around a piece of work: resolve the filters, start bpftrace, and on stop parse
// what it printed into a TraceCapture. Used by the run (--enable-latency-tracing, around the measured
// phase) and by `kv-cache trace`. Never prints: the lines for the user and the warnings are returned.
import { captureFromOutput, describeDeviceFilter } from './capture.js';
import type { DeviceFilter, LatencyTracingOutcome, TraceFilters } from '../metrics/trace-capture.js';
import { kernelDevT, tracingProgram } from './program.js';
import { deviceFilterOf, nfsTransferSizes } from './device-filter.js';
import type { StorageDevice } from '../metrics/diskstats.js';
import { startTrace } from './tracer.js';
import type { TracerOptions } from './tracer.js';

export interface TracingSession {
  /** bpftrace is attached (false: `warnings` says why not). */
  readonly active: boolean;
  /** Lines saying which filters are in force (or why tracing is off). */
  readonly lines: readonly string[];
  /** Warnings for the results: the device fallback, or the failure. */
  readonly warnings: readonly string[];
  /** The capture's window (the distiller's rates and Little's law) starts now; see RunningTrace. */
  restartWindow(): void;
  stop(): Promise<LatencyTracingOutcome>;
}

const SYSCALL_NAMES = {
  positioned: 'pread64/preadv/pwrite64/pwritev/fsync/fdatasync',
  all: 'read/write/pread64/preadv/pwrite64/pwritev/fsync/fdatasync',
};

export function filterLine(f: TraceFilters): string {
  return `Latency tracing: block probes on ${describeDeviceFilter(f.device)}; syscall probes (${SYSCALL_NAMES[f.syscalls]}) on ${f.pid === null ? 'every process' : `process ${f.pid}`}`;
}

export function deviceFallbackWarning(d: DeviceFilter): string | undefined {
  return d.kind === 'all'
    ? `latency tracing: block probes trace every device, because ${d.reason}: other devices' requests are in the block histograms`
    : undefined;
}

/** A session that never started: its outcome is the failure. */
function failed(message: string): TracingSession {
  const warning = `latency tracing unavailable: ${message}; the run continued without it`;
  return {
    active: false,
    lines: [`Latency tracing: OFF (${message})`],
    warnings: [warning],
    restartWindow: () => undefined,
    stop: () => Promise.resolve({ failure: message }),
  };
}

export async function startTracingSession(
  filters: TraceFilters,
  tracer: TracerOptions,
  nfs?: { readonly rsize: number; readonly wsize: number },
): Promise<TracingSession> {
  const devT = filters.device.kind === 'device' ? kernelDevT(filters.device.major, filters.device.minor) : undefined;
  const program = tracingProgram({
    ...(filters.pid !== null ? { pid: filters.pid } : {}),
    syscalls: filters.syscalls,
    ...(devT !== undefined ? { devT } : {}),
  });
  const started = await startTrace(program, tracer);
  if (!started.ok) return failed(started.message);
  const fallback = deviceFallbackWarning(filters.device);
  return {
    active: true,
    lines: [filterLine(filters)],
    warnings: fallback === undefined ? [] : [fallback],
    restartWindow: () => started.trace.restartWindow(),
    async stop(): Promise<LatencyTracingOutcome> {
      const s = await started.trace.stop();
      const capture = captureFromOutput(s.output, filters, s.windowSec);
      const out = { capture, ...(nfs !== undefined ? { nfs } : {}) };
      return s.killed ? { ...out, capture: { ...capture, truncated: true } } : out;
    },
  };
}

/** The storage a run traces: its local directory (for the NFS mount's sizes) and its block device, resolved once. */
export interface TracedStorage {
  readonly dir?: string;
  readonly device: StorageDevice;
}

/** --enable-latency-tracing: this process's syscalls, the block device under the storage (none: trace mode, no local files). */
export async function startRunTracing(storage: TracedStorage, tracer: TracerOptions): Promise<TracingSession> {
  if (storage.device.kind === 'none') return failed(storage.device.reason);
  const device = deviceFilterOf(storage.device);
  const nfs = storage.dir === undefined ? undefined : await nfsTransferSizes(storage.dir);
  return startTracingSession({ device, pid: process.pid, syscalls: 'positioned' }, tracer, nfs);
}
