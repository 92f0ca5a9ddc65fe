// The bpftrace program behind --enable-latency-tracing and `kv-cache trace`: tracepoints only (many
// cloud kernels have BTF and tracepoints but no kprobes, so the reference's vfs_read/vfs_write kprobes
// cannot attach there). Block probes are filtered by the device (kernel dev_t), syscall probes by the
// traced process's thread group (`pid` in bpftrace is the tgid), never by `comm` (RC-53).
//
// Histograms keep the reference's 15 names; @vfs_read_kb / @vfs_write_kb (sizes the process asked
// for, the distiller's fallback) and the scalar maps (@issued_*, @bytes_*, @completed_*, @completed_bytes_*,
// @reissued, @d2c_sum_us_*) are ours: exact totals the histograms can only approximate, for Little's law and for
// the comparison with /proc/diskstats. Per-request maps are cleared in END so that only results are
// printed when bpftrace exits on SIGINT; @inflight is left to print: the counter's value at the end
// shows how far it drifted (requests whose completion was never paired stay counted).
import type { SyscallSet } from '../metrics/trace-capture.js';

/** A Linux kernel dev_t as block tracepoints carry it: major << 20 | minor (not glibc's encoding). */
export function kernelDevT(major: number, minor: number): number {
  return major * 2 ** 20 + minor;
}

export interface ProgramOptions {
  /** Thread group id whose syscalls are traced; undefined: every process (block probes only matter then). */
  readonly pid?: number;
  /** Kernel dev_t (kernelDevT) of the disk whose requests are traced; undefined: every device. */
  readonly devT?: number;
  /**
   * 'positioned': pread64/pwrite64/preadv/pwritev (+2) only — what kv-cache's libuv file I/O uses; its
   * plain read/write calls are event-loop wake-ups and pipes, not storage. 'all' adds read and write,
   * for an arbitrary process (`kv-cache trace`).
   */
  readonly syscalls: SyscallSet;
}

const READ_CALLS = ['pread64', 'preadv', 'preadv2'];
const WRITE_CALLS = ['pwrite64', 'pwritev', 'pwritev2'];

const probes = (kind: 'enter' | 'exit', calls: readonly string[]): string =>
  calls.map((c) => `tracepoint:syscalls:sys_${kind}_${c}`).join(',\n');

