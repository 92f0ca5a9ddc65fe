// Device-level truth from the kernel: which block device holds a path, and its /proc/diskstats
// counters. A tier's own byte counts say what the benchmark asked for; these say what reached the
// device (e.g. buffered reads served from the page cache show up as ~0 device bytes, docs/reference-compat.md#rc-18).
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { messageOf } from '../util/errors.js';

/** /proc/diskstats counts 512-byte sectors whatever the device's logical block size. */
export const DISKSTATS_SECTOR_BYTES = 512;

export interface BlockDevice {
  /** Kernel name as in /proc/diskstats, e.g. 'nvme0n1', 'vda', 'sda'. */
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  /** Devices walked from the path's own device to this one, e.g. ['dm-0', 'sda2', 'sda']. */
  readonly chain: readonly string[];
}

/** One /proc/diskstats line; times in ms; fields a kernel does not report are 0. */
export interface DiskCounters {
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  readonly readOps: number;
  readonly readMerges: number;
  readonly readBytes: number;
  readonly readMs: number;
  readonly writeOps: number;
  readonly writeMerges: number;
  readonly writeBytes: number;
  readonly writeMs: number;
  readonly inFlight: number;
  readonly busyMs: number;
  readonly weightedMs: number;
  readonly discardOps: number;
  readonly discardBytes: number;
  readonly flushOps: number;
}

/** Counter growth between two snapshots of one device; `inFlight` is the later value. */
export type DiskDelta = DiskCounters;

/** Splits a Linux dev_t (as from stat with bigint: true) into major and minor (glibc encoding). */
export function splitDevT(dev: bigint): { major: number; minor: number } {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & 0xfffff000n);
  const minor = (dev & 0xffn) | ((dev >> 12n) & 0xffffff00n);
  return { major: Number(major), minor: Number(minor) };
}

/** Parses /proc/diskstats text (14, 18 or 20 fields a line depending on the kernel). */
export function parseDiskStats(text: string): DiskCounters[] {
  const rows: DiskCounters[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const name = f[2] ?? '';
    const n = (i: number): number => {
      const v = Number(f[i] ?? 0);
      return Number.isFinite(v) ? v : 0;
    };
    rows.push({
      name,
      major: n(0),
      minor: n(1),
      readOps: n(3),
      readMerges: n(4),
      readBytes: n(5) * DISKSTATS_SECTOR_BYTES,
      readMs: n(6),
      writeOps: n(7),
      writeMerges: n(8),
      writeBytes: n(9) * DISKSTATS_SECTOR_BYTES,
      writeMs: n(10),
      inFlight: n(11),
      busyMs: n(12),
      weightedMs: n(13),
      discardOps: n(14),
      discardBytes: n(16) * DISKSTATS_SECTOR_BYTES,
      flushOps: n(18),
    });
  }
  return rows;
}

/** The counters of device `name`; throws if /proc/diskstats has no such device. */
export async function readDiskStats(name: string, procFile = '/proc/diskstats'): Promise<DiskCounters> {
  const row = parseDiskStats(await readFile(procFile, 'utf8')).find((r) => r.name === name);
  if (row === undefined) throw new Error(`no block device '${name}' in ${procFile}`);
  return row;
}

