// Memory that O_DIRECT accepts. JavaScript cannot see an ArrayBuffer's address, and plain Node buffers
// are not aligned (O_DIRECT fails with EINVAL), so we allocate one SharedArrayBuffer slab and find,
// once, the offset inside it at which the kernel accepts a direct read: every multiple of that
// alignment past the offset is then aligned too. Shared memory lets generator workers fill these
// buffers in place, with no copy before the write.
import { closeSync, constants, openSync, readSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HUGE_PAGE_BYTES, pageBacking } from './huge-pages.js';

/** The alignment we carve at: covers the 512-byte logical blocks seen here and 4 KiB-sector devices. */
export const DIRECT_ALIGN = 4096;

export class AlignedSlab {
  readonly buffer: SharedArrayBuffer;
  /** Offset of the first aligned byte in `buffer`. */
  readonly base: number;
  readonly usable: number;

  private constructor(buffer: SharedArrayBuffer, base: number) {
    this.buffer = buffer;
    this.base = base;
    this.usable = buffer.byteLength - base;
  }

  /**
   * A slab of at least `bytes` aligned bytes. `probeDir` is a directory on the file system that will
   * be used with O_DIRECT; without it (or when the file system refuses O_DIRECT) the slab is still
   * usable for buffered I/O and `direct` is false. A slab that passes the probe is added to `registry`.
   */
  static create(bytes: number, probeDir?: string, registry?: DirectSlabs): { slab: AlignedSlab; direct: boolean } {
    // A slab of at least a huge page asks for huge pages before its first touch and starts at a huge
    // page boundary (so a 4 MiB slot spans two whole huge pages): huge-pages.ts says why.
    const backing = bytes >= HUGE_PAGE_BYTES ? pageBacking() : undefined;
    const buffer = new SharedArrayBuffer(bytes + (backing?.huge === true ? HUGE_PAGE_BYTES : DIRECT_ALIGN));
    const start = backing?.prepare(buffer) ?? 0;
    const base = probeDir === undefined ? undefined : probeDirectOffset(buffer, probeDir, start);
    const slab = new AlignedSlab(buffer, base ?? start);
    if (base !== undefined) registry?.add(slab);
    return { slab, direct: base !== undefined };
  }

  /** A view of `length` bytes starting `offset` bytes past the aligned base. */
  view(offset: number, length: number): Uint8Array {
    if (offset < 0 || offset + length > this.usable) throw new RangeError('slab view out of range');
    return new Uint8Array(this.buffer, this.base + offset, length);
  }
}

/**
 * Slabs that passed the O_DIRECT probe, so the file tier can tell which of its callers' chunks (payload
 * slots, CPU-tier pages) write(2) accepts as they are. One per run: setup makes it and hands it to
 * whoever makes such slabs and to the file tier.
 */
export class DirectSlabs {
  private readonly slabs = new WeakMap<ArrayBufferLike, AlignedSlab>();

  add(slab: AlignedSlab): void {
    this.slabs.set(slab.buffer, slab);
  }

  /**
   * The view extended to `length` bytes (≥ its own length) if it lies in one of these slabs, starts at
   * an aligned position and has room for `length` bytes; otherwise undefined. Lets the file tier write
   * a payload chunk (whose tail may be shorter than a block) directly, padding the tail.
   */
  directView(view: Uint8Array, length: number): Uint8Array | undefined {
    const slab = this.slabs.get(view.buffer);
    if (slab === undefined) return undefined;
    const rel = view.byteOffset - slab.base;
    if (rel < 0 || rel % DIRECT_ALIGN !== 0 || rel + length > slab.usable) return undefined;
    return new Uint8Array(view.buffer, view.byteOffset, length);
  }
}

/**
 * Finds the smallest offset in `buffer` from `start` on from which a DIRECT_ALIGN-byte O_DIRECT read
 * succeeds, by trying each 16-byte step (allocations are 16-byte aligned) of one alignment window.
 * Undefined if the file system does not support O_DIRECT at all.
 */
function probeDirectOffset(buffer: SharedArrayBuffer, dir: string, start: number): number | undefined {
  const path = join(dir, `.kvcache-align-probe-${process.pid}-${Date.now()}`);
  writeFileSync(path, new Uint8Array(DIRECT_ALIGN), { flag: 'wx' }); // a new file: never through a planted link
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECT);
  } catch {
    unlinkSync(path);
    return undefined;
  }
  try {
    for (let off = start; off < start + DIRECT_ALIGN; off += 16) {
      try {
        readSync(fd, new Uint8Array(buffer, off, DIRECT_ALIGN), 0, DIRECT_ALIGN, 0);
        return off;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e;
      }
    }
    return undefined;
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}
