// A small file's whole life as one job of the C helper (native/block-io.c): open, write or read,
// ftruncate, fsync, close and a rename, made in C and each call timed there — handed to the kernel
// through an io_uring by one thread (engine 'io_uring'), or one after another on a thread of the
// helper's pool (engine 'threads'). Through Node's fs each of those calls is a round trip of its own (a
// worker woken, the event loop woken), and with one file per 16 KiB KV block those hand-offs, not the
// file system, set the rate (docs/performance.md#block-operations-per-cpu-second). The file tier uses
// it for entries of one chunk.
import { getSystemErrorMap } from 'node:util';
import { loadNativeHelper } from '../util/native-helper.js';
import { threadPoolSize } from './file-io-gauge.js';
import type { FileIoGauge } from './file-io-gauge.js';
import type { SplitTimer } from './split-timer.js';
import { performance } from 'node:perf_hooks';
import type { IoMode } from './io-mode.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { IoAbortedError } from './backend.js';
import type { ChunkSink, ReadResult } from './backend.js';
import { oneChunkView, releaseOneChunk, stagedView } from './direct-io.js';
import type { OneChunk, WriterContext } from './direct-io.js';
import type { FileCalls } from './file-calls.js';
import { StorageSetupError } from './storage-kind.js';

/** The C helper's calls (native/block-io.c documents the arguments). */
export interface BlockIoHelper {
  /** engine 0: threads; 1: io_uring (throws, its message saying why, when the kernel refuses it). */
  open(threads: number, onDone: (id: number, errno: number) => void, engine: number): object;
  /**
   * A job: `out` holds its numbers (id, flags, mode, steps, length, position, truncateTo, fd) and then
   * receives its results.
   */
  submit(pool: object, path: string, buffer: Uint8Array, renameTo: string, out: Float64Array): void;
  close(pool: object): void;
}

/** A job in flight: what settles it, and what the helper writes into or reads from until then. */
interface Pending {
  /** Settles with the times, or an lstat job with what it found (run's T). */
  resolve: (value: BlockFileTimes | BlockStat) => void;
  reject: (e: Error) => void;
  path: string;
  renameTo: string;
  buffer: Uint8Array | undefined;
  steps: number;
  readonly out: Float64Array;
}

const STEP = {
  write: 1,
  read: 2,
  truncate: 4,
  sync: 8,
  rename: 16,
  check: 32,
  open: 64,
  close: 128,
  datasync: 256,
  unlink: 512,
  mkdir: 1024,
  link: 2048,
  lstat: 4096,
} as const;
type Step = keyof typeof STEP;
const SYSCALL: Readonly<Record<number, string>> = {
  [STEP.write]: 'write',
  [STEP.read]: 'read',
  [STEP.truncate]: 'ftruncate',
  [STEP.sync]: 'fsync',
  [STEP.rename]: 'rename',
  [STEP.check]: 'fstat',
  [STEP.open]: 'open',
  [STEP.close]: 'close',
  [STEP.datasync]: 'fdatasync',
  [STEP.unlink]: 'unlink',
  [STEP.mkdir]: 'mkdir',
  [STEP.link]: 'link',
  [STEP.lstat]: 'lstat',
};
/** The results' array: [bytes, six times, the failed step, an lstat's mtime (ms) and file type] (block-io.c). */
const OUT = { length: 10, mtime: 8, kind: 9 } as const;
/** S_IFMT's regular file. */
const S_IFREG = 0o100000;
/** The buffer of a job that moves no bytes. */
const NO_BYTES = new Uint8Array(0);
const NS_PER_MS = 1e6;
/** errno → [code, message], read once: Node builds the map afresh per call (a failed job cost the main thread 73 µs with it, 10 without). */
const SYSTEM_ERRORS = getSystemErrorMap();

/** What one job did: bytes moved and each call's time (ms, measured on the worker thread; 0 if not made). */
export interface BlockFileTimes {
  readonly bytes: number;
  readonly openMs: number;
  readonly dataMs: number;
  readonly truncateMs: number;
  readonly syncMs: number;
  readonly closeMs: number;
  readonly renameMs: number;
}

