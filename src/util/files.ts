// Small file helpers shared by the commands.
import { renameSync, writeFileSync } from 'node:fs';

/** Writes the file whole or not at all: a crash mid-write never leaves a truncated result. */
export function writeFileAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
