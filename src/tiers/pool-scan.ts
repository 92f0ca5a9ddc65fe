// What a shared pool holds when a rank opens it (docs/shared-pool.md#persistence): the blocks earlier
// runs left (--keep-pool) and the temporary files of writers killed mid-block. Only names of the pool's
// own shapes are looked at (pool-names.ts), two fan-out levels deep, never through a link; temporary
// files are removed only on request (--remove-stale-entries), and never this run's own.
import { lstat, readdir } from 'node:fs/promises';
import { removeFiles } from './file-names.js';
import { join } from 'node:path';
import { errnoCode } from './fs-info.js';
import { FANOUT_DIR, POOL_BLOCK_FILE, POOL_TEMP_FILE } from './pool-names.js';

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

/** Walks `<namespaceDir>/<3 hex>/<2 hex>/` (directories only, links skipped), skipping run `runId`'s own temporary files. */
export async function scanPool(namespaceDir: string, runId: string): Promise<PoolContents> {
  let blocks = 0;
  let blockBytes = 0;
  const tempPaths: string[] = [];
  let tempBytes = 0;
  let tempAllocatedBytes = 0;
  for (const l1 of await entriesOf(namespaceDir)) {
    if (!l1.isDir || !FANOUT_DIR[0].test(l1.name)) continue;
    for (const l2 of await entriesOf(join(namespaceDir, l1.name))) {
      if (!l2.isDir || !FANOUT_DIR[1].test(l2.name)) continue;
      const leaf = join(namespaceDir, l1.name, l2.name);
      for (const f of await entriesOf(leaf)) {
        if (!f.isFile) continue;
        const block = POOL_BLOCK_FILE.test(f.name);
        const temp = POOL_TEMP_FILE.exec(f.name);
        if (!block && (temp === null || temp[1] === runId)) continue;
        const st = await lstat(join(leaf, f.name)).catch(() => undefined); // gone meanwhile: not counted
        if (st?.isFile() !== true) continue;
        if (block) {
          blocks++;
          blockBytes += st.size;
        } else {
          tempPaths.push(join(leaf, f.name));
          tempBytes += st.size;
          tempAllocatedBytes += st.blocks * 512;
        }
      }
    }
  }
  return { blocks, blockBytes, tempPaths, tempBytes, tempAllocatedBytes };
}

/** Removes the temporary files found (already gone is fine); how many were removed. */
export const removePoolTemps = removeFiles;
