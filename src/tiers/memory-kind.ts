// The `memory` storage backend: the storage tier's entries kept in RAM (a MemoryBackend, copies on the
// calling thread), for testing the harness without a disk. It measures no storage device: there is no
// directory, no block device and no free space to take a share of, so --storage-capacity-gb is
// required, and the validity verdict calls such a run not a storage measurement (inRam: 'backend').
import { MemoryBackend } from './memory.js';
import type { OpenedStorage, StorageKind } from './storage-kind.js';

const NO_CAPACITY = '--storage-backend memory needs --storage-capacity-gb > 0: RAM has no free space to take a share of';

function openMemory(): Promise<OpenedStorage> {
  return Promise.resolve({
    backend: new MemoryBackend('storage'),
    description: {
      kind: 'memory',
      location: '(none: memory backend)',
      noDevice: 'the memory storage backend keeps entries in RAM: there is no block device',
      headline: 'none (--storage-backend memory: entries in RAM, no device I/O; not a storage measurement)',
      ioMode: 'none (memory backend)',
      fileSystem: 'none (RAM)',
      inRam: 'backend',
    },
    warnings: ['--storage-backend memory: the storage tier keeps its entries in RAM; this run tests the harness, not a storage device'],
    leftovers: () => Promise.resolve({ found: null, warnings: [] }), // nothing outlives a process
    // capacityProblem refuses a missing capacity at start; this is the guard behind it.
    limitBytes: (capacityBytes) => (capacityBytes > 0 ? Promise.resolve(capacityBytes) : Promise.reject(new RangeError(NO_CAPACITY))),
    // The cache keeps the tier within its limit and RAM refuses no write with a "full" error.
    fullness: { where: 'memory', isFullError: () => false, space: () => Promise.resolve(undefined) },
  });
}

export const MEMORY_STORAGE: StorageKind = {
  help: 'entries in RAM: tests the harness, measures no device (needs --storage-capacity-gb)',
  usesCacheDir: false,
  capacityProblem: (capacityGiB) => (capacityGiB > 0 ? undefined : NO_CAPACITY),
  open: openMemory,
};