/** What an lstat job found (BlockFiles.lstat). */
export interface BlockStat {
  readonly isFile: boolean;
  readonly size: number;
  readonly mtimeMs: number;
  readonly times: BlockFileTimes;
}

/** A failed job: Node's fs error shape (code, errno, syscall, path), the step that failed, and the times up to it. */
export class BlockFileError extends Error {
  constructor(
    readonly code: string,
    readonly errno: number,
    readonly syscall: string,
    readonly path: string,
    /** Which call failed ('open' … 'rename', 'unlink'; 'check' is the fstat of a read that must find a regular file of its size). */
    readonly step: Step,
    readonly times: BlockFileTimes,
  ) {
    super(`${code}: ${SYSTEM_ERRORS.get(-errno)?.[1] ?? 'system call failed'}, ${syscall} '${path}'`);
    this.name = 'BlockFileError';
  }
}

/** A write job: the bytes (aligned for O_DIRECT when `flags` has it), then optional ftruncate, fsync and rename. */
export interface BlockWrite {
  readonly path: string;
  readonly flags: number;
  readonly mode: number;
  readonly data: Uint8Array;
  /** ftruncate to this length after the write (the padding of an O_DIRECT write); absent: none. */
  readonly truncateTo?: number;
  readonly sync: boolean;
  /** rename(2) the file onto this name after closing it; absent: none. */
  readonly renameTo?: string;
}

/** A job on a descriptor the caller holds open (a slab pool file): the bytes at `position`, nothing opened or closed. */
export interface BlockAt {
  readonly fd: number;
  /** The file's name, for error messages. */
  readonly path: string;
  readonly position: number;
}

/** A read job: up to `into.length` bytes from offset 0, until the end of the file. */
export interface BlockRead {
  readonly path: string;
  readonly flags: number;
  readonly into: Uint8Array;
  /** fstat first: anything but a regular file of exactly this size fails as ENOENT at the 'check' step. */
  readonly expectSize?: number;
}

/** Why a traced run's jobs are on threads. */
const UNTRACEABLE = '--enable-latency-tracing times read, write and fsync system calls, which io_uring does not make';

/** How the helper makes a job's calls: through an io_uring driven by one thread, or on a pool of threads. */
export type BlockEngine = 'io_uring' | 'threads';
const ENGINE_NUMBER: Readonly<Record<BlockEngine, number>> = { threads: 0, io_uring: 1 };

/** Runs block file jobs in the C helper; close() when done (its threads end). */
export class BlockFiles {
  /** Jobs by id: each id is reused once its job has settled. */
  private readonly jobs: Pending[] = [];
  private readonly freeIds: number[] = [];
  private closed = false;
  private readonly pool: object;

  private constructor(
    private readonly helper: BlockIoHelper,
    /** Threads of the pool (engine 'threads'), or calls at once in the kernel's workers (engine 'io_uring'). */
    readonly threads: number,
    readonly engine: BlockEngine,
    /** Why io_uring was not used when it was the first choice: the kernel refused it, or a traced run (engine 'threads' only). */
    readonly notUring?: string,
  ) {
    this.pool = helper.open(threads, (id, errno) => this.settle(id, errno), ENGINE_NUMBER[engine]);
  }

  /**
   * The native jobs (`threads` threads or calls at once) on `engine` — 'auto': io_uring where the
   * kernel allows it, else threads — or why they are not available (a sentence naming what refused).
   */
  static load(threads: number, engine: BlockEngine | 'auto' = 'auto', notUring?: string): BlockFiles | string {
    const loaded = loadNativeHelper('block_io', 'native block-file');
    return typeof loaded === 'string' ? loaded : BlockFiles.on(loaded as BlockIoHelper, threads, engine, notUring);
  }

