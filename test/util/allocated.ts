// Bytes the files directly under a directory occupy on the device, for capacity tests.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes the files under `dir` occupy on the device (st_blocks × 512), files vanishing meanwhile skipped. */
export function allocatedUnder(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    try {
      total += lstatSync(join(dir, name)).blocks * 512;
    } catch {
      // deleted between readdir and lstat
    }
  }
  return total;
}
