// The machine a run measured on, captured once when its result is assembled, so reports describe the
// host without probing it (a report may be written later, or elsewhere, from a results file).
import { readFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { pageBacking } from '../data/huge-pages.js';
import { deviceForPath } from '../metrics/diskstats.js';
import type { MachineContext } from '../metrics/result.js';

/** The storage a run wrote to: its directory (none in trace mode) and its file system's name. */
export interface CacheDirInfo {
  readonly dir?: string;
  readonly fileSystem: string;
}

/** The device's model string as the kernel reports it (e.g. NVMe, SCSI), or null. */
async function deviceModel(name: string, sysRoot: string): Promise<string | null> {
  const model = await readFile(join(sysRoot, 'block', name, 'device', 'model'), 'utf8').catch(() => undefined);
  const trimmed = model?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}

async function cacheDirContext(storage: CacheDirInfo, sysRoot: string): Promise<MachineContext['cacheDir']> {
  if (storage.dir === undefined) return null;
  const device = await deviceForPath(storage.dir, sysRoot).catch(() => undefined);
  return {
    fileSystem: storage.fileSystem,
    blockDevice: device?.name ?? null,
    deviceModel: device === undefined ? null : await deviceModel(device.name, sysRoot),
  };
}

/** CPU, memory, kernel, Node and the cache dir's device; `sysRoot` lets tests use a fake /sys tree. */
export async function captureMachine(storage: CacheDirInfo, sysRoot = '/sys'): Promise<MachineContext> {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cpuCount: availableParallelism(),
    totalMemoryBytes: totalmem(),
    kernelRelease: release(),
    nodeVersion: process.version,
    ioBuffers: pageBacking().description,
    cacheDir: await cacheDirContext(storage, sysRoot),
  };
}

/**
 * The line printed before a run starts, naming what is about to be measured: the directory, its file
 * system, the block device and its model when they can be resolved, the I/O mode and how the I/O
 * buffers are backed (it changes the requests the device sees). Printed first so
 * a run against the wrong disk can be stopped before it has cost an hour.
 */
export function storageUnderTest(machine: MachineContext, storage: { readonly dir?: string; readonly ioMode: string }): string {
  const d = machine.cacheDir;
  if (storage.dir === undefined || d === null) return 'Storage under test: none (trace mode: null tiers, no device I/O)';
  const device =
    d.blockDevice === null
      ? 'block device not resolvable (tmpfs, overlay, network file system or RAID?)'
      : `device ${d.blockDevice}${d.deviceModel !== null ? ` (${d.deviceModel})` : ' (model unknown)'}`;
  return `Storage under test: ${storage.dir} — file system ${d.fileSystem}, ${device}, ${storage.ioMode} I/O; buffers in ${machine.ioBuffers}`;
}
