// Storage tier: one file per cache entry in a directory, written and read with O_DIRECT by default so
// that the page cache cannot flatter the device (docs/reference-compat.md#rc-17, #rc-18). It only ever touches files
// it created itself (entry names and leftovers of other runs: file-names.ts). The pieces: file-names.ts,
// fs-info.ts (file system facts), split-timer.ts (the timing below), direct-io.ts (chunked reads, the
// O_DIRECT writer); file-kind.ts makes it the `file` storage backend of the registry.
//
// Timing (ms, performance.now(); waits for the ChunkSource, the sink or a free staging slot are never
// counted; each part is measured around our own awaited fs calls, so it includes the libuv threadpool
// hand-off and the callback's return to the event loop; close(2) of an entry file runs on the event
// loop itself where it waits for nothing, LOCAL_CLOSE_FILE_SYSTEMS in fs-info.ts, and is timed there):
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
// total = host + device always. An entry of one chunk in direct mode is one native job instead
// (block-file.ts): the same calls, each timed on the helper's thread; device = the data calls,
// ftruncate, fsync (and fanout's rename), host = the rest of the job's wall time.
import { constants as fsc } from 'node:fs';
import { link, lstat, mkdir, mkdtemp, open, rename, rm, stat, unlink } from 'node:fs/promises';
import type { MadeDir } from './storage-kind.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DIRECT_ALIGN, DirectSlabs } from '../data/aligned.js';
import { SlotPool } from '../data/slots.js';
import { MiB, roundUp } from '../util/units.js';
import { AlreadyPublishedError, EntryNotFoundError, IoAbortedError } from './backend.js';
import type { Backend, ChunkSink, PoolAccess, PoolProbe, ReadResult, IOTiming } from './backend.js';
import { FanoutDirsMade, poolBlockName, poolTempName } from './pool-names.js';
import { removeEmptyFanout } from './pool-scan.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { ChunkReads, DirectWriter, READS_IN_FLIGHT, sizedChunks, writeFully } from './direct-io.js';
import type { ChunkRead, FileCounters, OneChunk, WriterContext } from './direct-io.js';
import { entryFileName, newRunId, RUN_ID } from './file-names.js';
import { errnoCode, fileAllocatedBytes, fileSystemOf, LOCAL_CLOSE_FILE_SYSTEMS } from './fs-info.js';
import type { IoMode } from './io-mode.js';
import { SplitTimer } from './split-timer.js';
import { FdFile } from './fd-file.js';
import type { FileCalls } from './fd-file.js';
import { FileIoGauge } from './file-io-gauge.js';
import { IGNORE_METADATA, metadataCall } from './metadata-ops.js';
import { BlockFileError, oneJobRead, timedJob, writeOneChunk } from './block-file.js';
import type { BlockFiles, BlockFileTimes } from './block-file.js';
import type { MetadataOp, MetadataOpSink } from './metadata-ops.js';

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
  /** A shared pool's blocks under `dir` (--kv-pool shared): fan-out names, atomic publish, lookups. */
  readonly pool?: FilePoolOptions;
  /**
   * --kv-layout fanout: this run's entries as one file per entry under hash fan-out directories in its
   * own namespace directory (made exclusively: nobody else writes there), published by rename as
   * llm-d's file-system backend does. Ignored with `pool` (a shared pool is always fanned out).
   */
  readonly fanout?: { readonly namespace: string };
  /** Hears of each metadata call (tiers/metadata-ops.ts); default: none. */
  readonly metadataOps?: MetadataOpSink;
  /** Told of the fresh temporary directory as soon as it exists (no `dir` given). */
  readonly madeDir?: (at: MadeDir) => void;
  /**
   * Native jobs for entries of one chunk in direct mode (block-file.ts: the file's open … close, and a
   * fan-out commit's rename, as one job on the helper's threads); absent: Node's fs, one libuv
   * threadpool job per call. The backend owns it: close() closes it.
   */
  readonly blockFiles?: BlockFiles;
}

/** A shared pool on files (docs/shared-pool.md). */
export interface FilePoolOptions {
  /** The blocks' namespace directory under the pool's root (pool-names.ts). */
  readonly namespace: string;
  /** Leave what this backend published when it closes (--keep-pool). */
  readonly keep: boolean;
  /** The publish's link(2); a test stands in one of a file system without hard links. Default: fs link. */
  readonly link?: (existing: string, name: string) => Promise<void>;
}

