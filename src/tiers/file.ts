// Storage tier: one file per cache entry in a directory, written and read with O_DIRECT by default so
// that the page cache cannot flatter the device (docs/reference-compat.md#rc-17, #rc-18). It only ever touches files
// it created itself (the reference deletes every *.npy in --cache-dir at start, docs/reference-compat.md#rc-4).
// Entry files are named `kvc-<run id>-<key>.bin`: the run id (8 random hex digits per backend) keeps
// a new run's files apart from the leftovers of a killed one, which `findStaleEntries` recognises by
// the same pattern with another run id (and which are removed only on request, removeStaleEntries).
//
// Timing (ms, performance.now(); waits for the ChunkSource, the sink or a free staging slot are never
// counted; each part is measured around our own awaited fs calls, so it includes the libuv threadpool
// hand-off and the callback's return to the event loop):
//   direct write    device = write(2) syscalls (O_DIRECT: the data reaches the device) + ftruncate
//                            + fsync (metadata, device cache flush)
//                   host   = open + close + copies into a staging slot (unaligned chunks only)
//   buffered write  device = fsync (writeback of the dirty pages; the reference's "device")
//                   host   = open + close + write(2) syscalls, which only copy into the page cache
//                            (and may include dirty-page throttling, docs/reference-compat.md#rc-17)
//   direct read     device = read(2) syscalls into an aligned staging slot, straight from the device
//                   host   = open + close
//   buffered read   device = read(2) syscalls through the page cache: may be served from RAM, e.g.
//                            right after the entry was written, so this is not a device measurement
//                   host   = open + close
// total = host + device always.
import { constants as fsc } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, open, readdir, rm, stat, statfs, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIRECT_ALIGN, DirectSlabs } from '../data/aligned.js';
import { SlotPool } from '../data/slots.js';
import { MiB, roundUp } from '../util/units.js';
import { EntryNotFoundError, IoAbortedError, timing } from './backend.js';
import type { Backend, ChunkSink, IOTiming, ReadResult } from './backend.js';
import type { ChunkSource } from '../data/chunk-source.js';
import type { IoMode } from '../settings/choices.js';

export interface FileBackendOptions {
  /** Directory for entry files; created if absent. Absent: a fresh temp dir, removed on close. */
  readonly dir?: string;
  /** Requested mode (default 'direct'); see FileBackend.effectiveIoMode for what was granted. */
  readonly ioMode?: IoMode;
  /** Largest single read/write syscall and staging slot size (default 4 MiB, rounded up to 4 KiB). */
  readonly chunkBytes?: number;
  /** Staging slots, i.e. operations that can hold a bounce buffer at once (default 8). */
  readonly stagingSlots?: number;
  /** Callers' slabs whose chunks direct writes take as they are; absent: every chunk is staged. */
  readonly directSlabs?: DirectSlabs;
  /** The run id in entry file names (RUN_ID pattern); absent: a fresh random one. */
  readonly runId?: string;
}

/** A write would replace a file this backend did not create. */
export class ForeignFileError extends Error {
  /** The errno class it stands for (the exclusive open failed with EEXIST). */
  readonly code = 'EEXIST';
  constructor(readonly path: string) {
    super(`refusing to overwrite '${path}': the file already existed and was not written by this run`);
    this.name = 'ForeignFileError';
  }
}

const DEFAULT_CHUNK_BYTES = 4 * MiB;
const DEFAULT_STAGING_SLOTS = 8;
/** Chunk reads of one entry in flight at once, staging slots permitting (readInto says why). */
export const READS_IN_FLIGHT = 2;
const SAFE_CHAR = /^[A-Za-z0-9._-]$/;

/**
 * `<key>.bin` for keys made of [A-Za-z0-9._-]; any other UTF-16 code unit becomes `%XXXX` (hex). Since
 * `%` itself is always escaped, distinct keys give distinct names.
 */
