// Where the file tier's time goes inside the harness rather than the device. Every fs call the file
// tier awaits runs on libuv's threadpool (UV_THREADPOOL_SIZE threads, sized by bin/kv-cache.cjs): once
// more calls are in flight than there are threads, the rest wait in libuv's queue, and that wait is
// inside the timed latencies. Reads (and unaligned writes) also wait, untimed, for a staging buffer. The
// gauge counts both, per run, so the verdict can say when the harness, not the device, set a figure.
import { performance } from 'node:perf_hooks';
import { awaitCounted } from '../util/timed-wait.js';

/** libuv's default threadpool size, and its bounds for UV_THREADPOOL_SIZE. */
const LIBUV_DEFAULT_THREADS = 4;
const LIBUV_MAX_THREADS = 1024;

/** The threadpool size libuv uses for `env` (it reads UV_THREADPOOL_SIZE once, at the pool's first use). */
export function threadPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.UV_THREADPOOL_SIZE;
  // libuv takes atoi(): leading digits; 0 or none means the default; above the maximum, the maximum.
  const n = text === undefined ? NaN : Number.parseInt(text, 10);
  if (!Number.isFinite(n) || n <= 0) return LIBUV_DEFAULT_THREADS;
  return Math.min(n, LIBUV_MAX_THREADS);
}

/** What the gauge saw since it was made or reset. */
export interface FileIoStats {
  /** Threads in libuv's pool. */
  readonly poolThreads: number;
  /** Most file-tier fs calls in flight at once. */
  readonly maxInFlight: number;
  /** Milliseconds during which more calls were in flight than the pool has threads (some waited in its queue). */
  readonly queuedMs: number;
  /** Calls that started while every thread was taken. */
  readonly callsQueued: number;
  /** Milliseconds storage operations waited for a free staging buffer (not part of any operation's time). */
  readonly stagingWaitMs: number;
  /** Operations that had to wait for one. */
  readonly stagingWaits: number;
}

/** A failure passed on as it is (track). */
const rethrow = (e: unknown): never => {
  throw e;
};

export class FileIoGauge {
  private inFlight = 0;
  private maxInFlight = 0;
  private queuedSince = 0;
  private queuedMs = 0;
  private callsQueued = 0;
  private stagingWaitMs = 0;
  private stagingWaits = 0;

  constructor(
    readonly poolThreads: number = threadPoolSize(),
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isSafeInteger(poolThreads) || poolThreads < 1)
      throw new RangeError(`poolThreads must be a positive integer, got ${poolThreads}`);
  }

  /** Runs `call` (one fs call on the threadpool), counting it in flight until it settles. */
  track<T>(call: () => Promise<T>): Promise<T> {
    return this.trackThen(call, (value) => value, rethrow);
  }

  /**
   * track(), with what the call's settlement becomes (`value` or `failure`) in the same reaction: no
   * promise layer of its own for callers that run once per block operation.
   */
  trackThen<T, U>(call: () => Promise<T>, value: (v: T) => U, failure: (e: unknown) => U): Promise<U> {
    this.callStarted();
    let settling: Promise<T>;
    try {
      settling = call();
    } catch (e) {
      this.callEnded();
      return Promise.reject(e);
    }
    return settling.then(
      (v) => {
        this.callEnded();
        return value(v);
      },
      (e: unknown) => {
        this.callEnded();
        return failure(e);
      },
    );
  }

  /** A call is in flight from here until callEnded(): track()'s two halves, for a caller that settles the call itself. */
  callStarted(): void {
    if (this.inFlight >= this.poolThreads) this.callsQueued++;
    if (++this.inFlight === this.poolThreads + 1) this.queuedSince = this.now();
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
  }

  callEnded(): void {
    if (this.inFlight-- === this.poolThreads + 1) this.queuedMs += this.now() - this.queuedSince;
  }

  /** Awaits a staging buffer, counting the time when `wait` was not already settled (`ready`). */
  staging<T>(wait: Promise<T>, ready: boolean): Promise<T> {
    return awaitCounted(wait, ready, this.now, (ms) => {
      this.stagingWaitMs += ms;
      this.stagingWaits++;
    });
  }

  get stats(): FileIoStats {
    // A queue still standing counts up to now.
    const open = this.inFlight > this.poolThreads ? this.now() - this.queuedSince : 0;
    return {
      poolThreads: this.poolThreads,
      maxInFlight: this.maxInFlight,
      queuedMs: this.queuedMs + open,
      callsQueued: this.callsQueued,
      stagingWaitMs: this.stagingWaitMs,
      stagingWaits: this.stagingWaits,
    };
  }

  /** Starts the figures again (after preparation); calls in flight stay counted as in flight. */
  resetStats(): void {
    this.maxInFlight = this.inFlight;
    this.queuedMs = this.callsQueued = this.stagingWaitMs = this.stagingWaits = 0;
    if (this.inFlight > this.poolThreads) this.queuedSince = this.now();
  }
}
