// Small file helpers shared by the commands and reports.
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes the file whole or not at all (a temp file beside it, renamed over it): a crash mid-write
 * never leaves a truncated result. The directory must exist.
 */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
