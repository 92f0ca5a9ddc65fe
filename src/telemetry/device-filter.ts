// Which block device the block probes are filtered on. The cache dir's device is the one the run
// resolved for its device figures (metrics/diskstats.ts: a partition to its disk, a dm/md over one disk to that
// disk): block tracepoints report the whole disk's dev_t, never a partition's. A directory on no
// single disk (tmpfs, NFS, FUSE, overlay, md/dm over several disks) traces every device, with a warning.
import { readFile, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { resolveBlockDevice, storageDeviceOf } from '../metrics/diskstats.js';
import type { StorageDevice } from '../metrics/diskstats.js';
import type { DeviceFilter } from '../metrics/trace-capture.js';

/** The filter for a storage device already resolved (`none` has no filter: the caller traces nothing). */
export function deviceFilterOf(d: Exclude<StorageDevice, { kind: 'none' }>): DeviceFilter {
  if (d.kind === 'device')
    return { kind: 'device', name: d.device.name, major: d.device.major, minor: d.device.minor, chain: d.device.chain };
  const where = d.devT === undefined ? `${d.path} (${d.error ?? 'device unknown'})` : `${d.path} (device ${d.devT.major}:${d.devT.minor})`;
  return {
    kind: 'all',
    reason: `${where} is on no single block device (tmpfs, NFS, FUSE, overlay, or md/dm over several disks)`,
  };
}

export async function deviceFilterForPath(path: string, sysRoot = '/sys'): Promise<DeviceFilter> {
  const d = await storageDeviceOf(path, sysRoot);
  return d.kind === 'none' ? { kind: 'all', reason: d.reason } : deviceFilterOf(d);
}

/** `--device DEV`: a kernel name (`nvme0n1`, `sda2`) or its /dev path; a partition traces its disk. */
export async function deviceFilterForName(dev: string, sysRoot = '/sys'): Promise<DeviceFilter | undefined> {
  const name = basename(dev);
  const text = await readFile(join(sysRoot, 'class', 'block', name, 'dev'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const [major, minor] = text.trim().split(':').map(Number);
  if (major === undefined || minor === undefined) return undefined;
  const disk = await resolveBlockDevice(major, minor, sysRoot).catch(() => undefined);
  if (disk === undefined) return { kind: 'all', reason: `${name} is a device over several disks` };
  return { kind: 'device', name: disk.name, major: disk.major, minor: disk.minor, chain: disk.chain };
}

/** rsize/wsize of the NFS mount holding `path` (longest matching mount point), when it is on NFS. */
export async function nfsTransferSizes(
  path: string,
  mountsFile = '/proc/mounts',
): Promise<{ readonly rsize: number; readonly wsize: number } | undefined> {
  const real = await realpath(path).catch(() => path);
  const text = await readFile(mountsFile, 'utf8').catch(() => '');
  let best: { point: string; type: string; opts: string } | undefined;
  for (const line of text.split('\n')) {
    const [, point = '', type = '', opts = ''] = line.split(' ');
    const p = point.replace(/\\040/g, ' ');
    const inside = real === p || real.startsWith(p.endsWith('/') ? p : `${p}/`);
    if (inside && (best === undefined || p.length > best.point.length)) best = { point: p, type, opts };
  }
  if (!best?.type.startsWith('nfs')) return undefined;
  const opt = (k: string): number | undefined => {
    const m = new RegExp(`(?:^|,)${k}=(\\d+)`).exec(best.opts);
    return m === null ? undefined : Number(m[1]);
  };
  const rsize = opt('rsize');
  const wsize = opt('wsize');
  return rsize !== undefined && wsize !== undefined ? { rsize, wsize } : undefined;
}
