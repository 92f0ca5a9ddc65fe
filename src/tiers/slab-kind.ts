// The file kind with --kv-layout slab: what the registry needs around a SlabBackend (slab.ts). Like the
// flat layout (file-kind.ts) it lives under --cache-dir, reports earlier runs' files (its pool files
// carry the run id like entry files), says when the file system is full and which files a force-quit
// removes; unlike it, the tier's limit is the pool (whole slots) and the pool is laid out before
// anything is written.
import { fileNameForKey, MAX_PLAIN_FILE_NAME } from './file-names.js';
import { freeSpaceLimitBytes, RAM_FILE_SYSTEMS, spaceOf } from './fs-info.js';
import { SlabBackend } from './slab.js';
import { BlockFiles, blockFilesFor, fileCallsOf } from './block-file.js';
import type { IoMode } from './io-mode.js';
import type { LeftoverEntries, OpenedStorage, SlabLayoutOptions, StorageOpenOptions } from './storage-kind.js';

/** What the flat layout's kind lends the slab layout (passed in by file-kind.ts, so the two modules do not import each other). */
export interface FileKindParts {
  readonly fullErrors: ReadonlySet<string>;
  warnings(requested: IoMode, at: { readonly effectiveIoMode: IoMode; readonly dir: string; readonly fileSystem: string }): string[];
  leftovers(at: { readonly dir: string; readonly runId: string }, remove: boolean): Promise<{ found: LeftoverEntries; warnings: string[] }>;
}

export async function openSlab(o: StorageOpenOptions, layout: SlabLayoutOptions, parts: FileKindParts): Promise<OpenedStorage> {
  const jobs = blockFilesFor(o);
  const slab = await SlabBackend.create({
    ...(jobs instanceof BlockFiles ? { blockFiles: jobs } : {}),
    ...(o.dir !== undefined ? { dir: o.dir } : {}),
    ioMode: o.ioMode,
    chunkBytes: o.chunkBytes,
    stagingSlots: o.stagingSlots,
    directSlabs: o.directSlabs,
    slotBytes: layout.slotBytes,
    fileBytes: layout.fileBytes,
    ...(o.madeDir !== undefined ? { madeDir: o.madeDir } : {}),
  });
  const dir = slab.dir;
  return {
    backend: slab,
    description: {
      kind: 'file',
      location: dir,
      dir,
      ioMode: slab.effectiveIoMode,
      fileSystem: slab.fileSystem,
      layout: 'slab',
      fileCalls: fileCallsOf(slab.effectiveIoMode, jobs),
      ...(RAM_FILE_SYSTEMS.has(slab.fileSystem) ? { inRam: 'file system' as const } : {}),
    },
    probeDir: dir,
    warnings: parts.warnings(o.ioMode, slab),
    leftovers: (remove) => parts.leftovers(slab, remove),
    // The pool: whole slots within the capacity (or 95 % of the free space), cut once here.
    limitBytes: async (capacityBytes) => slab.plan(capacityBytes > 0 ? capacityBytes : await freeSpaceLimitBytes(dir)),
    fullness: { where: `${dir} (${slab.fileSystem})`, isFullError: (c) => parts.fullErrors.has(c), space: () => spaceOf(dir) },
    keyFits: (key) => fileNameForKey(key).length <= MAX_PLAIN_FILE_NAME,
    entryFiles: { dir, runId: slab.runId, ownsDir: o.dir === undefined },
    fileIo: slab.gauge,
    layOut: (signal) => slab.layOut(signal),
    slab: () => slab.report(),
  };
}