  /** As load(), on `helper` (the C helper's calls); `notUring`: why threads were chosen over io_uring, if they were. */
  static on(helper: BlockIoHelper, threads: number, engine: BlockEngine | 'auto', notUring?: string): BlockFiles | string {
    if (engine === 'threads') return new BlockFiles(helper, threads, 'threads', notUring);
    try {
      return new BlockFiles(helper, threads, 'io_uring');
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return engine === 'io_uring' ? why : new BlockFiles(helper, threads, 'threads', why);
    }
  }

  write(job: BlockWrite): Promise<BlockFileTimes> {
    const steps =
      STEP.write |
      (job.truncateTo !== undefined ? STEP.truncate : 0) |
      (job.sync ? STEP.sync : 0) |
      (job.renameTo !== undefined ? STEP.rename : 0);
    return this.run(job.path, job.flags, job.mode, steps, job.data, job.truncateTo ?? 0, job.renameTo ?? '');
  }

  read(job: BlockRead): Promise<BlockFileTimes> {
    const steps = STEP.read | (job.expectSize !== undefined ? STEP.check : 0);
    return this.run(job.path, job.flags, 0, steps, job.into, job.expectSize ?? 0, '');
  }

  /** `data` written at `job.position` of an open file, then fdatasync'd. */
  writeAt(job: BlockAt, data: Uint8Array): Promise<BlockFileTimes> {
    return this.run(job.path, 0, 0, STEP.write | STEP.datasync, data, 0, '', job.fd, job.position);
  }

  /** Up to `into.length` bytes read from `job.position` of an open file (fewer at its end). */
  readAt(job: BlockAt, into: Uint8Array): Promise<BlockFileTimes> {
    return this.run(job.path, 0, 0, STEP.read, into, 0, '', job.fd, job.position);
  }

  /** unlink(2) of `path`, nothing opened (its time is the times' openMs). */
  unlink(path: string): Promise<BlockFileTimes> {
    return this.run(path, 0, 0, STEP.unlink, NO_BYTES, 0, '');
  }

  /** mkdir(2) of `path` with `mode` (its time is the times' openMs): a fan-out directory without a threadpool call of Node's. */
  mkdir(path: string, mode: number): Promise<BlockFileTimes> {
    return this.run(path, 0, mode, STEP.mkdir, NO_BYTES, 0, '');
  }

  /** link(2) of `existing` onto `newPath` (a shared pool's no-clobber publish; its time is the times' openMs). */
  link(existing: string, newPath: string): Promise<BlockFileTimes> {
    return this.run(existing, 0, 0, STEP.link, NO_BYTES, 0, newPath);
  }

  /** lstat(2) of `path` (a link is not followed; its time is the times' openMs): a shared pool's lookup. */
  lstat(path: string): Promise<BlockStat> {
    return this.run<BlockStat>(path, 0, 0, STEP.lstat, NO_BYTES, 0, '');
  }

