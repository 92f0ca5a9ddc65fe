// What the file tier needs to know about the file system under its directory: its name and block
// size (statfs), what an entry occupies there, whether it is RAM, the space free for a default
// capacity, and the errno of a failed call.
import { statfs } from 'node:fs/promises';
import { DIRECT_ALIGN } from '../data/aligned.js';
import { roundUp } from '../util/units.js';

/**
 * Bytes an ext4/xfs-like file system allocates at most for a file of `size` written in DIRECT_ALIGN
 * steps: data in whole blocks (the last O_DIRECT block is padded until the truncate), plus one
 * metadata block per 32768 blocks (the longest extent) and one more. Measured on ext4 with 1 KiB
 * blocks: 240 MiB took 1 block beyond its data, 149 MiB none.
 */
export function fileAllocatedBytes(size: number, blockBytes: number): number {
  const unit = Math.max(blockBytes, DIRECT_ALIGN); // both powers of two: the larger is a multiple of the other
  const data = roundUp(size, unit);
  return data + blockBytes * (1 + Math.floor(data / blockBytes / 32768));
}

/** statfs(2) f_type magic numbers of common file systems. */
const FS_MAGIC: ReadonlyMap<number, string> = new Map([
  [0xef53, 'ext2/3/4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0xf2f52010, 'f2fs'],
  [0x2fc12fc1, 'zfs'],
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
  [0x794c7630, 'overlayfs'],
  [0x6969, 'nfs'],
  [0xff534d42, 'cifs'],
  [0x65735546, 'fuse'],
]);

/** File systems whose "device" is RAM: results there measure memory, not storage (docs/reference-compat.md#rc-18). */
export const RAM_FILE_SYSTEMS: ReadonlySet<string> = new Set(['tmpfs', 'ramfs']);

/**
 * Local file systems on which close(2) of an entry file waits for nothing: its data was synced already
 * (writes) or it never had any to write (reads). There the file tier closes on the event loop, a
 * system call of a microsecond or two, rather than paying a threadpool round trip (~15 µs of CPU in
 * a VM) per file. Elsewhere close may wait for a server: NFS flushes and FUSE asks its daemon.
 */
export const LOCAL_CLOSE_FILE_SYSTEMS: ReadonlySet<string> = new Set(['ext2/3/4', 'xfs', 'btrfs', 'f2fs', 'tmpfs', 'ramfs']);

/** The file system's name (FS_MAGIC) and block size of `dir`. */
export async function fileSystemOf(dir: string): Promise<{ name: string; blockBytes: number }> {
  const { type, bsize } = await statfs(dir);
  return { name: FS_MAGIC.get(type) ?? `0x${type.toString(16)}`, blockBytes: bsize > 0 ? bsize : DIRECT_ALIGN };
}

/** Share of the file system's free space the storage tier may use when no capacity is given (docs/reference-compat.md#rc-9). */
export const AUTO_STORAGE_FRACTION = 0.95;

/** 95 % of the space available to unprivileged users on the file system holding `dir` now; unlimited when unknown. */
export async function freeSpaceLimitBytes(dir: string): Promise<number> {
  try {
    const s = await statfs(dir);
    return Math.floor(s.bavail * s.bsize * AUTO_STORAGE_FRACTION);
  } catch {
    return Infinity;
  }
}

/** Free and total bytes of the file system holding `dir` now; undefined when it cannot be read. */
export async function spaceOf(dir: string): Promise<{ readonly freeBytes: number; readonly sizeBytes: number } | undefined> {
  return statfs(dir).then(
    (s) => ({ freeBytes: s.bavail * s.bsize, sizeBytes: s.blocks * s.bsize }),
    () => undefined,
  );
}

/** The errno class (`ENOENT`, `EINVAL`, …) of a failed fs call, if it has one. */
export function errnoCode(e: unknown): string | undefined {
  return e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}
