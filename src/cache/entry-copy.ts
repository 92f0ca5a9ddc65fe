// Copying one entry from a tier to another (a demotion): the source tier's read is streamed into the
// destination tier's write through a one-slot hand-off, one chunk in flight, so real bytes move without
// holding a whole (possibly multi-GiB) entry in memory.
import { IoAbortedError } from '../tiers/backend.js';
import type { Backend, ImmediateOps, IOTiming } from '../tiers/backend.js';
import type { ChunkSource } from '../data/chunk-source.js';

/** A one-slot hand-off: put() resolves when the consumer has finished with the chunk. */
class Handoff implements AsyncIterable<Uint8Array> {
  /** Put by the producer, not yet handed to the consumer. */
  private pending: { chunk: Uint8Array; done: () => void; fail: (e: unknown) => void } | undefined;
  /** Handed to the consumer, whose producer waits until the consumer moves on. */
  private delivered: { done: () => void; fail: (e: unknown) => void } | undefined;
  private waiting: ((r: IteratorResult<Uint8Array>) => void) | undefined;
  private waitingFail: ((e: unknown) => void) | undefined;
  private ended = false;
  private error: unknown;
  private aborted: unknown;
  private consumerDone = false;

  put(chunk: Uint8Array): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the consumer's own failure, passed on as it is
    if (this.aborted !== undefined) return Promise.reject(this.aborted);
    if (this.consumerDone) return Promise.resolve();
    return new Promise((done, fail) => {
      this.pending = { chunk, done, fail };
      this.deliver();
    });
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.deliver();
  }

  /** The consumer finished without needing more bytes: let the producer run to its end. */
  finish(): void {
    this.consumerDone = true;
    this.releaseDelivered();
    const p = this.pending;
    this.pending = undefined;
    p?.done();
  }

  private releaseDelivered(): void {
    const d = this.delivered;
    this.delivered = undefined;
    d?.done();
  }

  /** The consumer gave up: fail the producer's pending and future puts. */
  abort(reason: unknown): void {
    this.aborted = reason ?? new Error('consumer aborted');
    for (const p of [this.pending, this.delivered]) p?.fail(this.aborted);
    this.pending = undefined;
    this.delivered = undefined;
  }

  private deliver(): void {
    const resolve = this.waiting;
    if (resolve === undefined) return;
    if (this.pending !== undefined) {
      this.waiting = undefined;
      this.waitingFail = undefined;
      this.delivered = this.pending;
      const chunk = this.pending.chunk;
      this.pending = undefined;
      resolve({ value: chunk, done: false });
    } else if (this.ended) {
      const fail = this.waitingFail;
      this.waiting = undefined;
      this.waitingFail = undefined;
      if (this.error !== undefined) fail?.(this.error);
      else resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => {
        // Asking for the next chunk releases the previous one to its producer.
        this.releaseDelivered();
        return new Promise((resolve, fail) => {
          this.waiting = resolve;
          this.waitingFail = fail;
          this.deliver();
        });
      },
      return: () => {
        this.finish();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

export interface CopyResult {
  readonly read: IOTiming;
  readonly write: IOTiming;
  readonly bytes: number;
}

/** A copy failed on one side: the other side's error, if any, only followed from it. */
export class CopyFailedError extends Error {
  constructor(
    readonly side: 'read' | 'write',
    override readonly cause: unknown,
  ) {
    super(`demotion ${side} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'CopyFailedError';
  }
}

/**
 * Copies `key` (of `size` bytes) from `src` into `dst`. Rejects with IoAbortedError (bytes that
 * reached `dst`) when the end of the run cut it short, else with a CopyFailedError naming the side
 * that failed first (a failing write makes the read fail too, and the other way round).
 */
export async function copyEntry(src: Backend, dst: Backend, key: string, size: number): Promise<CopyResult> {
  const handoff = new Handoff();
  const source: ChunkSource = { size, chunks: () => handoff };
  let failed: 'read' | 'write' | undefined;
  // A destination that ignores the bytes (null, simulated GPU) finishes without iterating; the
  // source's read then runs to its end with its chunks dropped.
  const writeP = dst.write(key, source).then(
    (t) => {
      handoff.finish();
      return t;
    },
    (e: unknown) => {
      failed ??= 'write';
      handoff.abort(e);
      throw e;
    },
  );
  const readP = src
    .read(key, (chunk) => handoff.put(chunk))
    .then(
      (r) => {
        // A read cut short by the end of the run: the write stops too, as cut short.
        handoff.end(r.bytes < size ? new IoAbortedError(r.bytes) : undefined);
        return r;
      },
      (e: unknown) => {
        failed ??= 'read';
        handoff.end(e);
        throw e;
      },
    );
  const [r, w] = await Promise.allSettled([readP, writeP]);
  if (w.status === 'rejected' && w.reason instanceof IoAbortedError) throw w.reason;
  if (r.status === 'rejected' && r.reason instanceof IoAbortedError) throw r.reason;
  if (r.status === 'rejected' || w.status === 'rejected') {
    const side = failed ?? (r.status === 'rejected' ? 'read' : 'write');
    const reason: unknown = side === 'read' && r.status === 'rejected' ? r.reason : w.status === 'rejected' ? w.reason : undefined;
    throw new CopyFailedError(side, reason);
  }
  return { read: r.value.timing, write: w.value, bytes: r.value.bytes };
}

/** copyEntry between two immediate tiers: the same result, synchronously. */
export function copyNow(src: ImmediateOps, dst: ImmediateOps, key: string): CopyResult {
  const r = src.readNow(key);
  const w = dst.writeNow(key, r.bytes);
  return { read: r.timing, write: w, bytes: r.bytes };
}