/** errno codes of link(2) on a file system that has no hard links: publish falls back to rename. */
const NO_HARD_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

/** errno codes of a lookup or open meaning "no block there" (ENOTDIR: a fan-out level is not a directory). */
const ABSENT: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);
/**
 * errno codes of a shared pool's open meaning "no block there": ABSENT's, and EINVAL — O_DIRECT refused
 * by what was put at the name (a FIFO, a device) on a file system that takes it for files.
 */
const NOT_A_BLOCK: ReadonlySet<string> = new Set([...ABSENT, 'EINVAL']);

/** makingDirs' numbers of level-1 fan-out directories start here, after the 2^20 leaves'. */
const UPPER_DIR_ID = 2 ** 20;

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

/** What the file tier knows of one of its entries. */
interface StoredEntry {
  readonly size: number;
  readonly path: string;
}

export class FileBackend implements Backend {
  readonly tier = 'storage' as const;
  /** Bytes zero-copied vs staged by direct writes (to judge the copy overhead of a run). */
  readonly counters: FileCounters = { zeroCopyBytes: 0, stagedBytes: 0 };
  /** Our entries: each one's size, and its file's path (made once at the write; a read per block must not build it again). */
  private readonly stored = new Map<string, StoredEntry>();
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
    private readonly poolOptions?: FilePoolOptions,
    poolOpenedAtMs = 0,
    /** Fan-out names (a shared pool's or --kv-layout fanout's): the namespace directory under `dir`, and how a block is committed. */
    private readonly fanout?: FanoutNames,
    private readonly metadataSink: MetadataOpSink = IGNORE_METADATA,
    /** Native one-job-per-file calls for one-chunk entries in direct mode (FileBackendOptions.blockFiles). */
    readonly blockFiles?: BlockFiles,
  ) {
    this.ctx = { chunkBytes, slots, directSlabs, counters: this.counters, gauge, callerViewsOk: true };
    this.dirSlash = join(dir, '/');
    if (poolOptions !== undefined) this.pool = this.poolAccess(poolOpenedAtMs);
  }

  /** Present in a shared pool (--kv-pool shared). */
  readonly pool?: PoolAccess;
  /** `dir` normalized, ending in one slash: pathFor's prefix. */
  private readonly dirSlash: string;
  /** Fan-out directories known to exist as real directories (not links), so each is made and checked once. */
  private readonly madeDirs = new FanoutDirsMade();
  /** Fan-out directories being made, by number (a leaf's, or UPPER_DIR_ID + a level-1 directory's). */
  private readonly makingDirs = new Map<number, Promise<void>>();
  /** Temporary names written so far (each publish has its own). */
  private publishes = 0;

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
      const openedAt = options.pool === undefined ? 0 : await poolClock(join(dir, options.pool.namespace), runId);
      const fanout = fanoutNamesOf(options);
      // The jobs serve direct I/O only: a file system that refused O_DIRECT leaves them idle, so they go.
      if (effective !== 'direct') options.blockFiles?.close();
      // A private fan-out namespace is this backend's alone: made exclusively, never an existing one.
      if (options.pool === undefined && fanout !== undefined) await makeOwnNamespace(join(dir, fanout.namespace));
      return new FileBackend(
        dir,
        ioMode,
        effective,
        fs.name,
        fs.blockBytes,
        runId,
        chunkBytes,
        slots,
        slabs,
        ownsDir,
        gauge,
        options.pool,
        openedAt,
        fanout,
        options.metadataOps,
        effective === 'direct' ? options.blockFiles : undefined,
      );
    } catch (e) {
      options.blockFiles?.close(); // the backend would have owned it
      if (ownsDir) await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The file that holds (or would hold) `key`. */
  pathFor(key: string): string {
    // Concatenated onto the normalized directory, not join()ed: this runs once per block operation.
    if (this.fanout !== undefined) return this.dirSlash + poolBlockName(this.fanout.namespace, key);
    return this.dirSlash + entryFileName(this.runId, key);
  }

  /** The namespace directory of fan-out names (under `dir`), or undefined for flat names. */
  get fanoutDir(): string | undefined {
    return this.fanout !== undefined ? join(this.dir, this.fanout.namespace) : undefined;
  }

  /** See Backend.allocatedBytes: whole blocks and extent metadata (fileAllocatedBytes). */
  allocatedBytes(size: number): number {
    return fileAllocatedBytes(size, this.blockBytes);
  }

  keys(): Iterable<string> {
    return this.stored.keys();
  }

  /** Size of a stored entry, or undefined. */
  sizeOf(key: string): number | undefined {
    return this.stored.get(key)?.size;
  }

  /** See Backend.stopInFlight: multi-GiB entries must not hold the end of a run for seconds. */
  stopInFlight(): void {
    this.stopping = true;
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    this.assertOpen();
    if (this.stopping) throw new IoAbortedError(0); // the run is over: start nothing new
    if (this.fanout !== undefined) return this.publish(key, source, this.fanout);
    const path = this.pathFor(key);
    const direct = this.effectiveIoMode === 'direct';
    // A key we do not hold must not clobber an existing file (another run's or the user's).
    const ours = this.stored.delete(key) || this.abandoned.delete(path);
    const exclusive = ours ? 0 : fsc.O_EXCL;
    // O_NOFOLLOW: rewriting an entry of ours never writes through a link put in its place (a shared cache dir).
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_NOFOLLOW | exclusive | (direct ? fsc.O_DIRECT : 0);
    const t = new SplitTimer(this.gauge);
    const jobs = this.oneJob(source.size);
    if (jobs !== undefined) {
      try {
        await this.writeInOneJob(jobs, key, source, { path, flags, isNew: !ours }, t);
      } catch (e) {
        const opened = e instanceof BlockFileError && e.step !== 'open';
        if (ours || opened) await this.unlink(path).catch(() => undefined); // ours: the old entry is unusable now
        throw !opened && errnoCode(e) === 'EEXIST' ? new ForeignFileError(path) : e;
      }
      this.stored.set(key, { size: source.size, path });
      return t.result();
    }
    let fh: FdFile;
    try {
      // A new file is a create; rewriting one of ours truncates it (no new name).
      const opening = (): Promise<FdFile> => FdFile.open(path, flags, 0o644);
      fh = await t.host(() => (ours ? opening() : this.meta('create', opening)));
    } catch (e) {
      if (ours) await this.unlink(path).catch(() => undefined); // the old entry is unusable now
      throw errnoCode(e) === 'EEXIST' ? new ForeignFileError(path) : e;
    }
    await this.fillOrDrop(key, source, fh, t, path);
    this.stored.set(key, { size: source.size, path });
    return t.result();
  }

  /** The native jobs when an entry of `size` bytes is one job: direct mode, one chunk. */
  private oneJob(size: number): BlockFiles | undefined {
    return this.effectiveIoMode === 'direct' && size <= this.chunkBytes ? this.blockFiles : undefined;
  }

  /**
   * Writes a one-chunk entry as one native job: the bytes as one aligned view (the caller's own when its
   * slab allows, else copied into a staging slot: host time), then open, write, ftruncate of the
   * padding, fsync, close and the rename onto `renameTo`, on one worker thread. Timing: device = the
   * write, ftruncate, fsync and rename as the worker timed them; host = the rest of the job's wall time
   * (open, close, the hand-offs to and from the worker, the copy). Errors are the job's BlockFileError
   * (its step says whether the file was made) or, from before the job, the source's.
   */
  private writeInOneJob(jobs: BlockFiles, key: string, source: ChunkSource, at: OneJobWrite, t: SplitTimer): Promise<void> {
    return writeOneChunk(
      this.ctx,
      key,
      source,
      t,
      () => this.stopping,
      (data, retry) => {
        if (!retry) return this.writeJob(jobs, at, source.size, data, t);
        const again = { ...at, flags: at.flags & ~fsc.O_EXCL, isNew: false }; // the file is ours now
        return this.writeJob(jobs, again, source.size, data, t).catch(async (e: unknown) => {
          // The first job made the file: a caller that sees an open fail must not take it for never made.
          if (e instanceof BlockFileError && e.step === 'open') await this.unlink(at.path).catch(() => undefined);
          throw e;
        });
      },
    );
  }

  /** One write job, its calls timed into `t` and told to the metadata sink. */
  private writeJob(jobs: BlockFiles, at: OneJobWrite, size: number, data: OneChunk, t: SplitTimer): Promise<void> {
    const padded = data.view.length !== size;
    const job = {
      path: at.path,
      flags: at.flags,
      mode: 0o644,
      data: data.view,
      sync: true,
      ...(padded ? { truncateTo: size } : {}),
      ...(at.renameTo !== undefined ? { renameTo: at.renameTo } : {}),
    };
    return timedJob(this.gauge, t, () => jobs.write(job)).then(
      (times) => this.jobMetadata(times, at, undefined),
      (e: unknown) => {
        if (e instanceof BlockFileError) this.jobMetadata(e.times, at, e.step);
        throw e;
      },
    );
  }

  /** A write job's create and rename (made, or failed at) to the metadata sink. */
  private jobMetadata(times: BlockFileTimes, at: OneJobWrite, failedAt: BlockFileError['step'] | undefined): void {
    if (at.isNew) this.metadataSink('create', times.openMs, failedAt !== 'open');
    if (at.renameTo !== undefined && (failedAt === undefined || failedAt === 'rename'))
      this.metadataSink('rename', times.renameMs, failedAt === undefined);
  }

  /**
   * fill(), and when it fails the file at `path` (ours: we just created or truncated it) goes. A write
   * cut by the end of the run leaves its file to close(): unlinking a large file takes ~0.1 s per
   * 300 MB here (ext4 with discard), and doing it now would stretch the measured window with teardown.
   */
  private async fillOrDrop(key: string, source: ChunkSource, fh: FdFile, t: SplitTimer, path: string): Promise<void> {
    try {
      await this.fill(key, source, fh, t);
    } catch (e) {
      if (e instanceof IoAbortedError) this.abandoned.add(path);
      else await this.unlink(path).catch(() => undefined);
      throw e;
    }
  }

  /** Writes the whole source into the open file, syncs it and closes it (both when the write fails). */
  private async fill(key: string, source: ChunkSource, fh: FileCalls, t: SplitTimer): Promise<void> {
    const writer = this.effectiveIoMode === 'direct' ? new DirectWriter(fh, this.ctx, t) : undefined;
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
      const closing = this.closeFile(fh, t);
      if (closing !== undefined) await closing;
    }
  }

  /**
   * A fan-out write: the block goes to a temporary name of its own beside its final name (created
   * exclusively, never through a link), then is committed onto the final name atomically, so a reader
   * never sees half a block. A shared pool commits with link(2), and only if no writer published it
   * first: a lost race is not rewritten (AlreadyPublishedError). A private fan-out namespace has no
   * other writer and commits with rename(2), as llm-d does. Timing: the fan-out directories, the
   * temporary file's open/close and its unlink are host time; the writes, fsync and the commit are
   * device time (link and rename are the storage's own metadata operations).
   */
  private async publish(key: string, source: ChunkSource, names: FanoutNames): Promise<IOTiming> {
    const final = this.pathFor(key);
    const temp = poolTempName(final, this.runId, ++this.publishes);
    const direct = this.effectiveIoMode === 'direct';
    const t = new SplitTimer(this.gauge);
    await t.host(() => this.fanoutDirs(dirname(final)));
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW | (direct ? fsc.O_DIRECT : 0);
    const jobs = this.oneJob(source.size);
    if (jobs !== undefined) {
      // One job: the temporary file's whole life, and with a rename commit the commit too.
      const renameTo = names.commit === 'rename' ? final : undefined;
      try {
        await this.writeInOneJob(jobs, key, source, { path: temp, flags, isNew: true, ...(renameTo !== undefined ? { renameTo } : {}) }, t);
      } catch (e) {
        const opened = e instanceof BlockFileError && e.step !== 'open';
        if (opened) await this.unlink(temp).catch(() => undefined);
        throw !opened && errnoCode(e) === 'EEXIST' ? new ForeignFileError(temp) : e;
      }
      if (renameTo !== undefined) {
        this.stored.set(key, { size: source.size, path: final });
        return t.result();
      }
    } else await this.fillTemp(key, source, temp, flags, t);
    if (names.commit === 'rename') {
      try {
        await t.device(() => this.meta('rename', () => rename(temp, final)));
      } catch (e) {
        await this.unlink(temp).catch(() => undefined);
        throw e;
      }
      this.stored.set(key, { size: source.size, path: final });
      return t.result();
    }
    let raced = false;
    let linked = true;
    try {
      await t.device(() => this.meta('link', () => this.linkCall(temp, final)));
    } catch (e) {
      const code = errnoCode(e) ?? '';
      if (code === 'EEXIST')
        raced = true; // another writer's block (or something planted there): never replaced
      else if (NO_HARD_LINKS.has(code)) {
        // A file system without hard links (s3fs, some FUSE mounts): look, then rename. A writer racing
        // in between may then be replaced by an equal block; docs/shared-pool.md#publish says so.
        raced = await t.device(() =>
          this.meta('lookup', () => this.lstatCall(final), isAbsent).then(
            () => true,
            () => false,
          ),
        );
        if (!raced) await t.device(() => this.meta('rename', () => rename(temp, final)));
        linked = false;
      } else {
        await this.unlink(temp).catch(() => undefined);
        throw e;
      }
    }
    if (linked || raced) await t.host(() => this.unlink(temp)).catch(() => this.abandoned.add(temp));
    if (raced) throw new AlreadyPublishedError(source.size, t.result());
    this.stored.set(key, { size: source.size, path: final });
    return t.result();
  }

  /** A publish's temporary file, created exclusively and written through Node's fs (fillOrDrop). */
  private async fillTemp(key: string, source: ChunkSource, temp: string, flags: number, t: SplitTimer): Promise<void> {
    let fh: FdFile;
    try {
      fh = await t.host(() => this.meta('create', () => FdFile.open(temp, flags, 0o644)));
    } catch (e) {
      throw errnoCode(e) === 'EEXIST' ? new ForeignFileError(temp) : e;
    }
    await this.fillOrDrop(key, source, fh, t, temp);
  }

  /**
   * Makes the fan-out directories of `dir` (a level-2 directory under the namespace, which create()
   * made and checked), each once per backend, level 1 first: see makeFanoutDir.
   */
  private async fanoutDirs(dir: string): Promise<void> {
    const leaf = FanoutDirsMade.leafOf(dir);
    if (this.madeDirs.hasLeaf(leaf)) return;
    if (!this.madeDirs.hasUpper(leaf)) await this.makeOnce(UPPER_DIR_ID + (leaf >>> 8), dirname(dir), () => this.madeDirs.addUpper(leaf));
    await this.makeOnce(leaf, dir, () => this.madeDirs.addLeaf(leaf));
  }

  /**
   * makeFanoutDir of `path` (numbered `id`), then `made`; writers asking for it meanwhile wait for the
   * same call. Two blocks of one new leaf are often written at once: each made its own mkdir, and the
   * second's EEXIST counted as a failed metadata call.
   */
  private makeOnce(id: number, path: string, made: () => void): Promise<void> {
    let making = this.makingDirs.get(id);
    if (making === undefined) {
      making = this.makeFanoutDir(path)
        .then(made)
        .finally(() => this.makingDirs.delete(id));
      this.makingDirs.set(id, making);
    }
    return making;
  }

  /**
   * mkdir of one fan-out directory. One that is there already (another writer's, an earlier run's) is
   * checked to be a real directory, not a link planted to send the pool's writes elsewhere, before
   * anything is made below it. One this mkdir just made needs no lstat (one call per new block less: a
   * fan-out layout makes a leaf for nearly every block).
   */
  private async makeFanoutDir(d: string): Promise<void> {
    const made = await this.makeDir(d).then(
      () => true,
      (e: unknown) => {
        if (errnoCode(e) !== 'EEXIST') throw e;
        return false; // made by another writer (or an earlier run), or something else is there
      },
    );
    if (!made && !(await lstat(d)).isDirectory())
      throw new Error(`pool directory '${d}' is not a directory (a link or a file was put in its place)`);
  }

  /** One metadata call, timed and told to the sink (tiers/metadata-ops.ts). */
  private meta<T>(op: MetadataOp, call: () => Promise<T>, okWhen?: (e: unknown) => boolean): Promise<T> {
    return metadataCall(this.metadataSink, op, call, okWhen);
  }

  /** The PoolAccess of a shared pool on files: lstat as the lookup, reads that open only regular files. */
  private poolAccess(openedAtMs: number): PoolAccess {
    return {
      openedAtMs,
      lookup: async (key: string): Promise<PoolProbe> => {
        this.assertOpen();
        const t = new SplitTimer(this.gauge);
        try {
          const st = await t.device(() => this.meta('lookup', () => this.lstatCall(this.pathFor(key)), isAbsent));
          if (st.isFile) return { found: true, size: st.size, publishedAtMs: st.mtimeMs, timing: t.result() };
        } catch (e) {
          if (!ABSENT.has(errnoCode(e) ?? '')) throw e;
        }
        return { found: false, size: 0, publishedAtMs: 0, timing: t.result() };
      },
      readPublished: (key: string, size: number, sink?: ChunkSink) => this.readFile(key, size, sink),
      forget: (key: string) => {
        this.stored.delete(key);
      },
    };
  }

  /** Buffered write: whole chunks handed to the page cache, at most chunkBytes per syscall. */
  private async streamBuffered(key: string, source: ChunkSource, fh: FileCalls, t: SplitTimer): Promise<void> {
    let pos = 0;
    for await (const [chunk] of sizedChunks(key, source)) {
      for (let off = 0; off < chunk.length; off += this.chunkBytes) {
        const piece = chunk.subarray(off, Math.min(off + this.chunkBytes, chunk.length));
        await t.host(() => writeFully(fh, piece, pos));
        pos += piece.length;
      }
    }
  }

  read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const entry = this.stored.get(key);
    if (entry === undefined) return this.closed ? this.closedError() : Promise.reject(new EntryNotFoundError(this.tier, key));
    return this.readFile(key, entry.size, sink, entry.path);
  }

  /**
   * Reads `key`'s file of `size` bytes. In a shared pool the file may be anyone's: it is opened without
   * following a link or blocking on a FIFO, and read only when it is a regular file of that size;
   * anything else, or no file, is EntryNotFoundError (a block gone between lookup and read is a miss).
   */
  private readFile(key: string, size: number, sink?: ChunkSink, path = this.pathFor(key)): Promise<ReadResult> {
    if (this.closed) return this.closedError();
    // The common case as one chain of `then`s (a promise per async layer was event-loop time per block):
    // one native job and a staging slot free now.
    const jobs = this.oneJob(size);
    const slot = jobs !== undefined && !this.stopping ? this.ctx.slots.tryAcquire() : undefined;
    if (jobs !== undefined && slot !== undefined) return this.readInOneJob(jobs, key, path, size, slot, sink);
    return this.readFileWaiting(key, path, size, sink);
  }

  /** readFile when it waits for a staging slot, the run is stopping, or the entry is not one job. */
  private async readFileWaiting(key: string, path: string, size: number, sink?: ChunkSink): Promise<ReadResult> {
    const direct = this.effectiveIoMode === 'direct';
    const pooled = this.poolOptions !== undefined;
    // Untimed: a harness limit, not storage; the gauge counts it (a free slot is taken without a promise).
    const slot = this.ctx.slots.tryAcquire() ?? (await this.gauge.staging(this.ctx.slots.acquire(), false));
    const t = new SplitTimer(this.gauge);
    const jobs = this.oneJob(size);
    if (jobs !== undefined) {
      if (this.stopping) {
        this.ctx.slots.release(slot);
        return { timing: t.result(), bytes: 0 }; // as readInto: the run is over, nothing more is read
      }
      return this.readInOneJob(jobs, key, path, size, slot, sink);
    }
    let read: number;
    try {
      let fh: FdFile;
      try {
        const flags = fsc.O_RDONLY | (direct ? fsc.O_DIRECT : 0) | (pooled ? fsc.O_NOFOLLOW | fsc.O_NONBLOCK : 0);
        fh = await t.host(() => FdFile.open(path, flags));
      } catch (e) {
        throw (pooled ? NOT_A_BLOCK : ABSENT).has(errnoCode(e) ?? '') ? new EntryNotFoundError(this.tier, key) : e;
      }
      try {
        if (pooled) {
          const st = await t.host(() => fh.stat());
          if (!st.isFile() || st.size !== size) throw new EntryNotFoundError(this.tier, key);
        }
        read = await this.readInto(fh, size, slot, t, sink);
      } finally {
        const closing = this.closeFile(fh, t);
        if (closing !== undefined) await closing;
      }
    } finally {
      this.ctx.slots.release(slot);
    }
    return { timing: t.result(), bytes: read };
  }

  /**
   * Reads a one-chunk entry as one native job (open, fstat in a shared pool, read, close) into `slot`,
   * then hands it to `sink`, and gives the slot back. Timing: device = the read(2)s as the worker timed
   * them; host = the rest of the job's wall time (open, the check, close, the hand-offs). The sink's
   * time is not counted.
   */
  private readInOneJob(
    jobs: BlockFiles,
    key: string,
    path: string,
    size: number,
    slot: Uint8Array,
    sink: ChunkSink | undefined,
  ): Promise<ReadResult> {
    const t = new SplitTimer(this.gauge);
    const pooled = this.poolOptions !== undefined;
    const flags = fsc.O_RDONLY | fsc.O_DIRECT | (pooled ? fsc.O_NOFOLLOW | fsc.O_NONBLOCK : 0);
    const job = {
      path,
      flags,
      into: slot.subarray(0, roundUp(size, DIRECT_ALIGN)),
      ...(pooled ? { expectSize: size } : {}),
    };
    const ends = {
      short: (bytes: number) => new Error(`file for entry is shorter than its ${size} bytes (EOF at ${bytes})`),
      // No file, or (in a shared pool) not a regular file of its size: a miss, as readFile says.
      failed: (e: unknown) =>
        e instanceof BlockFileError && ((e.step === 'open' && (pooled ? NOT_A_BLOCK : ABSENT).has(e.code)) || e.step === 'check')
          ? new EntryNotFoundError(this.tier, key)
          : e,
    };
    const release = (): void => this.ctx.slots.release(slot);
    return oneJobRead(
      timedJob(this.gauge, t, () => jobs.read(job)),
      size,
      slot,
      t,
      release,
      sink,
      ends,
    );
  }

  /**
   * Reads `size` bytes in slot-sized chunks (whole blocks in direct mode), handing each to `sink` in
   * order. With a second staging slot free, the next chunk's read is in flight while the current one
   * is handed over and read: a direct read of an entry keeps the device as busy as the kernel's
   * read-ahead keeps it for a buffered one (one chunk at a time left the device idle between chunks
   * and, on a virtio disk, ~25 % below fio's psync reads of the same size). Device time is the wall
   * time during which at least one read was in flight, so overlapped reads are not counted twice.
   */
  private async readInto(fh: FileCalls, size: number, slot: Uint8Array, t: SplitTimer, sink: ChunkSink | undefined): Promise<number> {
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
      if (pending.length > 0) await Promise.allSettled(pending); // the kernel may still be writing into a slot: never release it before
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
    const entry = this.stored.get(key);
    if (entry === undefined) return; // not ours: never touch it
    this.stored.delete(key);
    const path = entry.path;
    await this.unlink(path).catch((e: unknown) => {
      if (errnoCode(e) === 'ENOENT') return;
      this.abandoned.add(path); // still ours: close() tries again
      throw e;
    });
  }

  /** See Backend.dropStopped: the files of cut-short writes (and of failed deletes, tried again). */
  async dropStopped(): Promise<void> {
    for (const path of [...this.abandoned]) {
      try {
        await unlink(path);
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') continue; // still there: close() tries again
      }
      this.abandoned.delete(path);
    }
  }

  async clear(): Promise<void> {
    for (const key of [...this.stored.keys()]) await this.delete(key);
  }

  /** Deletes this backend's entry files (a KV cache does not outlive its run) and its own temp dir. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.poolOptions?.keep === true) this.stored.clear(); // --keep-pool: published blocks stay for the next run
    await this.clear();
    await this.dropStopped();
    // A private fan-out namespace goes with its blocks (only its empty fan-out directories are left).
    if (this.poolOptions === undefined && this.fanoutDir !== undefined) await removeEmptyFanout(this.fanoutDir);
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
    this.blockFiles?.close();
  }

  /**
   * Closes an entry file, timed as host time: at once on the event loop where that waits for nothing
   * (LOCAL_CLOSE_FILE_SYSTEMS), else on the threadpool (the promise to await).
   */
  private closeFile(fh: FileCalls, t: SplitTimer): Promise<void> | undefined {
    if (!(fh instanceof FdFile && LOCAL_CLOSE_FILE_SYSTEMS.has(this.fileSystem))) return t.host(() => fh.close());
    t.hostSync(() => fh.closeNow());
    return undefined;
  }

  /**
   * unlink(2) of one of our files, counted by the gauge (an eviction's delete competes with the I/O) and
   * timed as a metadata call.
   */
  private unlink(path: string): Promise<void> {
    return this.gauge.track(() =>
      this.meta(
        'unlink',
        this.jobOrFs(
          (jobs) => jobs.unlink(path),
          () => unlink(path),
        ),
      ),
    );
  }

  /** mkdir(2) of a fan-out directory, as unlink(). */
  private makeDir(path: string): Promise<void> {
    return this.gauge.track(() =>
      this.meta(
        'mkdir',
        this.jobOrFs(
          (jobs) => jobs.mkdir(path, 0o777),
          () => mkdir(path),
        ),
      ),
    );
  }

  /** A publish's link(2): a test's stand-in, else as unlink() makes its call. The caller times it. */
  private linkCall(existing: string, name: string): Promise<void> {
    const standIn = this.poolOptions?.link;
    if (standIn !== undefined) return standIn(existing, name);
    return this.jobOrFs(
      (jobs) => jobs.link(existing, name),
      () => link(existing, name),
    )();
  }

  /**
   * A shared pool's lstat: a native job when there are jobs (Node's fs lstat cost the event loop ~5 µs per
   * block lookup), else fs. The caller times it as a lookup.
   */
  private lstatCall(path: string): Promise<{ readonly isFile: boolean; readonly size: number; readonly mtimeMs: number }> {
    const jobs = this.blockFiles;
    if (jobs !== undefined) return jobs.lstat(path);
    return lstat(path).then((st) => ({ isFile: st.isFile(), size: st.size, mtimeMs: st.mtimeMs }));
  }

  /**
   * A metadata call of ours: `native` as a job when there are jobs (no threadpool round trip: through
   * Node's fs each cost the event loop ~5 µs), else `fs` on libuv's threadpool; its value dropped.
   */
  private jobOrFs(native: (jobs: BlockFiles) => Promise<unknown>, fs: () => Promise<unknown>): () => Promise<void> {
    const jobs = this.blockFiles;
    const call = jobs !== undefined ? () => native(jobs) : fs;
    return () => call().then(() => undefined);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('file tier is closed');
  }

  /** assertOpen's error as a rejection (for the paths that return promises without an async function). */
  private closedError(): Promise<never> {
    return Promise.reject(new Error('file tier is closed'));
  }
}

