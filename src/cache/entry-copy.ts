// Copying one entry from a tier to another (a demotion): the source tier's read is streamed into the
// destination tier's write through a one-slot hand-off, one chunk in flight, so real bytes move without
// holding a whole (possibly multi-GiB) entry in memory.
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

/** Copies `key` (of `size` bytes) from `src` into `dst`. Rejects if either side fails. */
export async function copyEntry(src: Backend, dst: Backend, key: string, size: number): Promise<CopyResult> {
  const handoff = new Handoff();
  const source: ChunkSource = { size, chunks: () => handoff };
  // A destination that ignores the bytes (null, simulated GPU) finishes without iterating; the
  // source's read then runs to its end with its chunks dropped.
  const writeP = dst.write(key, source).then(
    (t) => {
      handoff.finish();
      return t;
    },
    (e: unknown) => {
      handoff.abort(e);
      throw e;
    },
  );
  const readP = src
    .read(key, (chunk) => handoff.put(chunk))
    .then(
      (r) => {
        handoff.end();
        return r;
      },
      (e: unknown) => {
        handoff.end(e);
        throw e;
      },
    );
  const [r, w] = await Promise.allSettled([readP, writeP]);
  if (r.status === 'rejected') throw r.reason;
  if (w.status === 'rejected') throw w.reason;
  return { read: r.value.timing, write: w.value, bytes: r.value.bytes };
}

/** copyEntry between two immediate tiers: the same result, synchronously. */
export function copyNow(src: ImmediateOps, dst: ImmediateOps, key: string): CopyResult {
  const r = src.readNow(key);
  const w = dst.writeNow(key, r.bytes);
  return { read: r.timing, write: w, bytes: r.bytes };
}