export function diskDelta(before: DiskCounters, after: DiskCounters): DiskDelta {
  if (before.name !== after.name) throw new Error(`diskstats of '${before.name}' vs '${after.name}'`);
  const d = (k: keyof Omit<DiskCounters, 'name'>): number => after[k] - before[k];
  return {
    name: after.name,
    major: after.major,
    minor: after.minor,
    readOps: d('readOps'),
    readMerges: d('readMerges'),
    readBytes: d('readBytes'),
    readMs: d('readMs'),
    writeOps: d('writeOps'),
    writeMerges: d('writeMerges'),
    writeBytes: d('writeBytes'),
    writeMs: d('writeMs'),
    inFlight: after.inFlight,
    busyMs: d('busyMs'),
    weightedMs: d('weightedMs'),
    discardOps: d('discardOps'),
    discardBytes: d('discardBytes'),
    flushOps: d('flushOps'),
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function readMajorMinor(sysDir: string): Promise<{ major: number; minor: number }> {
  const [major, minor] = (await readFile(join(sysDir, 'dev'), 'utf8')).trim().split(':').map(Number);
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) {
    throw new Error(`unreadable ${join(sysDir, 'dev')}`);
  }
  return { major, minor };
}

const MAX_STACK_DEPTH = 8;

/**
 * The physical disk under block device MAJ:MIN: a partition resolves to its whole disk; a stacked
 * device (dm, md) with exactly one slave resolves through it; several slaves (RAID, striped LVM) or
 * no sysfs entry (tmpfs, overlay, NFS) give undefined. `sysRoot` lets tests use a fake /sys tree.
 */
export async function resolveBlockDevice(major: number, minor: number, sysRoot = '/sys'): Promise<BlockDevice | undefined> {
  const link = join(sysRoot, 'dev', 'block', `${major}:${minor}`);
  if (!(await exists(link))) return undefined;
  let dir = await realpath(link);
  const chain: string[] = [];
  for (let depth = 0; depth < MAX_STACK_DEPTH; depth++) {
    chain.push(basename(dir));
    if (await exists(join(dir, 'partition'))) {
      dir = dirname(dir);
      chain.push(basename(dir));
    }
    const slaves = await readdir(join(dir, 'slaves')).catch(() => []);
    if (slaves.length > 1) return undefined;
    const only = slaves[0];
    if (only === undefined) return { name: basename(dir), ...(await readMajorMinor(dir)), chain };
    dir = await realpath(join(dir, 'slaves', only));
  }
  return undefined;
}

/** The block device whose /proc/diskstats counters cover I/O to files under `path`, if any. */
export async function deviceForPath(path: string, sysRoot = '/sys'): Promise<BlockDevice | undefined> {
  const { dev } = await stat(path, { bigint: true });
  const { major, minor } = splitDevT(dev);
  return resolveBlockDevice(major, minor, sysRoot);
}

/**
 * The block device behind a storage location, resolved once per run or replay and read by everything
 * that needs it (device counters, the per-second series, the machine context, the tracing filter).
 * `unresolved`: a local path on no single disk (tmpfs, overlay, NFS, RAID), with its dev_t when stat
 * worked and the error when something failed; `none`: no device counters by design (trace mode, a
 * backend without local files), with the reason.
 */
export type StorageDevice =
  | { readonly kind: 'device'; readonly device: BlockDevice; readonly model: string | null }
  | {
      readonly kind: 'unresolved';
      readonly path: string;
      readonly devT?: { readonly major: number; readonly minor: number };
      readonly error?: string;
    }
  | { readonly kind: 'none'; readonly reason: string };

/** The device's model string as the kernel reports it (e.g. NVMe, SCSI), or null. */
async function deviceModel(name: string, sysRoot: string): Promise<string | null> {
  const model = await readFile(join(sysRoot, 'block', name, 'device', 'model'), 'utf8').catch(() => undefined);
  const trimmed = model?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}

/** The block device under `path` and its model; never throws (a failure is an `unresolved` with its error). */
export async function storageDeviceOf(path: string, sysRoot = '/sys'): Promise<StorageDevice> {
  let devT: { major: number; minor: number };
  try {
    devT = splitDevT((await stat(path, { bigint: true })).dev);
  } catch (e) {
    return { kind: 'unresolved', path, error: messageOf(e) };
  }
  const device = await resolveBlockDevice(devT.major, devT.minor, sysRoot).catch((e: unknown) => messageOf(e));
  if (typeof device === 'string') return { kind: 'unresolved', path, devT, error: device };
  if (device === undefined) return { kind: 'unresolved', path, devT };
  return { kind: 'device', device, model: await deviceModel(device.name, sysRoot) };
}

/** Snapshots one device's counters around a piece of work. */
export class DiskWatch {
  private constructor(
    readonly device: BlockDevice,
    private readonly procFile: string,
  ) {}

  /** A watch on the device holding `path`, or undefined when it cannot be resolved. */
  static async forPath(path: string, procFile = '/proc/diskstats'): Promise<DiskWatch | undefined> {
    const device = await deviceForPath(path);
    return device === undefined ? undefined : new DiskWatch(device, procFile);
  }

  /** A watch on `device` (resolved earlier, e.g. by storageDeviceOf). */
  static forDevice(device: BlockDevice, procFile = '/proc/diskstats'): DiskWatch {
    return new DiskWatch(device, procFile);
  }

  snapshot(): Promise<DiskCounters> {
    return readDiskStats(this.device.name, this.procFile);
  }

  /** Runs `work` and returns its result with the device's counter growth meanwhile. */
  async measure<T>(work: () => Promise<T>): Promise<{ result: T; delta: DiskDelta }> {
    const before = await this.snapshot();
    const result = await work();
    return { result, delta: diskDelta(before, await this.snapshot()) };
  }
}
