// The storage backends, one row per kind (fio's ioengine table is the model): --storage-backend's
// choices and the only place a kind is named. A new kind is a file implementing StorageKind
// (storage-kind.ts) plus its row here; the engine opens whatever row the run names.
import { FILE_STORAGE } from './file-kind.js';
import { MEMORY_STORAGE } from './memory-kind.js';
import { S3_STORAGE } from './s3-kind.js';
import type { ObjectStoreOptions, StorageKind } from './storage-kind.js';

export const STORAGE_KINDS = {
  file: FILE_STORAGE,
  memory: MEMORY_STORAGE,
  s3: S3_STORAGE,
} as const satisfies Readonly<Record<string, StorageKind>>;

export type StorageBackendName = keyof typeof STORAGE_KINDS;

/** The kinds' names, in table order (--storage-backend's choices). */
export const STORAGE_BACKENDS = Object.keys(STORAGE_KINDS) as StorageBackendName[];

export const DEFAULT_STORAGE_BACKEND: StorageBackendName = 'file';

export function storageKind(name: StorageBackendName): StorageKind {
  return STORAGE_KINDS[name];
}

/** A kind against the run's other storage flags, for the start-up checks: problems (exit 2, nothing made) and warnings. */
export function storageBackendChecks(
  name: StorageBackendName,
  capacityGiB: number,
  cacheDir: string | undefined,
  objectStore?: ObjectStoreOptions,
): { readonly problems: string[]; readonly warnings: string[] } {
  const kind = storageKind(name);
  const problem = kind.capacityProblem(capacityGiB);
  const unusedDir = !kind.usesCacheDir && cacheDir !== undefined;
  return {
    problems: [...(problem === undefined ? [] : [problem]), ...(kind.objectStoreProblems?.(objectStore) ?? [])],
    warnings: unusedDir ? [`--cache-dir ${cacheDir} is not used: --storage-backend ${name} keeps no files`] : [],
  };
}
