// The machine a run measured on, captured once when its result is assembled, so reports describe the
// host without probing it (a report may be written later, or elsewhere, from a results file).
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { pageBacking } from '../data/huge-pages.js';
import type { StorageDevice } from '../metrics/diskstats.js';
import type { MachineContext } from '../metrics/result.js';

/** The storage a run wrote to: its local directory (none in trace mode or without files), file system and device. */
export interface CacheDirInfo {
  readonly dir?: string;
  readonly fileSystem: string;
  /** Resolved once when the storage was opened (engine/tier-stack.ts). */
  readonly device: StorageDevice;
}

function cacheDirContext(storage: CacheDirInfo): MachineContext['cacheDir'] {
  if (storage.dir === undefined) return null;
  const d = storage.device;
  return {
    fileSystem: storage.fileSystem,
    blockDevice: d.kind === 'device' ? d.device.name : null,
    deviceModel: d.kind === 'device' ? d.model : null,
  };
}

/** CPU, memory, kernel, Node and the cache dir's device (as the storage's description resolved it). */
export function captureMachine(storage: CacheDirInfo): MachineContext {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cpuCount: availableParallelism(),
    totalMemoryBytes: totalmem(),
    kernelRelease: release(),
    nodeVersion: process.version,
    ioBuffers: pageBacking().description,
    cacheDir: cacheDirContext(storage),
  };
}

/**
 * The line printed before a run starts, naming what is about to be measured: the directory, its file
 * system, the block device and its model when they can be resolved, the I/O mode and how the I/O
 * buffers are backed (it changes the requests the device sees). Printed first so
 * a run against the wrong disk can be stopped before it has cost an hour.
 */
export function storageUnderTest(
  machine: MachineContext,
  storage: { readonly dir?: string; readonly ioMode: string; readonly headline?: string },
): string {
  const d = machine.cacheDir;
  if (storage.dir === undefined || d === null) return `Storage under test: ${storage.headline ?? 'none (no local directory)'}`;
  const device =
    d.blockDevice === null
      ? 'block device not resolvable (tmpfs, overlay, network file system or RAID?)'
      : `device ${d.blockDevice}${d.deviceModel !== null ? ` (${d.deviceModel})` : ' (model unknown)'}`;
  return `Storage under test: ${storage.dir} — file system ${d.fileSystem}, ${device}, ${storage.ioMode} I/O; buffers in ${machine.ioBuffers}`;
}