/** The program text; every filter is a literal in it (bpftrace 0.17 has no map-based parameters). */
export function tracingProgram(o: ProgramOptions): string {
  const dev = o.devT === undefined ? '' : `args->dev == ${o.devT}`;
  const pid = o.pid === undefined ? '' : `pid == ${o.pid}`;
  const and = (...parts: string[]): string => {
    const p = parts.filter((x) => x !== '');
    return p.length === 0 ? '' : `/${p.join(' && ')}/`;
  };
  const reads = o.syscalls === 'all' ? [...READ_CALLS, 'read'] : READ_CALLS;
  const writes = o.syscalls === 'all' ? [...WRITE_CALLS, 'write'] : WRITE_CALLS;
  // The direction is rwbs's first letter, or its second after a pre-flush 'F' ("FWS"): a write with a
  // flush before it is still a write of its bytes. Pure flushes ("FN") and discards ('D') are left out.
  // rwbs is a string to bpftrace 0.17 (no indexing), hence the prefix comparisons; 82 = 'R', 87 = 'W'.
  const dir =
    '$c = strncmp(args->rwbs, "R", 1) == 0 || strncmp(args->rwbs, "FR", 2) == 0 ? 82 : (strncmp(args->rwbs, "W", 1) == 0 || strncmp(args->rwbs, "FW", 2) == 0 ? 87 : 0);';
  return `// kvcache-bench block-layer and syscall tracing (generated)
tracepoint:block:block_rq_insert ${and(dev)}
{
  @insert_ns[args->dev, args->sector] = nsecs;
}

tracepoint:block:block_rq_issue ${and(dev)}
{
  ${dir}
  if ($c == 82 || $c == 87) {
    // A requeued request (the driver was busy) issued again is one request, counted once; its device
    // time restarts. The reference counts it again and its in-flight counter drifts upwards.
    $again = @requeued[args->dev, args->sector] != 0;
    $t = @insert_ns[args->dev, args->sector];
    if ($t != 0) {
      // Queue time of the first issue only: a requeued request's second wait is the driver's back-pressure.
      if (!$again) {
        if ($c == 82) { @q2d_read_us = hist((nsecs - $t) / 1000); } else { @q2d_write_us = hist((nsecs - $t) / 1000); }
      }
      delete(@insert_ns[args->dev, args->sector]);
    }
    delete(@requeued[args->dev, args->sector]);
    @issue_ns[args->dev, args->sector] = nsecs;
    @inflight = @inflight + 1;
    if ($again) {
      @reissued = count();
    } else {
      if ($c == 82) {
        @issued_read = count();
        @bytes_read = sum(args->bytes);
        @bssplit_read_kb = hist(args->bytes / 1024);
        @qd_read = hist(@inflight);
        @lba_read_gb = lhist(args->sector >> 21, 0, 8000, 10);
      } else {
        @issued_write = count();
        @bytes_write = sum(args->bytes);
        @bssplit_write_kb = hist(args->bytes / 1024);
        @qd_write = hist(@inflight);
        @lba_write_gb = lhist(args->sector >> 21, 0, 8000, 10);
      }
    }
  }
}

// Back from the driver unserved: no longer on the device until it is issued again.
tracepoint:block:block_rq_requeue ${and(dev)}
{
  if (@issue_ns[args->dev, args->sector] != 0) {
    delete(@issue_ns[args->dev, args->sector]);
    @requeued[args->dev, args->sector] = 1;
    @inflight = @inflight > 0 ? @inflight - 1 : 0;
  }
}

tracepoint:block:block_rq_complete ${and(dev)}
{
  ${dir}
  // Every completion in the window, as /proc/diskstats counts them (requests issued before the
  // window included); the paired ones (issue seen) give the device time.
  if ($c == 82) { @completed_read = count(); @completed_bytes_read = sum(args->nr_sector * 512); }
  if ($c == 87) { @completed_write = count(); @completed_bytes_write = sum(args->nr_sector * 512); }
  $t = @issue_ns[args->dev, args->sector];
  if ($t != 0 && ($c == 82 || $c == 87)) {
    $us = (nsecs - $t) / 1000;
    if ($c == 82) { @d2c_read_us = hist($us); @d2c_sum_us_read = sum($us); }
    else { @d2c_write_us = hist($us); @d2c_sum_us_write = sum($us); }
  }
  if ($t != 0) {
    delete(@issue_ns[args->dev, args->sector]);
    // Never below zero: the counter is racy across CPUs (no atomic add on plain maps in bpftrace 0.17);
    // the distiller's iodepth uses Little's law instead.
    @inflight = @inflight > 0 ? @inflight - 1 : 0;
  }
}

${probes('enter', reads)}
${and(pid)}
{
  @read_ns[tid] = nsecs;
  $f = @fadvise_ns[tid];
  if ($f != 0) { @fadvise_to_read_us = hist((nsecs - $f) / 1000); delete(@fadvise_ns[tid]); }
}

${probes('exit', reads)}
${and(pid)}
{
  $t = @read_ns[tid];
  if ($t != 0) { @vfs_read_us = hist((nsecs - $t) / 1000); delete(@read_ns[tid]); }
  if (args->ret > 0) { @vfs_read_kb = hist((uint64)args->ret / 1024); }
}

${probes('enter', writes)}
${and(pid)}
{
  @write_ns[tid] = nsecs;
}

${probes('exit', writes)}
${and(pid)}
{
  $t = @write_ns[tid];
  if ($t != 0) { @vfs_write_us = hist((nsecs - $t) / 1000); delete(@write_ns[tid]); @last_write_ns[tid] = nsecs; }
  if (args->ret > 0) { @vfs_write_kb = hist((uint64)args->ret / 1024); }
}

tracepoint:syscalls:sys_enter_fsync,
tracepoint:syscalls:sys_enter_fdatasync
${and(pid)}
{
  @fsync_ns[tid] = nsecs;
  $w = @last_write_ns[tid];
  if ($w != 0) { @write_to_fsync_us = hist((nsecs - $w) / 1000); delete(@last_write_ns[tid]); }
}

tracepoint:syscalls:sys_exit_fsync,
tracepoint:syscalls:sys_exit_fdatasync
${and(pid)}
{
  $t = @fsync_ns[tid];
  if ($t != 0) { @fsync_us = hist((nsecs - $t) / 1000); delete(@fsync_ns[tid]); }
}

tracepoint:syscalls:sys_exit_fadvise64
${and(pid)}
{
  @fadvise_ns[tid] = nsecs;
}

END
{
  clear(@insert_ns); clear(@issue_ns); clear(@requeued); clear(@read_ns); clear(@write_ns); clear(@fsync_ns);
  clear(@last_write_ns); clear(@fadvise_ns);
}
`;
}
