// What the figures were measured on: the machine line, block-device queue attributes, the file system.
import { readFileSync } from 'node:fs';
import { readFile, realpath, statfs } from 'node:fs/promises';
import { cpus, release, totalmem } from 'node:os';

/** CPU model and count, RAM, kernel and Node versions; `extra` (e.g. the fio version) appended. */
export function machineLine(extra?: string): string {
  const line = `machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, Node ${process.version}`;
  return extra === undefined ? line : `${line}, ${extra}`;
}

/** /sys/block/<dev>/queue/<attr>, or 'n/a' when the device has none. */
export function queueAttr(dev: string, attr: string): string {
  try {
    return readFileSync(`/sys/block/${dev}/queue/${attr}`, 'utf8').trim();
  } catch {
    return 'n/a';
  }
}

/** `type (source on mount)` of the mount holding `path` (the longest mount point that contains it). */
export async function fileSystemOf(path: string): Promise<string> {
  const real = await realpath(path);
  let best = { mount: '', type: 'unknown', source: '' };
  for (const line of (await readFile('/proc/self/mountinfo', 'utf8')).split('\n')) {
    const [left, right] = line.split(' - ');
    const mount = left?.split(' ')[4]?.replace(/\\040/g, ' ');
    const [type, source] = right?.split(' ') ?? [];
    if (mount === undefined || type === undefined) continue;
    const inside = real === mount || real.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
    if (inside && mount.length >= best.mount.length) best = { mount, type, source: source ?? '' };
  }
  return `${best.type} (${best.source} on ${best.mount})`;
}

/** Bytes an unprivileged process may still write under `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}
