// A RAM-backed block device for benches that must see the harness rather than the disk: a file in
// /dev/shm, allocated whole up front, attached to a loop device and formatted ext4 (no discard). Like a
// real device it then never allocates on write: with a sparse image or `-o discard`, every write to a
// freed block first faulted in a fresh tmpfs page, and fio wrote at 1.4 instead of 7.5 GiB/s. Its RAM
// (the whole size) is held until remove(). Root only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export interface RamDevice {
  /** The loop device's name in /proc/diskstats, e.g. `loop3`. */
  readonly name: string;
  /** Where its file system is mounted. */
  readonly mount: string;
  readonly bytes: number;
  /** Unmounts, detaches and deletes everything; safe to call twice. */
  remove(): void;
}

function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** Why a RAM device cannot be made here, or undefined when it can (root, losetup, mkfs.ext4, /dev/shm). */
export function ramDeviceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (losetup, mkfs, mount)';
  for (const tool of ['fallocate', 'losetup', 'dd', 'mkfs.ext4', 'mount', 'umount'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} not found`;
  if (spawnSync('test', ['-d', '/dev/shm']).status !== 0) return 'no /dev/shm';
  return undefined;
}

/** Makes a RAM-backed ext4 of `bytes`; on failure removes what it made and throws. */
export function makeRamDevice(bytes: number): RamDevice {
  const image = join('/dev/shm', `kv-ram-device-${process.pid}.img`);
  const mount = mkdtempSync(join(tmpdir(), 'kv-ram-device-'));
  let loop: string | undefined;
  let mounted = false;
  const remove = (): void => {
    if (mounted) spawnSync('umount', [mount]);
    mounted = false;
    if (loop !== undefined) spawnSync('losetup', ['-d', loop]);
    loop = undefined;
    rmSync(image, { force: true });
    rmSync(mount, { recursive: true, force: true });
  };
  try {
    run('fallocate', ['-l', String(bytes), image]);
    loop = run('losetup', ['--find', '--show', image]);
    // Touch every page once before use: fresh guest memory behind the image made the first program to
    // write a region run at a twentieth of its later speed (the host faults pages in on first touch).
    run('dd', ['if=/dev/zero', `of=${loop}`, 'bs=4M', `count=${Math.floor(bytes / (4 * 1024 * 1024))}`, 'oflag=direct', 'status=none']);
    run('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', loop]);
    run('mount', [loop, mount]);
    mounted = true;
    return { name: basename(loop), mount, bytes, remove };
  } catch (e) {
    remove();
    throw e;
  }
}
