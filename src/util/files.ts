// Small file helpers shared by the commands and reports.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** Removes a file of ours if it is there; a path that cannot even be looked at (ENOTDIR, EACCES) holds nothing of ours. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // nothing to remove
  }
}

/**
 * A name for a temporary file beside `path` that nobody can guess ahead of us (crypto random, not the
 * pid): in a directory others can write, a predictable name lets them plant a symlink there first.
 */
export function tempNameBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${randomBytes(8).toString('hex')}`);
}

/** Exclusive create, never through a symlink: O_EXCL refuses any existing name, a planted link included. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Creates `path` (which must not exist) holding `data`; on failure removes it only if it is ours. */
export function writeNewFile(path: string, data: string | Uint8Array, mode = 0o644): void {
  const fd = openSync(path, CREATE_NEW, mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
  } catch (e) {
    closeSync(fd);
    removeQuietly(path);
    throw e;
  }
  closeSync(fd);
}

/**
 * Writes the file whole or not at all (a new temp file beside it, renamed over it): a crash mid-write
 * never leaves a truncated result. The temp file is created exclusively under an unpredictable name, so
 * a link planted in a shared directory is never written through. The directory must exist.
 */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const tmp = tempNameBeside(path);
  writeNewFile(tmp, data);
  try {
    renameSync(tmp, path);
  } catch (e) {
    removeQuietly(tmp);
    throw e;
  }
}

/** Where a results file ended up: the path asked for, or a fallback after `failure` to write there. */
export interface SavedFile {
  readonly path: string;
  /** Why the path asked for could not be written; absent when it was. */
  readonly failure?: string;
}

/** The results could be written nowhere: `attempts` says where it was tried and why each failed. */
export class UnsavedResultsError extends Error {
  constructor(readonly attempts: readonly string[]) {
    super(`the results could not be written anywhere:\n${attempts.map((a) => `  - ${a}`).join('\n')}`);
    this.name = 'UnsavedResultsError';
  }
}

function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The fallback file's name: says what it is and whose it was, and is new (the pid). */
export function fallbackName(path: string): string {
  const base = basename(path) || 'results.json';
  return `kvcache-unsaved-${process.pid}-${base}`;
}

/**
 * Writes a finished run's results to `path` (missing directories made now), and if that fails — the
 * file system turned read-only, the disk filled, a directory vanished — to a new file in the first of
 * `fallbackDirs` that takes it, so that hours of measurement are never lost to the last step. A
 * fallback file is created exclusively: it never replaces anything. Throws UnsavedResultsError only
 * when every place failed.
 */
export function writeResultsFile(path: string, data: string, fallbackDirs: readonly string[]): SavedFile {
  let failure: string;
  try {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    writeFileAtomically(path, data);
    return { path };
  } catch (e) {
    failure = reasonOf(e);
  }
  const attempts = [`${path}: ${failure}`];
  for (const dir of fallbackDirs) {
    const fallback = join(dir, fallbackName(path));
    try {
      writeNewFile(fallback, data);
      return { path: fallback, failure };
    } catch (e) {
      // writeNewFile already removed a partial file of its own; a file that already existed is not ours.
      attempts.push(`${fallback}: ${reasonOf(e)}`);
    }
  }
  throw new UnsavedResultsError(attempts);
}