export function fileNameForKey(key: string): string {
  let name = '';
  for (let i = 0; i < key.length; i++) {
    const ch = key.charAt(i);
    name += SAFE_CHAR.test(ch) ? ch : `%${key.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `${name}.bin`;
}

/** A run id: 8 lowercase hex digits. */
export const RUN_ID = /^[0-9a-f]{8}$/;
/** An entry file of any run: `kvc-<run id>-<escaped key>.bin`; group 1 is the run id. */
const ENTRY_FILE = /^kvc-([0-9a-f]{8})-[A-Za-z0-9._%-]+\.bin$/;

/** A fresh run id: random, not from the run's seed (two runs with one seed must not share names). */
export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** The file name of `key`'s entry in run `runId`. */
export function entryFileName(runId: string, key: string): string {
  return `kvc-${runId}-${fileNameForKey(key)}`;
}

/** Entry files of other runs found in a cache directory (regular files named ENTRY_FILE only). */
export interface StaleEntries {
  readonly paths: readonly string[];
  /** Their apparent sizes (bytes). */
  readonly bytes: number;
  /** What they occupy on the device (st_blocks × 512). */
  readonly allocatedBytes: number;
}

/** The entry files in `dir` left by runs other than `runId` (a killed run leaves its files behind). */
export async function findStaleEntries(dir: string, runId: string): Promise<StaleEntries> {
  const paths: string[] = [];
  let bytes = 0;
  let allocatedBytes = 0;
  for (const name of await readdir(dir)) {
    const m = ENTRY_FILE.exec(name);
    if (m === null || m[1] === runId) continue;
    const path = join(dir, name);
    const st = await lstat(path).catch(() => undefined); // gone meanwhile: not stale any more
    if (st?.isFile() !== true) continue;
    paths.push(path);
    bytes += st.size;
    allocatedBytes += st.blocks * 512;
  }
  return { paths, bytes, allocatedBytes };
}

/** Deletes `stale`'s files (already gone is fine); returns how many were removed. */
export async function removeStaleEntries(stale: StaleEntries): Promise<number> {
  let removed = 0;
  for (const path of stale.paths) {
    try {
      await unlink(path);
      removed++;
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
  }
  return removed;
}

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

/** The file system's name (FS_MAGIC) and block size of `dir`. */
async function fileSystemOf(dir: string): Promise<{ name: string; blockBytes: number }> {
  const { type, bsize } = await statfs(dir);
  return { name: FS_MAGIC.get(type) ?? `0x${type.toString(16)}`, blockBytes: bsize > 0 ? bsize : DIRECT_ALIGN };
}

function errnoCode(e: unknown): string | undefined {
  return e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/** Accumulates one operation's host and device time around the awaited calls it wraps. */
class SplitTimer {
  hostMs = 0;
  deviceMs = 0;
  private overlapping = 0;
  private busySince = 0;

  device<T>(op: () => Promise<T>): Promise<T> {
    return this.timed(op, (ms) => (this.deviceMs += ms));
  }

  host<T>(op: () => Promise<T>): Promise<T> {
    return this.timed(op, (ms) => (this.hostMs += ms));
  }

  /** Device time of operations that may overlap: the wall time during which at least one is in flight. */
  async deviceOverlapped<T>(op: () => Promise<T>): Promise<T> {
    if (this.overlapping++ === 0) this.busySince = performance.now();
    try {
      return await op();
    } finally {
      if (--this.overlapping === 0) this.deviceMs += performance.now() - this.busySince;
    }
  }

  hostSync(op: () => void): void {
    const t0 = performance.now();
    op();
    this.hostMs += performance.now() - t0;
  }

  result(): IOTiming {
    return timing(this.hostMs, this.deviceMs);
  }

  private async timed<T>(op: () => Promise<T>, add: (ms: number) => void): Promise<T> {
    const t0 = performance.now();
    try {
      return await op();
    } finally {
      add(performance.now() - t0);
    }
  }
}

/** One chunk of an entry read: the slot it is in and its bytes of the entry. */
interface ChunkRead {
  readonly slot: Uint8Array;
  readonly bytes: number;
}

/** The chunks of one entry's read, issued in order; each fills its slot completely (short reads are continued). */
class ChunkReads {
  private offset = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly size: number,
    private readonly chunkBytes: number,
    private readonly direct: boolean,
    private readonly t: SplitTimer,
  ) {}

  more(): boolean {
    return this.offset < this.size;
  }

  next(slot: Uint8Array): Promise<ChunkRead> {
    const at = this.offset;
    const bytes = Math.min(this.chunkBytes, this.size - at);
    this.offset += bytes;
    return this.t.deviceOverlapped(() => this.fill(slot, at, bytes)).then(() => ({ slot, bytes }));
  }

  /** Reads [at, at + bytes) of the entry into the start of `slot` (whole blocks in direct mode). */
  private async fill(slot: Uint8Array, at: number, bytes: number): Promise<void> {
    let got = 0;
    while (got < bytes) {
      const want = this.direct ? roundUp(bytes - got, DIRECT_ALIGN) : bytes - got;
      const { bytesRead } = await this.fh.read(slot, got, want, at + got);
      if (bytesRead <= 0) throw new Error(`file for entry is shorter than its ${this.size} bytes (EOF at ${at + got})`);
      got += bytesRead;
    }
  }
}

/** Writes all of `buf` at `pos`, looping over short writes. */
async function writeFully(fh: FileHandle, buf: Uint8Array, pos: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, pos + done);
    if (bytesWritten <= 0) throw new Error(`write returned ${bytesWritten} at offset ${pos + done}`);
    done += bytesWritten;
  }
}

/** What a backend shares with the writer of one entry. */
interface WriterContext {
  readonly chunkBytes: number;
  readonly slots: SlotPool;
  readonly directSlabs: DirectSlabs;
  readonly counters: FileCounters;
  /** False once a caller's aligned view was refused (its slab was probed on another file system). */
  callerViewsOk: boolean;
}

export interface FileCounters {
  /** Bytes written straight from the caller's aligned chunks (no copy). */
  zeroCopyBytes: number;
  /** Bytes copied into a staging slot before an O_DIRECT write. */
  stagedBytes: number;
}

/**
 * Streams one entry into an O_DIRECT file. File offsets stay multiples of DIRECT_ALIGN: aligned
 * chunks go to write(2) as they are (the last one padded to a block, truncated later); everything
 * else is gathered in a staging slot and written a slot at a time.
 */
class DirectWriter {
  /** File offset written so far, always a multiple of DIRECT_ALIGN. */
  private pos = 0;
  /** Bytes gathered in the staging slot and not yet written. */
  private pending = 0;
  private slot: Uint8Array | undefined;

  constructor(
    private readonly fh: FileHandle,
    private readonly ctx: WriterContext,
    private readonly t: SplitTimer,
  ) {}

  async add(chunk: Uint8Array, isLast: boolean): Promise<void> {
    let rest = chunk;
    if (this.pending === 0) {
      const whole = isLast ? this.ctx.directSlabs.directView(chunk, roundUp(chunk.length, DIRECT_ALIGN)) : undefined;
      if (whole !== undefined) return this.writeView(whole);
      const head = chunk.length - (chunk.length % DIRECT_ALIGN);
      const headView = head > 0 ? this.ctx.directSlabs.directView(chunk.subarray(0, head), head) : undefined;
      if (headView !== undefined) {
        await this.writeView(headView);
        rest = chunk.subarray(head);
      }
    }
    await this.stage(rest);
  }

  /** Writes what is left in the staging slot, padded to a whole block, then cuts the file to `size`. */
  async finish(size: number): Promise<void> {
    if (this.pending > 0) await this.flushSlot();
    if (size % DIRECT_ALIGN !== 0) await this.t.device(() => this.fh.truncate(size));
  }

  release(): void {
    if (this.slot !== undefined) this.ctx.slots.release(this.slot);
    this.slot = undefined;
  }

  /** A staging slot, waiting (untimed) for one if all are in use. */
  private async stagingSlot(): Promise<Uint8Array> {
    this.slot ??= await this.ctx.slots.acquire();
    return this.slot;
  }

  private async writeAt(buf: Uint8Array): Promise<void> {
    await this.t.device(() => writeFully(this.fh, buf, this.pos));
    this.pos += buf.length;
  }

  /** Writes an aligned caller view in chunkBytes pieces, bouncing through staging if it is refused. */
  private async writeView(view: Uint8Array): Promise<void> {
    const step = this.ctx.chunkBytes;
    for (let off = 0; off < view.length; off += step) {
      const piece = view.subarray(off, Math.min(off + step, view.length));
      if (this.ctx.callerViewsOk) {
        try {
          await this.writeAt(piece);
          this.ctx.counters.zeroCopyBytes += piece.length;
          continue;
        } catch (e) {
          if (errnoCode(e) !== 'EINVAL') throw e;
          this.ctx.callerViewsOk = false;
        }
      }
      const slot = await this.stagingSlot();
      this.t.hostSync(() => slot.set(piece));
      this.ctx.counters.stagedBytes += piece.length;
      await this.writeAt(slot.subarray(0, piece.length));
    }
  }

  private async stage(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) {
      const slot = await this.stagingSlot();
      const n = Math.min(slot.length - this.pending, bytes.length - off);
      const at = this.pending;
      this.t.hostSync(() => slot.set(bytes.subarray(off, off + n), at));
      this.ctx.counters.stagedBytes += n;
      this.pending += n;
      off += n;
      if (this.pending === slot.length) await this.flushSlot();
    }
  }

  private async flushSlot(): Promise<void> {
    const slot = await this.stagingSlot();
    await this.writeAt(slot.subarray(0, roundUp(this.pending, DIRECT_ALIGN)));
    this.pending = 0;
  }
}

/** Iterates a source's non-empty chunks, flagging the last one and checking the declared size. */
async function* sizedChunks(key: string, source: ChunkSource): AsyncGenerator<[Uint8Array, boolean]> {
  let received = 0;
  for await (const chunk of source.chunks()) {
    if (chunk.length === 0) continue;
    received += chunk.length;
    if (received > source.size) throw new RangeError(`source for '${key}' exceeds its size ${source.size}`);
    yield [chunk, received === source.size];
  }
  if (received !== source.size) {
    throw new RangeError(`source for '${key}' gave ${received} bytes, expected ${source.size}`);
  }
}

export class FileBackend implements Backend {
  readonly tier = 'storage' as const;
  /** Bytes zero-copied vs staged by direct writes (to judge the copy overhead of a run). */
  readonly counters: FileCounters = { zeroCopyBytes: 0, stagedBytes: 0 };
  private readonly sizes = new Map<string, number>();
  /** Files of writes stopped by stopInFlight, or whose delete failed: removed (again) by close(). */
  private readonly abandoned = new Set<string>();
  private readonly ctx: WriterContext;
  private closed = false;
  private stopping = false;

  private constructor(
    readonly dir: string,
    /** The mode asked for. */
    readonly ioMode: IoMode,
    /** The mode in use: 'buffered' if O_DIRECT was asked for but the file system refused it. */
    readonly effectiveIoMode: IoMode,
    /** File system of `dir` (e.g. 'ext2/3/4', 'xfs', 'tmpfs'); see RAM_FILE_SYSTEMS. */
    readonly fileSystem: string,
    /** Its block size (statfs f_bsize), the unit it allocates in. */
    readonly blockBytes: number,
    /** The run id in this backend's entry file names. */
    readonly runId: string,
    readonly chunkBytes: number,
    slots: SlotPool,
    directSlabs: DirectSlabs,
    private readonly ownsDir: boolean,
  ) {
    this.ctx = { chunkBytes, slots, directSlabs, counters: this.counters, callerViewsOk: true };
  }

  static async create(options: FileBackendOptions = {}): Promise<FileBackend> {
    const ioMode = options.ioMode ?? 'direct';
    const chunkBytes = roundUp(Math.max(options.chunkBytes ?? DEFAULT_CHUNK_BYTES, 1), DIRECT_ALIGN);
    const slotCount = options.stagingSlots ?? DEFAULT_STAGING_SLOTS;
    const runId = options.runId ?? newRunId();
    if (!RUN_ID.test(runId)) throw new RangeError(`run id '${runId}' is not 8 lowercase hex digits`);
    const ownsDir = options.dir === undefined;
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'kv_cache_')));
    try {
      if (!ownsDir) await mkdir(dir, { recursive: true });
      if (!(await stat(dir)).isDirectory()) throw new Error(`cache dir '${dir}' is not a directory`);
      const fs = await fileSystemOf(dir);
      const slots = new SlotPool(slotCount, chunkBytes, ioMode === 'direct' ? dir : undefined);
      const effective: IoMode = ioMode === 'direct' && slots.direct ? 'direct' : 'buffered';
      const slabs = options.directSlabs ?? new DirectSlabs();
      return new FileBackend(dir, ioMode, effective, fs.name, fs.blockBytes, runId, chunkBytes, slots, slabs, ownsDir);
    } catch (e) {
      if (ownsDir) await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The file that holds (or would hold) `key`. */
  pathFor(key: string): string {
    return join(this.dir, entryFileName(this.runId, key));
  }

  /** See Backend.allocatedBytes: whole blocks and extent metadata (fileAllocatedBytes). */
  allocatedBytes(size: number): number {
    return fileAllocatedBytes(size, this.blockBytes);
  }

  keys(): Iterable<string> {
    return this.sizes.keys();
  }

  /** Size of a stored entry, or undefined. */
  sizeOf(key: string): number | undefined {
    return this.sizes.get(key);
  }

  /** See Backend.stopInFlight: multi-GiB entries must not hold the end of a run for seconds. */
  stopInFlight(): void {
    this.stopping = true;
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    this.assertOpen();
    if (this.stopping) throw new IoAbortedError(0); // the run is over: start nothing new
    const path = this.pathFor(key);
    const direct = this.effectiveIoMode === 'direct';
    // A key we do not hold must not clobber an existing file (another run's or the user's).
    const ours = this.sizes.delete(key) || this.abandoned.delete(path);
    const exclusive = ours ? 0 : fsc.O_EXCL;
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | exclusive | (direct ? fsc.O_DIRECT : 0);
    const t = new SplitTimer();
    let fh: FileHandle;
    try {
      fh = await t.host(() => open(path, flags, 0o644));
    } catch (e) {
      if (ours) await unlink(path).catch(() => undefined); // the old entry is unusable now
      throw errnoCode(e) === 'EEXIST' ? new ForeignFileError(path) : e;
    }
    const writer = direct ? new DirectWriter(fh, this.ctx, t) : undefined;
    try {
      try {
        if (writer === undefined) await this.streamBuffered(key, source, fh, t);
        else {
          let handed = 0;
          for await (const [chunk, isLast] of sizedChunks(key, source)) {
            if (this.stopping) throw new IoAbortedError(handed);
            await writer.add(chunk, isLast);
            handed += chunk.length;
          }
          await writer.finish(source.size);
        }
        await t.device(() => fh.sync());
      } finally {
        writer?.release();
        await t.host(() => fh.close());
      }
    } catch (e) {
      // Ours: we just created or truncated it. A write cut by the end of the run leaves its file to
      // close(): unlinking a large file takes ~0.1 s per 300 MB here (ext4 with discard), and doing
      // it now would stretch the measured window with teardown.
      if (e instanceof IoAbortedError) this.abandoned.add(path);
      else await unlink(path).catch(() => undefined);
      throw e;
    }
    this.sizes.set(key, source.size);
    return t.result();
  }

  /** Buffered write: whole chunks handed to the page cache, at most chunkBytes per syscall. */
  private async streamBuffered(key: string, source: ChunkSource, fh: FileHandle, t: SplitTimer): Promise<void> {
    let pos = 0;
    for await (const [chunk] of sizedChunks(key, source)) {
      for (let off = 0; off < chunk.length; off += this.chunkBytes) {
        const piece = chunk.subarray(off, Math.min(off + this.chunkBytes, chunk.length));
        await t.host(() => writeFully(fh, piece, pos));
        pos += piece.length;
      }
    }
  }

  async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    this.assertOpen();
    const size = this.sizes.get(key);
    if (size === undefined) throw new EntryNotFoundError(this.tier, key);
    const direct = this.effectiveIoMode === 'direct';
    const slot = await this.ctx.slots.acquire(); // untimed: a harness limit, not storage
    const t = new SplitTimer();
    let read: number;
    try {
      let fh: FileHandle;
      try {
        fh = await t.host(() => open(this.pathFor(key), fsc.O_RDONLY | (direct ? fsc.O_DIRECT : 0)));
      } catch (e) {
        throw errnoCode(e) === 'ENOENT' ? new EntryNotFoundError(this.tier, key) : e;
      }
      try {
        read = await this.readInto(fh, size, slot, t, sink);
      } finally {
        await t.host(() => fh.close());
      }
    } finally {
      this.ctx.slots.release(slot);
    }
    return { timing: t.result(), bytes: read };
  }

  /**
   * Reads `size` bytes in slot-sized chunks (whole blocks in direct mode), handing each to `sink` in
   * order. With a second staging slot free, the next chunk's read is in flight while the current one
   * is handed over and read: a direct read of an entry keeps the device as busy as the kernel's
   * read-ahead keeps it for a buffered one (one chunk at a time left the device idle between chunks
   * and, on a virtio disk, ~25 % below fio's psync reads of the same size). Device time is the wall
   * time during which at least one read was in flight, so overlapped reads are not counted twice.
   */
  private async readInto(fh: FileHandle, size: number, slot: Uint8Array, t: SplitTimer, sink: ChunkSink | undefined): Promise<number> {
    const direct = this.effectiveIoMode === 'direct';
    const spares = this.spareSlots(Math.ceil(size / slot.length) - 1);
    const chunks = new ChunkReads(fh, size, slot.length, direct, t);
    const pending: Array<Promise<ChunkRead>> = [];
    const issue = (into: Uint8Array): void => {
      if (!this.stopping && chunks.more()) pending.push(chunks.next(into));
    };
    let pos = 0;
    try {
      for (const into of [slot, ...spares]) issue(into);
      for (let head = pending.shift(); head !== undefined; head = pending.shift()) {
        const done = await head;
        if (sink !== undefined) await sink(done.slot.subarray(0, done.bytes));
        pos += done.bytes;
        issue(done.slot);
      }
      return pos;
    } finally {
      await Promise.allSettled(pending); // the kernel may still be writing into a slot: never release it before
      for (const spare of spares) this.ctx.slots.release(spare);
    }
  }

  /** Up to READS_IN_FLIGHT − 1 more staging slots for one read, as many as are free now (never waits: no deadlock). */
  private spareSlots(useful: number): Uint8Array[] {
    const spares: Uint8Array[] = [];
    while (spares.length < Math.min(useful, READS_IN_FLIGHT - 1)) {
      const spare = this.ctx.slots.tryAcquire();
      if (spare === undefined) break;
      spares.push(spare);
    }
    return spares;
  }

  async delete(key: string): Promise<void> {
    if (!this.sizes.delete(key)) return; // not ours: never touch it
    const path = this.pathFor(key);
    await unlink(path).catch((e: unknown) => {
      if (errnoCode(e) === 'ENOENT') return;
      this.abandoned.add(path); // still ours: close() tries again
      throw e;
    });
  }

  async clear(): Promise<void> {
    for (const key of [...this.sizes.keys()]) await this.delete(key);
  }

  /** Deletes this backend's entry files (a KV cache does not outlive its run) and its own temp dir. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.clear();
    for (const path of this.abandoned) await unlink(path).catch(() => undefined);
    this.abandoned.clear();
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('file tier is closed');
  }
}