/** Where a one-job write goes: its file, open flags, whether it makes a new file, and a rename commit. */
interface OneJobWrite {
  readonly path: string;
  readonly flags: number;
  /** The open creates the file (counted as a create). */
  readonly isNew: boolean;
  readonly renameTo?: string;
}

/** How fan-out names are made and committed. */
interface FanoutNames {
  readonly namespace: string;
  /** link: a shared pool (never replace another writer's block); rename: a private namespace. */
  readonly commit: 'link' | 'rename';
}

function fanoutNamesOf(o: FileBackendOptions): FanoutNames | undefined {
  if (o.pool !== undefined) return { namespace: o.pool.namespace, commit: 'link' };
  if (o.fanout !== undefined) return { namespace: o.fanout.namespace, commit: 'rename' };
  return undefined;
}

/** A lookup's "not there" is its answer, not a failure. */
const isAbsent = (e: unknown): boolean => ABSENT.has(errnoCode(e) ?? '');

/** Makes a private namespace directory; one that exists already is someone else's (another run with the same id, or planted). */
async function makeOwnNamespace(nsDir: string): Promise<void> {
  try {
    await mkdir(nsDir);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST')
      throw new Error(`refusing to use '${nsDir}' for this run's fan-out directories: it exists already`, { cause: e });
    throw e;
  }
}

/**
 * The pool's clock when this backend opens it: the mtime of a probe file made (and removed) in the
 * namespace directory, which it also creates. Blocks with an older mtime were published before this
 * rank started: by an earlier run (the file server's clock on both sides, so hosts' clocks don't matter).
 */
async function poolClock(namespaceDir: string, runId: string): Promise<number> {
  await mkdir(namespaceDir, { recursive: true });
  const st = await lstat(namespaceDir);
  if (!st.isDirectory()) throw new Error(`pool directory '${namespaceDir}' is not a directory`);
  const probe = join(namespaceDir, `.kvc-open-${runId}`);
  const fh = await open(probe, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o644);
  try {
    return (await fh.stat()).mtimeMs;
  } finally {
    await fh.close();
    await unlink(probe).catch(() => undefined);
  }
}
