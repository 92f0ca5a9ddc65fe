// Entry file names: `kvc-<run id>-<key>.bin`. The run id (8 random hex digits per backend) keeps a
// new run's files apart from the leftovers of a killed one, which `findStaleEntries` recognises by the
// same pattern with another run id (removed only on request, `removeStaleEntries`). Only names matching
// ENTRY_FILE are ever touched: the reference deletes every *.npy in --cache-dir (docs/reference-compat.md#rc-4).
import { randomBytes } from 'node:crypto';
import { lstat, readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from './fs-info.js';

const SAFE_CHAR = /^[A-Za-z0-9._-]$/;
const SAFE_KEY = /^[A-Za-z0-9._-]*$/;

/**
 * `<key>.bin` for keys made of [A-Za-z0-9._-]; any other UTF-16 code unit becomes `%XXXX` (hex). Since
 * `%` itself is always escaped, distinct keys give distinct names.
 */
export function fileNameForKey(key: string): string {
  if (SAFE_KEY.test(key)) return `${key}.bin`; // every generated and trace key: one test, not one per character
  let name = '';
  for (let i = 0; i < key.length; i++) {
    const ch = key.charAt(i);
    name += SAFE_CHAR.test(ch) ? ch : `%${key.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `${name}.bin`;
}

/** Longest entry file name a key is stored under as it is; longer keys are hashed by the replay. NAME_MAX is 255 bytes: room is left for the `kvc-<run id>-` prefix. */
export const MAX_PLAIN_FILE_NAME = 200;

/** A run id: 8 lowercase hex digits. */
export const RUN_ID = /^[0-9a-f]{8}$/;
/** An entry file of any run: `kvc-<run id>-<escaped key>.bin`; group 1 is the run id. */
const ENTRY_FILE = /^kvc-([0-9a-f]{8})-[A-Za-z0-9._%-]+\.bin$/;

/**
 * A metadata calibration's file among a flat run's entries after its window (engine/metadata-calibration.ts),
 * `.kvc-cal-<calibration id>-<round>-<i>.bin`, and its scratch directory before the window,
 * `.kvc-calibrate-<calibration id>-<round>`: a run killed while calibrating leaves them, and the next
 * run's scan counts them with the stale entries.
 */
const CALIBRATION_FILE = /^\.kvc-cal-[0-9a-f]{8}-\d+-\d+\.bin$/;
const CALIBRATION_SCRATCH = /^\.kvc-calibrate-[0-9a-f]{8}-\d+$/;

/** The tag a calibration round's files carry: `kvc-cal-<calibration id>-<round>`. */
export function calibrationTag(calibrationId: string, round: number): string {
  return `kvc-cal-${calibrationId}-${round}`;
}

/** The `i`-th file of a calibration round among a flat run's entries. */
export function calibrationFileName(calibrationId: string, round: number, i: number): string {
  return `.${calibrationTag(calibrationId, round)}-${i}.bin`;
}

/** A calibration round's scratch directory in the cache dir, before the window. */
export function calibrationScratchName(calibrationId: string, round: number): string {
  return `.kvc-calibrate-${calibrationId}-${round}`;
}

/** A fresh run id: random, not from the run's seed (two runs with one seed must not share names). */
export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** The file name of `key`'s entry in run `runId`. */
export function entryFileName(runId: string, key: string): string {
  return `kvc-${runId}-${fileNameForKey(key)}`;
}

/** The run id of an entry file (or object) name, or undefined when the name is not one of our entries. */
export function entryRunIdOf(name: string): string | undefined {
  return ENTRY_FILE.exec(name)?.[1];
}

/** Entry files of other runs found in a cache directory (regular files named ENTRY_FILE only), and killed calibrations' files. */
export interface StaleEntries {
  readonly paths: readonly string[];
  /** Of `paths`, the files of metadata calibrations (CALIBRATION_FILE, or inside a CALIBRATION_SCRATCH directory). */
  readonly calibrationFiles: number;
  /** Calibration scratch directories, removed with their files. */
  readonly scratchDirs: readonly string[];
  /** Their apparent sizes (bytes). */
  readonly bytes: number;
  /** What they occupy on the device (st_blocks × 512). */
  readonly allocatedBytes: number;
}

/** The entry files in `dir` left by runs other than `runId` (a killed run leaves its files behind). */
export async function findStaleEntries(dir: string, runId: string): Promise<StaleEntries> {
  const paths: string[] = [];
  const scratchDirs: string[] = [];
  let calibrationFiles = 0;
  let bytes = 0;
  let allocatedBytes = 0;
  const take = async (path: string): Promise<boolean> => {
    const st = await lstat(path).catch(() => undefined); // gone meanwhile: not stale any more
    if (st?.isFile() !== true) return false;
    paths.push(path);
    bytes += st.size;
    allocatedBytes += st.blocks * 512;
    return true;
  };
  for (const name of await readdir(dir)) {
    const m = ENTRY_FILE.exec(name);
    if (m !== null && m[1] !== runId) await take(join(dir, name));
    else if (CALIBRATION_FILE.test(name) && (await take(join(dir, name)))) calibrationFiles++;
    else if (CALIBRATION_SCRATCH.test(name)) {
      const scratch = join(dir, name);
      if ((await lstat(scratch).catch(() => undefined))?.isDirectory() !== true) continue;
      scratchDirs.push(scratch);
      for (const f of await filesUnder(scratch)) if (await take(f)) calibrationFiles++;
    }
  }
  return { paths, calibrationFiles, scratchDirs, bytes, allocatedBytes };
}

/** Regular files anywhere under `dir` (links are not followed); none when it is gone. */
async function filesUnder(dir: string): Promise<string[]> {
  const found = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return found.filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name));
}

/** Deletes `stale`'s files (already gone is fine) and the calibration scratch directories; returns how many files were removed. */
export async function removeStaleEntries(stale: StaleEntries): Promise<number> {
  const removed = await removeFiles(stale.paths);
  for (const scratch of stale.scratchDirs) await rm(scratch, { recursive: true, force: true });
  return removed;
}

/** Deletes the files (already gone is fine); returns how many were removed. */
export async function removeFiles(paths: readonly string[]): Promise<number> {
  let removed = 0;
  for (const path of paths) {
    try {
      await unlink(path);
      removed++;
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
  }
  return removed;
}
