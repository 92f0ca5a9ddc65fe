// Storage tier with --kv-layout slab: entries in fixed-size slots of a few large pool files, as Dynamo
// KVBM's local-SSD tier keeps its blocks (a NIXL descriptor is a file offset). The pool is created and
// written whole before the measured window (`layOut`: every byte of every file written once, as fio
// lays out its files, so no measured write allocates a block or converts an unwritten extent); then
// storing an entry is an overwrite at its slot's offset, reading one a read there, and evicting one
// gives the slot back to the index (slab-pool.ts): no create, rename or unlink per entry. Pool files
// are named as this run's entry files (`kvc-<run id>-slab-<n>.bin`, file-names.ts), so a force-quit
// and a later run's leftover check treat them as they treat entry files; close() removes them.
//
// Timing (as file.ts; every part measured around our own awaited fs calls):
//   direct write    device = write(2) at the slot's offsets (O_DIRECT, the tail padded to 4 KiB
//                            inside the slot) + fdatasync
//                   host   = copies into a staging slot (unaligned chunks only); no open or close
//   buffered write  device = fdatasync        host = write(2) into the page cache
//   read            device = read(2) at the slot's offsets      host = none
import { randomFillSync } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat, unlink } from 'node:fs/promises';
import type { FileBackendOptions } from './file.js';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIRECT_ALIGN, DirectSlabs } from '../data/aligned.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { SlotPool } from '../data/slots.js';
import { MiB, roundUp } from '../util/units.js';
import { EntryNotFoundError, IoAbortedError } from './backend.js';
import type { ChunkSink, IOTiming, ReadResult } from './backend.js';
import { DirectWriter, READS_IN_FLIGHT, sizedChunks, writeFully } from './direct-io.js';
import { oneJobRead, timedJob, writeOneChunk } from './block-file.js';
import type { BlockAt, BlockFiles, BlockFileTimes } from './block-file.js';
import type { FileCounters, WriterContext } from './direct-io.js';
import { FileIoGauge } from './file-io-gauge.js';
import { newRunId, RUN_ID } from './file-names.js';
import { errnoCode, fileSystemOf } from './fs-info.js';
import type { IoMode } from './io-mode.js';
import { poolFileBytes, slabGeometry, SlotIndex, slotPlace } from './slab-pool.js';
import type { SlabGeometry, SlabReport, SlotEntry } from './slab-pool.js';
import { SplitTimer } from './split-timer.js';
import { StorageSetupError } from './storage-kind.js';
import type { StorageBackend } from './storage-kind.js';

/** The file tier's own options (directory, I/O mode, chunks, staging, run id, gauge, madeDir), plus the pool's shape. */
export interface SlabBackendOptions extends Omit<FileBackendOptions, 'pool'> {
  /** Size of a slot (rounded up to 4 KiB by the caller: slotSizeOf). */
  readonly slotBytes: number;
  /** Size of a pool file (rounded down to whole slots); 0: the pool in a few files. */
  readonly fileBytes: number;
}

const DEFAULT_CHUNK_BYTES = 4 * MiB;
/** Staging slots one read call fills at most (readv): half the hand-offs of one 4 MiB read per call. */
const SLOTS_PER_READ = 2;
/** Lay-out writes in flight at once. */
const LAY_OUT_IN_FLIGHT = 4;
const DEFAULT_STAGING_SLOTS = 8;
const FULL_ERRORS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/** The name of pool file `n` of run `runId`: an entry-file name of that run (force-quit and leftover checks know it). */
export function slabFileName(runId: string, n: number): string {
  return `kvc-${runId}-slab-${String(n).padStart(4, '0')}.bin`;
}

const gib = (bytes: number): string => (bytes / 2 ** 30).toFixed(2);

export class SlabBackend implements StorageBackend {
  readonly tier = 'storage' as const;
  readonly counters: FileCounters = { zeroCopyBytes: 0, stagedBytes: 0 };
  private readonly ctx: WriterContext;
  private geometry: SlabGeometry | undefined;
  private index = new SlotIndex(0);
  private handles: FileHandle[] = [];
  /** Pool files this backend created (only these are ever written or removed). */
  private readonly created: string[] = [];
  private layOutBytes = 0;
  private layOutSec = 0;
  private fileCreates = 0;
  private fileUnlinks = 0;
  private largestRefused: number | null = null;
  private closed = false;
  private stopping = false;
  /** Native jobs not yet settled: close() waits for them before it closes the descriptors they use. */
  private readonly jobsInFlight = new Set<Promise<BlockFileTimes>>();

