// What a block-layer tracing session captured, as plain data: it travels in the RunResult, the reports
// read it, and `kv-cache distill-fio` rebuilds it from saved bpftrace output. Declared here, below
// telemetry/ (which produces it) and report/ (which reads it), so the RunResult never imports telemetry.

/** One bucket: values v with lo ≤ v < hi; `hi` null for an open-ended top bucket (`[8000, ...)`). */
export interface Bucket {
  readonly lo: number;
  readonly hi: number | null;
  readonly count: number;
}

/** Which syscalls count as the process's own file I/O in vfs_read_us / vfs_write_us. */
export type SyscallSet = 'positioned' | 'all';

/** Which block requests were traced: one disk, or every device with the reason why. */
export type DeviceFilter =
  | {
      readonly kind: 'device';
      readonly name: string;
      readonly major: number;
      readonly minor: number;
      /** Devices walked from the path's own device to the disk, e.g. ['vda1', 'vda']. */
      readonly chain: readonly string[];
    }
  | { readonly kind: 'all'; readonly reason: string }
  /** Rebuilt from a saved file: only its description is known. */
  | { readonly kind: 'recorded'; readonly text: string };

export interface TraceFilters {
  readonly device: DeviceFilter;
  /** Thread group whose syscalls were traced; null when unknown (saved output). */
  readonly pid: number | null;
  readonly syscalls: SyscallSet;
}

export interface TraceCapture {
  readonly filters: TraceFilters;
  /** Seconds from bpftrace attached to the stop signal; null when unknown (saved output). */
  readonly windowSec: number | null;
  /** Every histogram map printed, by name (the 15, plus vfs_read_kb / vfs_write_kb). */
  readonly histograms: Readonly<Record<string, readonly Bucket[]>>;
  /** Every scalar map printed (issued_*, completed_*, bytes_*, d2c_sum_us_*). */
  readonly scalars: Readonly<Record<string, number>>;
  /** bpftrace's output ended inside a bucket line. */
  readonly truncated: boolean;
  /** Lines inside a histogram that were not buckets. */
  readonly unreadLines: number;
}

/** The outcome the results carry: a capture, or the one reason there is none. */
export interface LatencyTracingOutcome {
  readonly capture?: TraceCapture;
  readonly failure?: string;
  /** The NFS mount's rsize/wsize under the traced directory, for the distiller. */
  readonly nfs?: { readonly rsize: number; readonly wsize: number };
}
