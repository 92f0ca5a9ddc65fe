// What a shared pool holds when a rank opens it (docs/shared-pool.md#persistence): the blocks earlier
// runs left (--keep-pool) and the temporary files of writers killed mid-block. Only names of the pool's
// own shapes are looked at (pool-names.ts), two fan-out levels deep, never through a link; temporary
// files are removed only on request (--remove-stale-entries), and never this run's own.
import { lstat, readdir, rmdir } from 'node:fs/promises';
import { removeFiles } from './file-names.js';
import { join } from 'node:path';
import { errnoCode } from './fs-info.js';
import { FANOUT_DIR, FANOUT_NAMESPACE, POOL_BLOCK_FILE, POOL_CALIBRATION_FILE, POOL_TEMP_FILE } from './pool-names.js';

/** A pool namespace's contents at start. */
export interface PoolContents {
  /** Published blocks (regular files). */
  readonly blocks: number;
  readonly blockBytes: number;
  /** Temporary files of other runs' writers (a killed writer leaves its block half-written there). */
  readonly tempPaths: readonly string[];
  readonly tempBytes: number;
  readonly tempAllocatedBytes: number;
}

async function entriesOf(dir: string): Promise<Array<{ name: string; isDir: boolean; isFile: boolean }>> {
  try {
    return (await readdir(dir, { withFileTypes: true })).map((d) => ({ name: d.name, isDir: d.isDirectory(), isFile: d.isFile() }));
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

/** What walkFanout passes as a killed metadata calibration's file's "writer" (no run id looks like it). */
const CALIBRATION_WRITER = 'calibration';

/**
 * Visits the regular files named as blocks or temporary blocks in `<namespaceDir>/<3 hex>/<2 hex>/`
 * (directories only, links skipped): `temp` is the writer's run id of a temporary file (a metadata
 * calibration's file: CALIBRATION_WRITER), undefined for a block. Files gone meanwhile are not visited.
 */
async function walkFanout(
  namespaceDir: string,
  visit: (path: string, size: number, allocated: number, temp: string | undefined) => void,
): Promise<void> {
  for (const l1 of await entriesOf(namespaceDir)) {
    if (!l1.isDir || !FANOUT_DIR[0].test(l1.name)) continue;
    for (const l2 of await entriesOf(join(namespaceDir, l1.name))) {
      if (!l2.isDir || !FANOUT_DIR[1].test(l2.name)) continue;
      const leaf = join(namespaceDir, l1.name, l2.name);
      for (const f of await entriesOf(leaf)) {
        if (!f.isFile) continue;
        const temp = POOL_TEMP_FILE.exec(f.name)?.[1] ?? (POOL_CALIBRATION_FILE.test(f.name) ? CALIBRATION_WRITER : undefined);
        if (!POOL_BLOCK_FILE.test(f.name) && temp === undefined) continue;
        const st = await lstat(join(leaf, f.name)).catch(() => undefined);
        if (st?.isFile() === true) visit(join(leaf, f.name), st.size, st.blocks * 512, temp);
      }
    }
  }
}

/** A shared pool's blocks and other runs' temporary files (run `runId`'s own are skipped). */
export async function scanPool(namespaceDir: string, runId: string): Promise<PoolContents> {
  let blocks = 0;
  let blockBytes = 0;
  const tempPaths: string[] = [];
  let tempBytes = 0;
  let tempAllocatedBytes = 0;
  await walkFanout(namespaceDir, (path, size, allocated, temp) => {
    if (temp === undefined) {
      blocks++;
      blockBytes += size;
    } else if (temp !== runId) {
      tempPaths.push(path);
      tempBytes += size;
      tempAllocatedBytes += allocated;
    }
  });
  return { blocks, blockBytes, tempPaths, tempBytes, tempAllocatedBytes };
}

/** Files of other runs' private fan-out namespaces (--kv-layout fanout) in a cache directory: a killed run leaves them. */
export interface StaleFanout {
  /** The namespace directories (`kvfan-<run id>`). */
  readonly namespaces: readonly string[];
  readonly paths: readonly string[];
  readonly bytes: number;
  readonly allocatedBytes: number;
}

/** The private fan-out namespaces in `dir` of runs other than `runId`, and their block files. */
export async function findStaleFanout(dir: string, runId: string): Promise<StaleFanout> {
  const namespaces: string[] = [];
  const paths: string[] = [];
  let bytes = 0;
  let allocatedBytes = 0;
  for (const e of await entriesOf(dir)) {
    const m = FANOUT_NAMESPACE.exec(e.name);
    if (!e.isDir || m === null || m[1] === runId) continue;
    namespaces.push(join(dir, e.name));
    await walkFanout(join(dir, e.name), (path, size, allocated) => {
      paths.push(path);
      bytes += size;
      allocatedBytes += allocated;
    });
  }
  return { namespaces, paths, bytes, allocatedBytes };
}

/** Removes stale fan-out namespaces' block files and then their directories (only the empty ones); how many files were removed. */
export async function removeStaleFanout(stale: StaleFanout): Promise<number> {
  const removed = await removeFiles(stale.paths);
  for (const ns of stale.namespaces) await removeEmptyFanout(ns);
  return removed;
}

/** Removes a fan-out namespace's empty directories, deepest first, and the namespace itself; anything not empty stays. */
export async function removeEmptyFanout(nsDir: string): Promise<void> {
  const quietly = (p: Promise<unknown>): Promise<unknown> => p.catch(() => undefined);
  for (const l1 of await entriesOf(nsDir)) {
    if (!l1.isDir || !FANOUT_DIR[0].test(l1.name)) continue;
    for (const l2 of await entriesOf(join(nsDir, l1.name)))
      if (l2.isDir && FANOUT_DIR[1].test(l2.name)) await quietly(rmdir(join(nsDir, l1.name, l2.name)));
    await quietly(rmdir(join(nsDir, l1.name)));
  }
  await quietly(rmdir(nsDir));
}

/** Removes the temporary files found (already gone is fine); how many were removed. */
export const removePoolTemps = removeFiles;
