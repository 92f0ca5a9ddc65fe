// Memory copies off the main thread (design §3): the CPU tier moves entries of up to several GiB in
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
  private readonly running = new Map<number, Pending>();
  private readonly workers: Worker[] = [];
  private nextId = 0;
  private failure: Error | undefined;
  private closed = false;

  private constructor() {}

  static async create(threads: number): Promise<CopyPool> {
    if (!Number.isSafeInteger(threads) || threads < 1) throw new RangeError(`copy threads must be a positive integer, got ${threads}`);
    const pool = new CopyPool();
    const url = new URL('./copy-worker.js', import.meta.url);
    await Promise.all(
      Array.from({ length: threads }, async () => {
        const w = new Worker(url);
        pool.workers.push(w);
        w.on('message', (r: CopyReply) => pool.onReply(w, r));
        w.on('error', (e: Error) => pool.fail(new Error(`copy worker failed: ${e.message}`, { cause: e })));
        w.on('exit', (code: number) => {
          if (!pool.closed) pool.fail(new Error(`copy worker exited unexpectedly with code ${code}`));
        });
        await new Promise<void>((resolve, reject) => {
          w.once('online', resolve);
          w.once('error', reject);
        });
        w.unref(); // referenced only while it copies: an idle pool never keeps the process alive
        pool.idle.push(w);
      }),
    ).catch(async (e: unknown) => {
      await pool.close();
      throw e;
    });
    return pool;
  }

  copy(pairs: readonly CopyPair[]): Promise<number> {
    if (this.closed) return Promise.reject(new Error('copy pool is closed'));
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const ranges: CopyRange[] = [];
    try {
      for (const p of pairs) {
        const r = asRange(p);
        if (r === undefined) return Promise.resolve(copyInline(pairs)); // not shareable: copy here
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
    this.rejectAll(new Error('copy pool is closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private dispatch(): void {
    for (let w = this.idle.pop(); w !== undefined; w = this.idle.pop()) {
      const next = this.backlog.shift();
      if (next === undefined) {
        this.idle.push(w);
        return;
      }
      this.running.set(next.job.id, next.pending);
      w.ref();
      w.postMessage(next.job);
    }
  }

  private onReply(w: Worker, r: CopyReply): void {
    w.unref();
    this.idle.push(w);
    const pending = this.running.get(r.id);
    this.running.delete(r.id);
    if (pending !== undefined) {
      if ('error' in r) pending.reject(new Error(`copy failed: ${r.error}`));
      else pending.resolve(r.ms);
    }
    this.dispatch();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.rejectAll(e);
  }

  private rejectAll(e: Error): void {
    for (const { pending } of this.backlog.splice(0)) pending.reject(e);
    for (const pending of this.running.values()) pending.reject(e);
    this.running.clear();
  }
}