  private constructor(
    readonly dir: string,
    readonly ioMode: IoMode,
    readonly effectiveIoMode: IoMode,
    readonly fileSystem: string,
    readonly runId: string,
    readonly slotBytes: number,
    private readonly fileBytes: number,
    slots: SlotPool,
    directSlabs: DirectSlabs,
    private readonly ownsDir: boolean,
    readonly gauge: FileIoGauge,
    /** Native jobs for one-chunk entries in direct mode (block-file.ts: the write and fdatasync, or the read, as one job). */
    readonly blockFiles?: BlockFiles,
  ) {
    this.ctx = { chunkBytes: slots.slotBytes, slots, directSlabs, counters: this.counters, gauge, callerViewsOk: true };
  }

  static async create(o: SlabBackendOptions): Promise<SlabBackend> {
    const ioMode = o.ioMode ?? 'direct';
    const chunkBytes = roundUp(Math.max(o.chunkBytes ?? DEFAULT_CHUNK_BYTES, 1), DIRECT_ALIGN);
    if (!(o.slotBytes > 0) || o.slotBytes % DIRECT_ALIGN !== 0)
      throw new RangeError(`slot size ${o.slotBytes} is not a positive multiple of ${DIRECT_ALIGN}`);
    const runId = o.runId ?? newRunId();
    if (!RUN_ID.test(runId)) throw new RangeError(`run id '${runId}' is not 8 lowercase hex digits`);
    const ownsDir = o.dir === undefined;
    const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'kv_cache_')));
    if (ownsDir) o.madeDir?.({ dir, runId, ownsDir }); // before anything else is awaited
    try {
      if (!ownsDir) await mkdir(dir, { recursive: true });
      if (!(await stat(dir)).isDirectory()) throw new Error(`cache dir '${dir}' is not a directory`);
      const fs = await fileSystemOf(dir);
      const slots = new SlotPool(o.stagingSlots ?? DEFAULT_STAGING_SLOTS, chunkBytes, ioMode === 'direct' ? dir : undefined);
      const effective: IoMode = ioMode === 'direct' && slots.direct ? 'direct' : 'buffered';
      const gauge = o.gauge ?? new FileIoGauge();
      if (effective !== 'direct') o.blockFiles?.close(); // the jobs serve direct I/O only
      return new SlabBackend(
        dir,
        ioMode,
        effective,
        fs.name,
        runId,
        o.slotBytes,
        o.fileBytes,
        slots,
        o.directSlabs ?? new DirectSlabs(),
        ownsDir,
        gauge,
        effective === 'direct' ? o.blockFiles : undefined,
      );
    } catch (e) {
      o.blockFiles?.close(); // the backend would have owned it
      if (ownsDir) await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Cuts the pool for a tier limit of `limitBytes`; returns the limit the cache enforces (whole slots). Throws StorageSetupError when no slot fits. */
  plan(limitBytes: number): number {
    const g = slabGeometry(limitBytes, this.slotBytes, this.fileBytes);
    if (typeof g === 'string')
      throw new StorageSetupError(`--kv-layout slab: ${g}; give a larger --storage-capacity-gb or a smaller --slab-slot-mib`);
    this.geometry = g;
    return g.poolBytes;
  }

  /** Pool files' paths, made once each (every block operation names its file, for error messages). */
  private readonly paths: string[] = [];

  /** The path of pool file `n`. */
  poolPath(n: number): string {
    return (this.paths[n] ??= join(this.dir, slabFileName(this.runId, n)));
  }

  /**
   * Creates every pool file (exclusively: an existing file is never taken over) and writes all of it
   * once, then syncs it. Before the measured window. Any failure removes what was created; a full
   * file system and a foreign file are StorageSetupErrors (exit 2). `signal` (the run's interrupt)
   * stops it between writes: the run then ends before measuring, on a partly laid-out pool.
   */
  async layOut(signal?: AbortSignal): Promise<void> {
    const g = this.geometry;
    if (g === undefined) throw new Error('slab pool laid out before it was planned');
    const t0 = performance.now();
    const fill = await this.ctx.slots.acquire();
    // Random bytes, not zeros: a device that recognises zero blocks would leave the pool unallocated.
    randomFillSync(fill);
    const direct = this.effectiveIoMode === 'direct';
    try {
      for (let n = 0; n < g.files; n++) {
        const path = this.poolPath(n);
        let fh: FileHandle;
        try {
          fh = await open(path, fsc.O_RDWR | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW | (direct ? fsc.O_DIRECT : 0), 0o644);
        } catch (e) {
          if (errnoCode(e) === 'EEXIST')
            throw new StorageSetupError(
              `--kv-layout slab: refusing to use '${path}' as a pool file: it already exists and was not created by this run; nothing was overwritten`,
            );
          throw e;
        }
        this.fileCreates++;
        this.created.push(path);
        this.handles.push(fh);
        const bytes = poolFileBytes(g, n);
        // LAY_OUT_IN_FLIGHT writes at once (of the same bytes): one at a time would leave a deep device idle.
        for (let off = 0; off < bytes && signal?.aborted !== true; off += LAY_OUT_IN_FLIGHT * fill.length) {
          const batch: Array<Promise<void>> = [];
          for (let at = off; at < Math.min(bytes, off + LAY_OUT_IN_FLIGHT * fill.length); at += fill.length) {
            const piece = fill.subarray(0, Math.min(fill.length, bytes - at));
            batch.push(this.gauge.track(() => writeFully(fh, piece, at)).then(() => void (this.layOutBytes += piece.length)));
          }
          const settled = await Promise.allSettled(batch);
          for (const r of settled) if (r.status === 'rejected') throw r.reason;
        }
        await this.gauge.track(() => fh.sync());
        if (signal?.aborted === true) break;
      }
    } catch (e) {
      const written = this.layOutBytes;
      await this.removePool();
      const code = errnoCode(e);
      if (code !== undefined && FULL_ERRORS.has(code))
        throw new StorageSetupError(
          `--kv-layout slab: the pool (${gib(g.poolBytes)} GiB in ${g.files} files) does not fit in ${this.dir}: the file system was full (${code}) after ${gib(written)} GiB; ` +
            'give a smaller --storage-capacity-gb or free space there; the pool files written were removed',
        );
      throw e;
    } finally {
      this.ctx.slots.release(fill);
    }
    this.index = new SlotIndex(g.slots);
    this.layOutSec = (performance.now() - t0) / 1000;
  }

  /** A slot for an entry up to its size, nothing for a larger one: the cache then refuses it (refused_allocations). */
  allocatedBytes(size: number): number {
    if (size <= this.slotBytes) return this.slotBytes;
    this.largestRefused = Math.max(this.largestRefused ?? 0, size);
    return Infinity;
  }

  keys(): Iterable<string> {
    return this.index.keys();
  }

  sizeOf(key: string): number | undefined {
    return this.index.entry(key)?.size;
  }

  stopInFlight(): void {
    this.stopping = true;
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    this.assertOpen();
    if (this.stopping) throw new IoAbortedError(0);
    if (source.size > this.slotBytes)
      throw new RangeError(`entry '${key}' (${source.size} bytes) is larger than a slab slot (${this.slotBytes})`);
    const slot = this.index.take(key);
    if (slot === undefined) throw new Error(`slab pool has no free slot for '${key}' (${this.index.slots} slots, all held)`);
    const { fh, base, path } = this.slotAt(slot);
    const t = new SplitTimer(this.gauge);
    const jobs = this.oneJob(source.size);
    if (jobs !== undefined) {
      try {
        await this.writeInOneJob(jobs, key, source, { fd: fh.fd, path, position: base }, t);
      } catch (e) {
        this.index.release(key);
        throw e;
      }
      this.index.commit(key, source.size);
      return t.result();
    }
    const writer = this.effectiveIoMode === 'direct' ? new DirectWriter(fh, this.ctx, t, base) : undefined;
    try {
      try {
        let handed = 0;
        for await (const [chunk, isLast] of sizedChunks(key, source)) {
          if (this.stopping) throw new IoAbortedError(handed);
          if (writer !== undefined) await writer.add(chunk, isLast);
          else await t.host(() => writeFully(fh, chunk, base + handed));
          handed += chunk.length;
        }
        await writer?.finish(source.size, false);
        await t.device(() => fh.datasync());
      } finally {
        writer?.release();
      }
    } catch (e) {
      this.index.release(key); // the slot's bytes are not an entry any more
      throw e;
    }
    this.index.commit(key, source.size);
    return t.result();
  }

  read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    try {
      this.assertOpen();
      const entry = this.index.entry(key);
      if (entry === undefined) throw new EntryNotFoundError(this.tier, key);
      // The common case as one chain of thens (async layers were event-loop time per block): one native
      // job, a staging slot free now.
      const jobs = this.oneJob(entry.size);
      const slot = jobs !== undefined && !this.stopping ? this.ctx.slots.tryAcquire() : undefined;
      if (jobs === undefined || slot === undefined) return this.readWaiting(entry, sink);
      return this.readInOneJob(jobs, entry, slot, sink);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** An entry of one chunk read as one native job into `slot` (given back at the end); its time into a new timer. */
  private readInOneJob(jobs: BlockFiles, entry: SlotEntry, slot: Uint8Array, sink: ChunkSink | undefined): Promise<ReadResult> {
    const { fh, base, path } = this.slotAt(entry.slot);
    const t = new SplitTimer(this.gauge);
    const into = slot.subarray(0, roundUp(entry.size, DIRECT_ALIGN));
    const ends = { short: (bytes: number) => new Error(`slab pool file ${path} ends inside the entry at ${base + bytes}`) };
    const reading = this.timedJob(t, () => jobs.readAt({ fd: fh.fd, path, position: base }, into));
    return oneJobRead(reading, entry.size, slot, t, () => this.ctx.slots.release(slot), sink, ends);
  }

  /** read() when it waits for a staging slot, the run is stopping, or the entry is not one job. */
  private async readWaiting(entry: SlotEntry, sink: ChunkSink | undefined): Promise<ReadResult> {
    const slot = await this.gauge.staging(this.ctx.slots.acquire(), this.ctx.slots.available > 0);
    const jobs = this.oneJob(entry.size);
    if (jobs !== undefined && !this.stopping) return this.readInOneJob(jobs, entry, slot, sink);
    const { fh, base } = this.slotAt(entry.slot);
    const t = new SplitTimer(this.gauge);
    try {
      const bytes = await this.readInto(fh, base, entry.size, slot, t, sink);
      return { timing: t.result(), bytes };
    } finally {
      this.ctx.slots.release(slot);
    }
  }

  /**
   * Reads the entry in order into staging slots, READS_IN_FLIGHT calls in flight (as FileBackend's
   * reads), each call one readv(2) of up to SLOTS_PER_READ slots when enough are free: every call
   * is a hand-off to libuv's pool and back, the harness's main cost per GiB read.
   */
  private async readInto(fh: FileHandle, base: number, size: number, first: Uint8Array, t: SplitTimer, sink?: ChunkSink): Promise<number> {
    const slotBytes = first.length;
    const spares: Uint8Array[] = [];
    const useful = Math.min(Math.ceil(size / slotBytes), READS_IN_FLIGHT * SLOTS_PER_READ) - 1;
    while (spares.length < useful) {
      const spare = this.ctx.slots.tryAcquire(); // never waits: no deadlock
      if (spare === undefined) break;
      spares.push(spare);
    }
    const slots = [first, ...spares];
    const per = Math.max(1, Math.floor(slots.length / READS_IN_FLIGHT));
    const groups: Uint8Array[][] = [];
    for (let i = 0; i + per <= slots.length && groups.length < READS_IN_FLIGHT; i += per) groups.push(slots.slice(i, i + per));
    const direct = this.effectiveIoMode === 'direct';
    let next = 0;
    const pending: Array<Promise<{ group: Uint8Array[]; views: Uint8Array[] }>> = [];
    const issue = (group: Uint8Array[]): void => {
      if (this.stopping || next >= size) return;
      const at = next;
      const views: Uint8Array[] = [];
      for (const slot of group) {
        if (next >= size) break;
        const n = Math.min(slotBytes, size - next);
        views.push(slot.subarray(0, n));
        next += n;
      }
      const bufs = views.map((v, i) => (direct ? (group[i] ?? v).subarray(0, roundUp(v.length, DIRECT_ALIGN)) : v));
      pending.push(t.deviceOverlapped(() => readvFully(fh, bufs, base + at)).then(() => ({ group, views })));
    };
    let pos = 0;
    try {
      for (const group of groups) issue(group);
      for (let head = pending.shift(); head !== undefined; head = pending.shift()) {
        const done = await head;
        for (const view of done.views) {
          if (sink !== undefined) await sink(view);
          pos += view.length;
        }
        issue(done.group);
      }
      return pos;
    } finally {
      await Promise.allSettled(pending); // the kernel may still be writing into a slot: never release it before
      for (const spare of spares) this.ctx.slots.release(spare);
    }
  }

  /** The native jobs when an entry of `size` bytes is one job: direct mode, one chunk. */
  private oneJob(size: number): BlockFiles | undefined {
    return size <= this.ctx.chunkBytes ? this.blockFiles : undefined;
  }

  /**
   * A one-chunk entry written into its slot as one native job: the bytes as one aligned view padded to
   * 4 KiB inside the slot (the caller's own when its slab allows, else staged), then fdatasync.
   */
  private writeInOneJob(jobs: BlockFiles, key: string, source: ChunkSource, at: BlockAt, t: SplitTimer): Promise<void> {
    return writeOneChunk(
      this.ctx,
      key,
      source,
      t,
      () => this.stopping,
      (data) => this.timedJob(t, () => jobs.writeAt(at, data.view)),
    );
  }

  /** One job timed into `t` (block-file.ts timedJob: device = its data calls and fdatasync), known to close() until it settles. */
  private timedJob(t: SplitTimer, job: () => Promise<BlockFileTimes>): Promise<BlockFileTimes> {
    // An operation that was waiting (for its bytes) when close() began: the pool file's descriptor is
    // being closed and may be reused, so its job must not start.
    if (this.closed) return Promise.reject(new IoAbortedError(0));
    const running = timedJob(this.gauge, t, job);
    this.jobsInFlight.add(running);
    // Forgotten before the caller's reactions run (registered first); the caller handles the rejection.
    const forget = (): void => void this.jobsInFlight.delete(running);
    running.then(forget, forget);
    return running;
  }

  /** Eviction and explicit deletes: the slot goes back to the index; no file is touched. */
  delete(key: string): Promise<void> {
    this.index.release(key);
    return Promise.resolve();
  }

  clear(): Promise<void> {
    this.index.clear();
    return Promise.resolve();
  }

  /** The pool files are this run's, like entry files: closed and removed (a KV cache does not outlive its run). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.index.clear();
    // A job still in flight uses a pool file's descriptor: it must not be closed (and reused) under it.
    await Promise.allSettled([...this.jobsInFlight]);
    await this.removePool();
    this.blockFiles?.close();
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }

  report(): SlabReport {
    const g = this.geometry;
    return {
      slotBytes: this.slotBytes,
      slots: g?.slots ?? 0,
      files: g?.files ?? 0,
      fileBytes: g === undefined ? 0 : poolFileBytes(g, 0),
      poolBytes: g?.poolBytes ?? 0,
      layOutBytes: this.layOutBytes,
      layOutSec: this.layOutSec,
      slotsUsedPeak: this.index.peakUsed,
      slotsFreed: this.index.freed,
      fileCreates: this.fileCreates,
      fileUnlinks: this.fileUnlinks,
      largestRefusedBytes: this.largestRefused,
    };
  }

  private slotAt(slot: number): { fh: FileHandle; base: number; path: string } {
    if (this.geometry === undefined) throw new Error('slab pool not laid out');
    const { file, offset } = slotPlace(this.geometry, slot);
    const fh = this.handles[file];
    if (fh === undefined) throw new Error(`slab pool file ${file} is not open`);
    return { fh, base: offset, path: this.poolPath(file) };
  }

  /** Closes and unlinks every pool file this backend created (only those). */
  private async removePool(): Promise<void> {
    const handles = this.handles;
    this.handles = [];
    for (const fh of handles) await fh.close().catch(() => undefined);
    for (const path of this.created.splice(0)) {
      try {
        await unlink(path);
        this.fileUnlinks++;
      } catch {
        // already gone
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('file tier is closed');
  }
}

/** Fills `bufs` from `at` with one readv(2), continuing buffer by buffer after a short read. */
async function readvFully(fh: FileHandle, bufs: Uint8Array[], at: number): Promise<void> {
  const want = bufs.reduce((n, b) => n + b.length, 0);
  let got = (await fh.readv(bufs, at)).bytesRead;
  if (got >= want) return;
  let start = 0;
  for (const b of bufs) {
    const end = start + b.length;
    while (got < end) {
      const { bytesRead } = await fh.read(b, got - start, end - got, at + got);
      if (bytesRead <= 0) throw new Error(`slab slot holds fewer bytes than its entry (EOF at ${at + got})`);
      got += bytesRead;
    }
    start = end;
  }
}
