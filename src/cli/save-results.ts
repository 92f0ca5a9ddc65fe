// Saving a results document at the end of a run or a replay: at its path if possible, else in a
// fallback file whose path the message names (exit 1), never lost to the last step of a long run.
import { dirname, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { writeResultsFile } from '../util/files.js';

/**
 * Where results go when their own path fails at the end: next to the cache directory (the storage
 * being measured is there, so it is writable), the working directory, the temp directory.
 */
export function fallbackDirs(cacheDir: string | undefined): string[] {
  return [...(cacheDir !== undefined ? [dirname(resolve(cacheDir))] : []), process.cwd(), tmpdir()];
}

/**
 * Writes a results document, falling back (fallbackDirs) when its path fails. Returns false when the
 * results are not where they were asked for (the caller exits 1); the message names where they are.
 */
export function saveResultsDocument(path: string, text: string, cacheDir: string | undefined, prefix: string): boolean {
  try {
    const saved = writeResultsFile(path, text, fallbackDirs(cacheDir));
    if (saved.failure === undefined) return true;
    process.stderr.write(`${prefix}: error: results not written to ${path} (${saved.failure}); saved to ${saved.path} instead\n`);
    return false;
  } catch (e) {
    // Last resort: the document itself, so the measurement is not lost.
    process.stderr.write(`${prefix}: error: ${(e as Error).message}\nThe results follow on stdout.\n`);
    process.stdout.write(text);
    return false;
  }
}