  /** No more jobs; those in flight still settle. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.helper.close(this.pool);
  }

  private run<T extends BlockFileTimes | BlockStat = BlockFileTimes>(
    path: string,
    flags: number,
    mode: number,
    steps: number,
    buffer: Uint8Array,
    size: number,
    renameTo: string,
    fd = -1,
    position = 0,
  ): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the block-file pool is closed'));
    return new Promise<T>((settled, reject) => {
      const resolve = settled as (value: BlockFileTimes | BlockStat) => void; // T is what settle() gives for these steps
      const id = this.freeIds.pop() ?? this.jobs.length;
      const job = (this.jobs[id] ??= { resolve, reject, path, renameTo, buffer, steps, out: new Float64Array(OUT.length) });
      job.resolve = resolve;
      job.reject = reject;
      job.path = path;
      job.renameTo = renameTo;
      job.steps = steps;
      job.buffer = buffer; // held here until the job settles: the helper writes into or reads from it
      try {
        const out = job.out; // the numbers go in the results' array: one native argument, not eight
        out[0] = id;
        out[1] = flags;
        out[2] = mode;
        out[3] = steps;
        out[4] = buffer.length;
        out[5] = position;
        out[6] = size;
        out[7] = fd;
        this.helper.submit(this.pool, path, buffer, renameTo, out);
      } catch (e) {
        // Refused before it was queued (a path with a NUL in it, …): the id is free again.
        job.buffer = undefined;
        this.freeIds.push(id);
        throw e;
      }
    });
  }

  private settle(id: number, errno: number): void {
    const job = this.jobs[id];
    if (job === undefined) return;
    const times = timesOf(job.out);
    const { resolve, reject, path, renameTo } = job;
    job.buffer = undefined;
    this.freeIds.push(id);
    if (errno === 0) {
      const out = job.out;
      if (job.steps !== STEP.lstat) resolve(times);
      else resolve({ isFile: out[OUT.kind] === S_IFREG, size: times.bytes, mtimeMs: out[OUT.mtime] ?? 0, times });
      return;
    }
    const failed = job.out[7] ?? STEP.open;
    const step = (Object.keys(STEP) as Step[]).find((s) => STEP[s] === failed) ?? 'open';
    const code = SYSTEM_ERRORS.get(-errno)?.[0] ?? `E${errno}`;
    reject(
      new BlockFileError(
        code,
        -errno,
        SYSCALL[failed] ?? 'open',
        step === 'rename' || step === 'link' ? `${path}' -> '${renameTo}` : path,
        step,
        times,
      ),
    );
  }
}

function timesOf(out: Float64Array): BlockFileTimes {
  const ms = (i: number): number => (out[i] ?? 0) / NS_PER_MS;
  return { bytes: out[0] ?? 0, openMs: ms(1), dataMs: ms(2), truncateMs: ms(3), syncMs: ms(4), closeMs: ms(5), renameMs: ms(6) };
}

/**
 * The jobs a file-kind backend asked for (--file-calls, the I/O mode) gets: as many calls at once as
 * libuv's pool has threads (bin/kv-cache.cjs sizes it for the users: the same calls in flight), why
 * there are none (a string: --file-calls native then uses Node's fs), or undefined when not asked for
 * (--file-calls fs, buffered I/O). --file-calls io_uring or threads that cannot be had is a setup error
 * (exit 2): a run that asked for one submission path must not measure another. The backend closes it.
 */
export function blockFilesFor(o: {
  readonly fileCalls?: FileCalls;
  readonly ioMode: IoMode;
  readonly tracesSystemCalls?: boolean;
}): BlockFiles | string | undefined {
  const calls = o.fileCalls ?? 'native';
  if (calls === 'fs' || o.ioMode !== 'direct') return undefined;
  if (o.tracesSystemCalls === true) {
    if (calls === 'io_uring')
      throw new StorageSetupError(`--file-calls io_uring cannot be used here: ${UNTRACEABLE}; use native or threads`);
    if (calls === 'native') return BlockFiles.load(threadPoolSize(), 'threads', UNTRACEABLE);
  }
  const jobs = BlockFiles.load(threadPoolSize(), calls === 'native' ? 'auto' : calls);
  if (typeof jobs === 'string' && calls !== 'native') throw new StorageSetupError(`--file-calls ${calls} cannot be used here: ${jobs}`);
  return jobs;
}

/** The results' words for how one-chunk entries were written and read (kvcache_bench.storage_file_calls). */
export function fileCallsOf(effectiveIoMode: IoMode, jobs: BlockFiles | string | undefined): string {
  const fs = "fs: Node's fs, one threadpool job per call";
  if (effectiveIoMode !== 'direct') return `${fs} (buffered I/O)`;
  if (jobs === undefined) return `${fs} (--file-calls fs)`;
  if (typeof jobs === 'string') return `${fs} (${jobs})`;
  // The words before the colon are the console's ("native io_uring file calls").
  const job = 'one job of the C helper per entry of one chunk';
  if (jobs.engine === 'io_uring')
    return `native io_uring: ${job}, its system calls handed to the kernel through io_uring by one thread (each timed there)`;
  const refused = jobs.notUring !== undefined ? `; not io_uring: ${jobs.notUring}` : '';
  return `native threads: ${job}, its system calls made on the helper's threads (each timed on the thread that makes it${refused})`;
}

/**
 * Runs one job counted by `gauge` and adds its time to `t`: device = its data calls, ftruncate,
 * (data)sync and rename as its thread timed them (0 for a call it did not make); host = the rest of
 * its wall time (open, close, the wait for a thread, the hand-offs). A failed job's time counts too.
 */
export function timedJob(gauge: FileIoGauge, t: SplitTimer, job: () => Promise<BlockFileTimes>): Promise<BlockFileTimes> {
  const t0 = performance.now();
  const split = (times: BlockFileTimes): void => {
    const device = times.dataMs + times.truncateMs + times.syncMs + times.renameMs;
    t.add(Math.max(0, performance.now() - t0 - device), device);
  };
  // The gauge's count and the split in one reaction (trackThen), not an async function around
  // gauge.track: this runs once per block operation, and each promise layer was event-loop time.
  return gauge.trackThen(
    job,
    (times) => {
      split(times);
      return times;
    },
    (e: unknown) => {
      if (e instanceof BlockFileError) split(e.times);
      throw e;
    },
  );
}

/** How a one-job read (oneJobRead) ends when it does not end well. */
export interface OneJobReadEnds {
  /** The error of a read that met the end of the file after `bytes`. */
  readonly short: (bytes: number) => Error;
  /** What a failed job throws instead of its own error (e.g. a missing file as a miss); absent: its error. */
  readonly failed?: (e: unknown) => unknown;
}

/**
 * The end of a one-chunk entry's read as one native job (`reading`, timed into `t`): its `size` bytes
 * checked, handed to `sink` from `view`, and `release` called once whatever happens; its ReadResult.
 * One chain of thens, not async layers: this runs once per block read.
 */
export function oneJobRead(
  reading: Promise<BlockFileTimes>,
  size: number,
  view: Uint8Array,
  t: SplitTimer,
  release: () => void,
  sink: ChunkSink | undefined,
  ends: OneJobReadEnds,
): Promise<ReadResult> {
  const done = (): ReadResult => {
    release();
    return { timing: t.result(), bytes: size };
  };
  const dropped = (e: unknown): never => {
    release();
    throw e;
  };
  return reading.then(
    (times) => {
      if (times.bytes < size) return dropped(ends.short(times.bytes));
      if (sink === undefined) return done();
      let sinking: void | Promise<void>;
      try {
        sinking = sink(view.subarray(0, size));
      } catch (e) {
        return dropped(e);
      }
      return Promise.resolve(sinking).then(done, dropped);
    },
    (e: unknown) => dropped(ends.failed !== undefined ? ends.failed(e) : e),
  );
}

/**
 * A one-chunk entry written by `write` as one native job: its bytes as one aligned view (the caller's
 * own when its slab allows, else staged). When O_DIRECT refuses a caller's view (its slab was probed on
 * another file system), the bytes are staged from then on and `write` is called again with `retry`.
 * Counts the zero-copy or staged bytes of the write that succeeded.
 */
export async function writeOneChunk(
  ctx: WriterContext,
  key: string,
  source: ChunkSource,
  t: SplitTimer,
  stopping: () => boolean,
  write: (data: OneChunk, retry: boolean) => Promise<unknown>,
): Promise<void> {
  const own = await oneChunkView(ctx, key, source, t);
  let staged: OneChunk | undefined;
  try {
    if (stopping()) throw new IoAbortedError(0);
    try {
      await write(own, false);
    } catch (e) {
      if (!(e instanceof BlockFileError && e.step === 'write' && e.code === 'EINVAL' && own.slot === undefined)) throw e;
      ctx.callerViewsOk = false;
      staged = await stagedView(ctx, own.view.subarray(0, source.size), t);
      await write(staged, true);
    }
    const written = staged ?? own;
    if (written.slot === undefined) ctx.counters.zeroCopyBytes += written.view.length;
    else ctx.counters.stagedBytes += source.size;
  } finally {
    if (staged !== undefined) await releaseOneChunk(ctx, staged);
    await releaseOneChunk(ctx, own); // the write is over: the source's chunk may be reused now
  }
}
