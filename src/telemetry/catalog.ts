// The reference's 15 tracing histograms (block layer, VFS, fsync, queue depth and LBA of its latency
// tracing), in its order, with their unit and what each measures here. Names and units are the
// reference's; how each is captured is ours (program.ts).

export const HISTOGRAM_NAMES = [
  'q2d_read_us',
  'q2d_write_us',
  'd2c_read_us',
  'd2c_write_us',
  'vfs_read_us',
  'vfs_write_us',
  'fsync_us',
  'write_to_fsync_us',
  'fadvise_to_read_us',
  'bssplit_read_kb',
  'bssplit_write_kb',
  'qd_read',
  'qd_write',
  'lba_read_gb',
  'lba_write_gb',
] as const;
export type HistogramName = (typeof HISTOGRAM_NAMES)[number];

/** 'us' microseconds, 'KiB' 1024 bytes, 'requests' a count, 'GiB' 2^30-byte offsets (10-GiB linear buckets). */
export type HistogramUnit = 'us' | 'KiB' | 'requests' | 'GiB';

export interface HistogramInfo {
  readonly unit: HistogramUnit;
  /** Block-layer (device-filtered) or the traced process's syscalls (pid-filtered). */
  readonly layer: 'block' | 'syscall';
  readonly description: string;
}

export const HISTOGRAMS: Readonly<Record<HistogramName, HistogramInfo>> = {
  q2d_read_us: { unit: 'us', layer: 'block', description: 'read requests: inserted into the I/O scheduler → issued to the driver' },
  q2d_write_us: { unit: 'us', layer: 'block', description: 'write requests: inserted into the I/O scheduler → issued to the driver' },
  d2c_read_us: { unit: 'us', layer: 'block', description: 'read requests: issued to the driver → completed (device time)' },
  d2c_write_us: { unit: 'us', layer: 'block', description: 'write requests: issued to the driver → completed (device time)' },
  vfs_read_us: { unit: 'us', layer: 'syscall', description: 'read system calls of the process (pread64/preadv): entry → return' },
  vfs_write_us: { unit: 'us', layer: 'syscall', description: 'write system calls of the process (pwrite64/pwritev): entry → return' },
  fsync_us: { unit: 'us', layer: 'syscall', description: 'fsync/fdatasync calls of the process: entry → return' },
  write_to_fsync_us: { unit: 'us', layer: 'syscall', description: "a write's return → the next fsync/fdatasync on the same thread" },
  fadvise_to_read_us: { unit: 'us', layer: 'syscall', description: "fadvise64's return → the next read on the same thread" },
  bssplit_read_kb: { unit: 'KiB', layer: 'block', description: 'read request sizes issued to the device' },
  bssplit_write_kb: { unit: 'KiB', layer: 'block', description: 'write request sizes issued to the device' },
  qd_read: { unit: 'requests', layer: 'block', description: 'requests in flight on the device when a read is issued (both directions)' },
  qd_write: { unit: 'requests', layer: 'block', description: 'requests in flight on the device when a write is issued (both directions)' },
  lba_read_gb: { unit: 'GiB', layer: 'block', description: 'read offsets on the device (GiB from its start, 10-GiB buckets)' },
  lba_write_gb: { unit: 'GiB', layer: 'block', description: 'write offsets on the device (GiB from its start, 10-GiB buckets)' },
};
