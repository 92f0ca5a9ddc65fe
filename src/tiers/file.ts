// Storage tier: one file per cache entry in a directory, written and read with O_DIRECT by default so
// that the page cache cannot flatter the device (docs/reference-compat.md#rc-17, #rc-18). It only ever touches files
// it created itself (entry names and leftovers of other runs: file-names.ts). The pieces: file-names.ts,
// fs-info.ts (file system facts), split-timer.ts (the timing below), direct-io.ts (chunked reads, the
// O_DIRECT writer); file-kind.ts makes it the `file` storage backend of the registry.
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
import { mkdir, mkdtemp, open, rm, stat, unlink } from 'node:fs/promises';
import type { MadeDir } from './storage-kind.js';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIRECT_ALIGN, DirectSlabs } from '../data/aligned.js';
import { SlotPool } from '../data/slots.js';
import { MiB, roundUp } from '../util/units.js';
import { EntryNotFoundError, IoAbortedError } from './backend.js';
import type { Backend, ChunkSink, ReadResult, IOTiming } from './backend.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { ChunkReads, DirectWriter, READS_IN_FLIGHT, sizedChunks, writeFully } from './direct-io.js';
import type { ChunkRead, FileCounters, WriterContext } from './direct-io.js';
import { entryFileName, newRunId, RUN_ID } from './file-names.js';
import { errnoCode, fileAllocatedBytes, fileSystemOf } from './fs-info.js';
import type { IoMode } from './io-mode.js';
import { SplitTimer } from './split-timer.js';
import { FileIoGauge } from './file-io-gauge.js';

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
  /** Counts threadpool use and staging waits (default: a gauge of its own, sized from UV_THREADPOOL_SIZE). */
  readonly gauge?: FileIoGauge;
  /** Told of the fresh temporary directory as soon as it exists (no `dir` given). */
  readonly madeDir?: (at: MadeDir) => void;
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
    /** Threadpool use and staging waits of this tier's operations. */
    readonly gauge: FileIoGauge,
  ) {
    this.ctx = { chunkBytes, slots, directSlabs, counters: this.counters, gauge, callerViewsOk: true };
  }

  static async create(options: FileBackendOptions = {}): Promise<FileBackend> {
    const ioMode = options.ioMode ?? 'direct';
    const chunkBytes = roundUp(Math.max(options.chunkBytes ?? DEFAULT_CHUNK_BYTES, 1), DIRECT_ALIGN);
    const slotCount = options.stagingSlots ?? DEFAULT_STAGING_SLOTS;
    const runId = options.runId ?? newRunId();
    if (!RUN_ID.test(runId)) throw new RangeError(`run id '${runId}' is not 8 lowercase hex digits`);
    const ownsDir = options.dir === undefined;
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'kv_cache_')));
    if (ownsDir) options.madeDir?.({ dir, runId, ownsDir }); // before anything else is awaited: a force-quit can remove it
    try {
      if (!ownsDir) await mkdir(dir, { recursive: true });
      if (!(await stat(dir)).isDirectory()) throw new Error(`cache dir '${dir}' is not a directory`);
      const fs = await fileSystemOf(dir);
      const slots = new SlotPool(slotCount, chunkBytes, ioMode === 'direct' ? dir : undefined);
      const effective: IoMode = ioMode === 'direct' && slots.direct ? 'direct' : 'buffered';
      const slabs = options.directSlabs ?? new DirectSlabs();
      const gauge = options.gauge ?? new FileIoGauge();
      return new FileBackend(dir, ioMode, effective, fs.name, fs.blockBytes, runId, chunkBytes, slots, slabs, ownsDir, gauge);
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
    // O_NOFOLLOW: rewriting an entry of ours never writes through a link put in its place (a shared cache dir).
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_NOFOLLOW | exclusive | (direct ? fsc.O_DIRECT : 0);
    const t = new SplitTimer(this.gauge);
    let fh: FileHandle;
    try {
      fh = await t.host(() => open(path, flags, 0o644));
    } catch (e) {
      if (ours) await this.unlink(path).catch(() => undefined); // the old entry is unusable now
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
      else await this.unlink(path).catch(() => undefined);
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
    // Untimed: a harness limit, not storage; the gauge counts it.
    const slot = await this.gauge.staging(this.ctx.slots.acquire(), this.ctx.slots.available > 0);
    const t = new SplitTimer(this.gauge);
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
    await this.unlink(path).catch((e: unknown) => {
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

  /** unlink(2) on the threadpool, counted by the gauge (an eviction's delete competes with the I/O). */
  private unlink(path: string): Promise<void> {
    return this.gauge.track(() => unlink(path));
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('file tier is closed');
  }
}
