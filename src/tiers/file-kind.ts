// The `file` storage backend (the default): one file per entry under --cache-dir (file.ts). What the
// registry needs around the FileBackend: its description (directory, file system, I/O mode granted),
// capacity (95 % of the free space by default), earlier runs' entry files, ENOSPC/EDQUOT as "full",
// and the warnings for refused O_DIRECT and RAM file systems.
import { GiB } from '../util/units.js';
import { FileBackend } from './file.js';
import { BlockFiles, blockFilesFor, fileCallsOf } from './block-file.js';
import { fileNameForKey, findStaleEntries, MAX_PLAIN_FILE_NAME, newRunId, removeStaleEntries } from './file-names.js';
import { freeSpaceLimitBytes, RAM_FILE_SYSTEMS, spaceOf } from './fs-info.js';
import type { IoMode } from './io-mode.js';
import type { LeftoverEntries, OpenedStorage, PoolAtStart, StorageKind, StorageOpenOptions } from './storage-kind.js';
import { join } from 'node:path';
import { fanoutNamespace, poolNamespace } from './pool-names.js';
import { findStaleFanout, removePoolTemps, removeStaleFanout, scanPool } from './pool-scan.js';
import { openSlab } from './slab-kind.js';

/** Errno classes of a write that mean the file system (or the user's quota) is full. */
const FULL_ERRORS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

function fileWarnings(requested: IoMode, file: Pick<FileBackend, 'effectiveIoMode' | 'dir' | 'fileSystem'>): string[] {
  const warnings: string[] = [];
  if (file.effectiveIoMode !== requested)
    warnings.push(`${file.dir}: the file system refused O_DIRECT; using buffered I/O (reads may come from the page cache)`);
  if (RAM_FILE_SYSTEMS.has(file.fileSystem)) warnings.push(`${file.dir} is on ${file.fileSystem}: this measures RAM, not a storage device`);
  return warnings;
}

/**
 * Looks for entry files of other runs in `file`'s directory (a killed run leaves them), removes them
 * when `remove`, and says so. Files not named as our entries are never touched.
 */
async function fileLeftovers(
  file: Pick<FileBackend, 'dir' | 'runId'>,
  remove: boolean,
): Promise<{ found: LeftoverEntries; warnings: string[] }> {
  const stale = await findStaleEntries(file.dir, file.runId);
  const removed = remove ? await removeStaleEntries(stale) : 0;
  const found = { count: stale.paths.length, bytes: stale.bytes, allocatedBytes: stale.allocatedBytes, removed };
  if (found.count === 0) return { found, warnings: [] };
  const calibration = stale.calibrationFiles > 0 ? `, ${stale.calibrationFiles} of them a metadata calibration's (.kvc-cal*)` : '';
  const what = `${file.dir} held ${found.count} entry file(s) of earlier runs (kvc-<run id>-*.bin${calibration}, ${(found.allocatedBytes / GiB).toFixed(3)} GiB on disk), e.g. from a killed run`;
  const action = remove
    ? `; ${removed} removed (--remove-stale-entries)`
    : '; left in place, taking that space from this run: remove them with --remove-stale-entries';
  return { found, warnings: [what + action] };
}

/**
 * --kv-layout fanout's leftovers: other runs' private fan-out namespaces (`kvfan-<run id>/…`, a killed
 * run leaves its blocks there) besides the flat layout's entry files; removed when `remove`.
 */
async function fanoutLeftovers(file: FileBackend, remove: boolean): Promise<{ found: LeftoverEntries; warnings: string[] }> {
  const flat = await fileLeftovers(file, remove);
  const stale = await findStaleFanout(file.dir, file.runId);
  if (stale.paths.length === 0 && stale.namespaces.length === 0) return flat;
  const removed = remove ? await removeStaleFanout(stale) : 0;
  const f = flat.found;
  const found = {
    count: f.count + stale.paths.length,
    bytes: f.bytes + stale.bytes,
    allocatedBytes: f.allocatedBytes + stale.allocatedBytes,
    removed: f.removed + removed,
  };
  const what = `${file.dir} held ${stale.namespaces.length} fan-out director${stale.namespaces.length === 1 ? 'y' : 'ies'} of earlier runs (kvfan-<run id>/, ${stale.paths.length} block file(s), ${(stale.allocatedBytes / GiB).toFixed(3)} GiB on disk), e.g. from a killed run`;
  const action = remove
    ? `; ${removed} file(s) removed (--remove-stale-entries)`
    : '; left in place, taking that space from this run: remove them with --remove-stale-entries';
  return { found, warnings: [...flat.warnings, what + action] };
}

