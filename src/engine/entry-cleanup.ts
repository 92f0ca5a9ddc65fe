// A force-quit's clean-up: this run's entry files removed synchronously, inside the signal handler,
// just before the process exits (the normal teardown is asynchronous and will not get to run). Best
// effort and bounded in time: a user who insists on leaving must not wait on a slow disk, so what the
// budget does not cover is named instead. Only files named as this run's entries are touched
// (`kvc-<run id>-*.bin`, tiers/file-names.ts), or lying in this run's own fan-out namespace
// (`kvfan-<run id>/<3 hex>/<2 hex>/…`, --kv-layout fanout): other runs sharing the directory keep theirs.
import { readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../util/clock.js';
import { FANOUT_DIR, POOL_BLOCK_FILE, POOL_TEMP_FILE } from '../tiers/pool-names.js';

/** Where one storage tier keeps its entry files. */
export interface EntryFilesAt {
  readonly dir: string;
  /** The run id in its entry file names. */
  readonly runId: string;
  /** The directory is a temporary one the run made: removed too once empty. */
  readonly ownsDir: boolean;
  /** --kv-layout fanout: the run's own namespace directory under `dir` (tiers/pool-names.ts fanoutNamespace), removed with its fan-out levels. */
  readonly fanout?: string;
}

/** Time a force-quit may spend removing entry files: an unlink takes well under a millisecond to a few ms (a large file's extents), so thousands fit. */
export const FORCE_CLEANUP_BUDGET_MS = 2000;

/**
 * Passes over the directory: a write that was already queued on the threadpool may create its file
 * after a pass listed the directory, so the next pass finds it.
 */
const MAX_PASSES = 3;

/** The synchronous file-system calls used (tests substitute failures and slow calls). */
export interface SyncEntryFs {
  readdir(dir: string): string[];
  unlink(path: string): void;
  rmdir(dir: string): void;
}

export const realSyncEntryFs: SyncEntryFs = {
  readdir: (dir) => readdirSync(dir),
  unlink: (path) => unlinkSync(path),
  rmdir: (dir) => rmdirSync(dir),
};

export interface EntryCleanup {
  readonly dir: string;
  readonly removed: number;
  /** Entry files still there: the budget ran out, or their removal failed. */
  readonly left: readonly string[];
  /** Why some were left (the first failure, or the budget). */
  readonly why?: string;
}

/** The name prefix of run `runId`'s entry files (see entryFileName in tiers/file.ts). */
export function entryFilePrefix(runId: string): string {
  return `kvc-${runId}-`;
}

const isEntryOf = (runId: string) => (name: string) => name.startsWith(entryFilePrefix(runId)) && name.endsWith('.bin');

/** `dir`'s names; none when it is gone (already torn down) or not a directory. */
function namesIn(dir: string, fs: SyncEntryFs): string[] {
  try {
    return fs.readdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
}

/** The fan-out levels of a namespace (relative to `at.dir`), deepest last. */
function fanoutDirs(at: EntryFilesAt, ns: string, fs: SyncEntryFs): string[] {
  const dirs: string[] = [];
  for (const l1 of namesIn(join(at.dir, ns), fs).filter((n) => FANOUT_DIR[0].test(n))) {
    dirs.push(join(ns, l1));
    for (const l2 of namesIn(join(at.dir, ns, l1), fs).filter((n) => FANOUT_DIR[1].test(n))) dirs.push(join(ns, l1, l2));
  }
  return dirs;
}

/** Paths (relative to `at.dir`) of `at`'s entry files now there: flat names of the run, or block files of its fan-out namespace. */
function listEntries(at: EntryFilesAt, fs: SyncEntryFs): string[] {
  if (at.fanout === undefined) return namesIn(at.dir, fs).filter(isEntryOf(at.runId));
  const isBlock = (n: string): boolean => POOL_BLOCK_FILE.test(n) || POOL_TEMP_FILE.test(n);
  return fanoutDirs(at, at.fanout, fs)
    .filter((d) => d.split('/').length === 3)
    .flatMap((leaf) =>
      namesIn(join(at.dir, leaf), fs)
        .filter(isBlock)
        .map((n) => join(leaf, n)),
    );
}

/** Removes the (now empty) fan-out levels and the namespace directory; what is not empty stays. */
function removeFanoutDirs(at: EntryFilesAt, ns: string, fs: SyncEntryFs): void {
  for (const d of [...fanoutDirs(at, ns, fs).reverse(), ns]) {
    try {
      fs.rmdir(join(at.dir, d));
    } catch {
      // Not empty (a file the budget left) or gone: named by `left`, or nothing to do.
    }
  }
}

/** Removes `at`'s entry files until `budgetMs` of `clock` is spent; an owned temporary directory goes too once empty. */
export function removeEntryFilesSync(
  at: EntryFilesAt,
  clock: Clock,
  budgetMs = FORCE_CLEANUP_BUDGET_MS,
  fs = realSyncEntryFs,
): EntryCleanup {
  const deadline = clock.now() + budgetMs;
  let removed = 0;
  const failed = new Map<string, string>();
  let why: string | undefined;
  for (let pass = 0; pass < MAX_PASSES && why === undefined; pass++) {
    const names = listEntries(at, fs).filter((n) => !failed.has(n));
    if (names.length === 0) break;
    for (const name of names) {
      if (clock.now() >= deadline) {
        why = `the ${budgetMs / 1000} s allowed ran out`;
        break;
      }
      try {
        fs.unlink(join(at.dir, name));
        removed++;
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code === 'ENOENT') continue; // deleted meanwhile by the run itself
        failed.set(name, err.message);
      }
    }
  }
  const left = listEntries(at, fs);
  if (left.length === 0 && at.fanout !== undefined) removeFanoutDirs(at, at.fanout, fs);
  if (left.length === 0 && at.ownsDir) {
    try {
      fs.rmdir(at.dir);
    } catch {
      // Something else is in it, or it is gone: a temporary directory, left to the system.
    }
  }
  why ??= failed.size > 0 ? [...failed.values()][0] : undefined;
  return { dir: at.dir, removed, left: left.map((n) => join(at.dir, n)), ...(left.length > 0 && why !== undefined ? { why } : {}) };
}
