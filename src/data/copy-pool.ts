// Memory copies off the main thread (ARCHITECTURE.md#data-plane): the CPU tier moves entries of up to several GiB in
// and out of its pages, at GiB/s, and doing that on the event loop stalled every other user (measured:
// event-loop delay p99 26 ms, max 242 ms, in a 20-user run with a 4 GiB CPU tier). Copies between
// SharedArrayBuffers go to worker threads; anything else is copied inline.
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { CopyJob, CopyRange, CopyReply } from './copy-worker.js';

/** Copy `src` into `dst` (equal lengths). */
export interface CopyPair {
  readonly dst: Uint8Array;
  readonly src: Uint8Array;
}

export interface Copier {
  /** True when copies run on other threads (the caller need not yield between large copies). */
  readonly offThread: boolean;
  /** Copies every pair, in order; resolves with the milliseconds spent copying (not waiting). */
  copy(pairs: readonly CopyPair[]): Promise<number>;
  close(): Promise<void>;
}

function copyInline(pairs: readonly CopyPair[]): number {
  const t0 = performance.now();
  for (const p of pairs) p.dst.set(p.src);
  return performance.now() - t0;
}

/** Copies on the calling thread (tests, tiny runs). */
export const inlineCopier: Copier = {
  offThread: false,
  copy: async (pairs) => copyInline(pairs),
  close: async () => undefined,
};

function asRange(p: CopyPair): CopyRange | undefined {
  if (p.dst.length !== p.src.length) throw new RangeError(`copy of ${p.src.length} bytes into ${p.dst.length}`);
  const { dst, src } = p;
  if (!(dst.buffer instanceof SharedArrayBuffer) || !(src.buffer instanceof SharedArrayBuffer)) return undefined;
  return { dst: dst.buffer, dstOffset: dst.byteOffset, src: src.buffer, srcOffset: src.byteOffset, length: src.length };
}

interface Pending {
  readonly resolve: (ms: number) => void;
  readonly reject: (e: Error) => void;
}

/** Worker threads that copy between shared buffers, jobs taken in order by whichever thread is free. */
export class CopyPool implements Copier {
  readonly offThread = true;
  private readonly idle: Worker[] = [];
  private readonly backlog: Array<{ readonly job: CopyJob; readonly pending: Pending }> = [];
  /** The job each busy thread runs. */
  private readonly running = new Map<Worker, Pending>();
  private readonly workers = new Set<Worker>();
  private nextId = 0;
  private closed = false;

  private constructor() {}

  /** `workerUrl`: tests only, a worker script speaking the copy-worker protocol, to exercise failures. */
  static async create(threads: number, workerUrl?: URL): Promise<CopyPool> {
    if (!Number.isSafeInteger(threads) || threads < 1) throw new RangeError(`copy threads must be a positive integer, got ${threads}`);
    const pool = new CopyPool();
    const url = workerUrl ?? new URL('./copy-worker.js', import.meta.url);
    try {
      await Promise.all(Array.from({ length: threads }, () => pool.start(url)));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  copy(pairs: readonly CopyPair[]): Promise<number> {
    if (this.closed) return Promise.reject(new Error('copy pool is closed'));
    const ranges: CopyRange[] = [];
    try {
      for (const p of pairs) {
        const r = asRange(p);
        // Not shareable, or no thread left (one died): copy here rather than fail the tier.
        if (r === undefined || this.workers.size === 0) return Promise.resolve(copyInline(pairs));
        ranges.push(r);
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<number>((resolve, reject) => {
      this.backlog.push({ job: { id: this.nextId++, ranges }, pending: { resolve, reject } });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new Error('copy pool is closed');
    for (const { pending } of this.backlog.splice(0)) pending.reject(err);
    for (const pending of this.running.values()) pending.reject(err);
    this.running.clear();
    await Promise.all([...this.workers].map((w) => w.terminate()));
  }

  /** Starts a thread and waits for its first (empty) job, so no measured copy pays its start-up. */
  private async start(url: URL): Promise<void> {
    const w = new Worker(url);
    this.workers.add(w);
    await new Promise<void>((resolve, reject) => {
      w.once('error', reject);
      w.once('message', () => resolve());
      const warmup: CopyJob = { id: -1, ranges: [] };
      w.postMessage(warmup);
    });
    w.on('message', (r: CopyReply) => this.onReply(w, r));
    w.on('error', (e: Error) => this.lose(w, new Error(`copy worker failed: ${e.message}`, { cause: e })));
    w.on('exit', (code: number) => this.lose(w, new Error(`copy worker exited unexpectedly with code ${code}`)));
    w.unref(); // referenced only while it copies: an idle pool never keeps the process alive
    this.idle.push(w);
  }

  private dispatch(): void {
    for (let w = this.idle.pop(); w !== undefined; w = this.idle.pop()) {
      const next = this.backlog.shift();
      if (next === undefined) {
        this.idle.push(w);
        return;
      }
      this.running.set(w, next.pending);
      w.ref();
      w.postMessage(next.job);
    }
    // Every thread died: what is left is copied inline by later calls; fail these with the reason.
    if (this.workers.size === 0)
      for (const { pending } of this.backlog.splice(0)) pending.reject(new Error('copy pool has no thread left'));
  }

  private onReply(w: Worker, r: CopyReply): void {
    w.unref();
    const pending = this.running.get(w);
    this.running.delete(w);
    this.idle.push(w);
    if (pending !== undefined) {
      if ('error' in r) pending.reject(new Error(`copy failed: ${r.error}`));
      else pending.resolve(r.ms);
    }
    this.dispatch();
  }

  /** A thread died: only its own job fails; the others go on (or copies go inline if none is left). */
  private lose(w: Worker, e: Error): void {
    if (this.closed || !this.workers.delete(w)) return;
    const idleAt = this.idle.indexOf(w);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    this.running.get(w)?.reject(e);
    this.running.delete(w);
    this.dispatch();
  }
}