/**
 * A shared pool's contents at start: its blocks (left by earlier runs with --keep-pool) and the
 * temporary files of writers killed mid-block, removed when `remove`.
 */
async function poolLeftovers(
  file: FileBackend,
  namespace: string,
  remove: boolean,
): Promise<{ found: LeftoverEntries; warnings: string[]; pool: PoolAtStart }> {
  const dir = join(file.dir, namespace);
  const c = await scanPool(dir, file.runId);
  const removed = remove ? await removePoolTemps(c.tempPaths) : 0;
  const found = { count: c.tempPaths.length, bytes: c.tempBytes, allocatedBytes: c.tempAllocatedBytes, removed };
  const pool: PoolAtStart = {
    location: dir,
    namespace,
    blocks: c.blocks,
    blockBytes: c.blockBytes,
    staleTemps: found.count,
    staleTempBytes: found.bytes,
    staleTempsRemoved: removed,
  };
  const warnings: string[] = [];
  if (found.count > 0)
    warnings.push(
      `the shared pool ${dir} held ${found.count} temporary block file(s) of writers killed mid-block (${(found.allocatedBytes / GiB).toFixed(3)} GiB on disk)` +
        (remove
          ? `; ${removed} removed (--remove-stale-entries)`
          : '; left in place: remove them with --remove-stale-entries (only while no other run writes to the pool)'),
    );
  return { found, warnings, pool };
}

async function openFile(o: StorageOpenOptions): Promise<OpenedStorage> {
  const namespace = o.pool !== undefined ? poolNamespace(o.pool.identity) : undefined;
  // --kv-layout slab: slots in pool files (slab-kind.ts), with this layout's warnings, leftovers and fullness.
  if (o.slab !== undefined) return openSlab(o, o.slab, { fullErrors: FULL_ERRORS, warnings: fileWarnings, leftovers: fileLeftovers });
  const runId = newRunId();
  const fanout = o.fanout === true && o.pool === undefined ? fanoutNamespace(runId) : undefined;
  const jobs = blockFilesFor(o);
  const file = await FileBackend.create({
    ...(jobs instanceof BlockFiles ? { blockFiles: jobs } : {}),
    ...(o.dir !== undefined ? { dir: o.dir } : {}),
    ioMode: o.ioMode,
    chunkBytes: o.chunkBytes,
    stagingSlots: o.stagingSlots,
    directSlabs: o.directSlabs,
    runId,
    ...(o.pool !== undefined && namespace !== undefined ? { pool: { namespace, keep: o.pool.keep } } : {}),
    ...(fanout !== undefined ? { fanout: { namespace: fanout } } : {}),
    ...(o.madeDir !== undefined ? { madeDir: o.madeDir } : {}),
    ...(o.metadataOps !== undefined ? { metadataOps: o.metadataOps } : {}),
  });
  const dir = file.dir;
  const leftovers = (remove: boolean): ReturnType<OpenedStorage['leftovers']> => {
    if (namespace !== undefined) return poolLeftovers(file, namespace, remove);
    return fanout !== undefined ? fanoutLeftovers(file, remove) : fileLeftovers(file, remove);
  };
  return {
    backend: file,
    description: {
      kind: 'file',
      location: dir,
      dir,
      ioMode: file.effectiveIoMode,
      fileSystem: file.fileSystem,
      layout: file.fanoutDir !== undefined ? 'fanout' : 'flat',
      fileCalls: fileCallsOf(file.effectiveIoMode, jobs),
      entryDir: file.fanoutDir ?? dir,
      ...(RAM_FILE_SYSTEMS.has(file.fileSystem) ? { inRam: 'file system' as const } : {}),
    },
    probeDir: dir,
    warnings: fileWarnings(o.ioMode, file),
    leftovers,
    // Asked after the leftovers were handled: removed ones free their space for this run.
    limitBytes: (capacityBytes) => (capacityBytes > 0 ? Promise.resolve(capacityBytes) : freeSpaceLimitBytes(dir)),
    fullness: { where: `${dir} (${file.fileSystem})`, isFullError: (c) => FULL_ERRORS.has(c), space: () => spaceOf(dir) },
    // Fan-out names are hashes of the key: every key fits.
    keyFits: (key) => file.fanoutDir !== undefined || fileNameForKey(key).length <= MAX_PLAIN_FILE_NAME,
    entryFiles: { dir, runId: file.runId, ownsDir: o.dir === undefined, ...(fanout !== undefined ? { fanout } : {}) },
    fileIo: file.gauge,
  };
}

export const FILE_STORAGE: StorageKind = {
  help: 'one file per entry under --cache-dir (O_DIRECT or buffered, --io-mode)',
  usesCacheDir: true,
  capacityProblem: () => undefined,
  open: openFile,
};
