// Who fills the PayloadPool's slots. Two ways to the same bytes (payload.ts's fillChunk/stampChunk):
// - native (native/payload-fill.c): a chunk that needs its stamps alone (nearly all) is stamped at once
//   on the calling thread, ~0.06 ms per 4 MiB, less than handing it to a sleeping thread costs the
//   caller in a virtual machine (~0.1 ms per wake-up, measured); a full copy (~1 ms) is a job on
//   libuv's threadpool;
// - worker threads (the fallback when the helper is not built, and the way tests inject failures): a
//   message to a thread and one back per chunk. In a fast write run those messages and wake-ups were a
//   third of the main thread's CPU, and the threads' own event loops added more.
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import { stampWordsOf } from './payload.js';
import type { FillMessage, FromWorker, InitMessage, ToWorker } from './payload-worker.js';
import { loadNativeHelper } from '../util/native-helper.js';

/** One chunk to fill: entry bytes from `entryOffset`, copying the source from `sourceFrom`. */
export interface FillSpec {
  /** The entry's key material (entryKeyMaterial). */
  readonly material: Uint8Array;
  readonly entryOffset: number;
  readonly sourceFrom: number;
  /** The slot holds the source bytes from sourceFrom on already: rewrite the stamps only. */
  readonly stampOnly: boolean;
}

export interface Filler {
  /** For results and console, e.g. "2 worker threads". */
  readonly description: string;
  /** Fills `target` (a view of the slab) with the chunk; settles once nothing writes into it anymore. */
  fill(target: Uint8Array, spec: FillSpec): Promise<void>;
  /** Fails waiting fills; fills already running finish. */
  close(): Promise<void>;
}

/** Who fills a pool's slots (settings/choices.ts PAYLOAD_FILLERS, the flag's choices, must match: tier-stack.ts passes one as the other). */
export type FillerKind = 'native' | 'threads';

interface NativeFillHelper {
  fill(
    slot: Uint8Array,
    source: Uint8Array,
    stampWords: Uint8Array,
    material: Uint8Array,
    entryOffset: number,
    sourceFrom: number,
    copy: boolean,
    done: (error?: string) => void,
  ): void;
  /** The stamps alone, at once (the slot holds the source bytes from sourceFrom on). */
  stamp(slot: Uint8Array, source: Uint8Array, stampWords: Uint8Array, material: Uint8Array, entryOffset: number, sourceFrom: number): void;
}

/** The native helper, or why a pool cannot use it. */
export function nativeFillHelper(): NativeFillHelper | string {
  // The helper writes stamps as little-endian words, as they are defined.
  if (endianness() !== 'LE') return 'native payload fills need a little-endian machine';
  return loadNativeHelper('payload_fill', 'native payload-fill') as NativeFillHelper | string;
}

/** Fills with the C helper over `source` (payloadSource of the run's seed): stamps at once, copies as threadpool jobs. */
export class NativeFiller implements Filler {
  readonly description = "native: stamps on the event loop, copies on libuv's threadpool";
  private readonly stampBytes: Uint8Array;
  private closed = false;

  constructor(
    private readonly helper: NativeFillHelper,
    private readonly source: Uint8Array,
  ) {
    const words = stampWordsOf(source);
    this.stampBytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  }

  fill(target: Uint8Array, spec: FillSpec): Promise<void> {
    if (this.closed) return Promise.reject(new Error('payload pool is closed'));
    if (spec.stampOnly) {
      try {
        this.helper.stamp(target, this.source, this.stampBytes, spec.material, spec.entryOffset, spec.sourceFrom);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
    }
    return new Promise<void>((resolve, reject) => {
      const done = (error?: string): void => (error === undefined ? resolve() : reject(new Error(`native payload fill failed: ${error}`)));
      // (the helper's fill can stamp only too; here it is the copy, stamps having returned above)
      this.helper.fill(target, this.source, this.stampBytes, spec.material, spec.entryOffset, spec.sourceFrom, true, done);
    });
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** One chunk to fill, waiting in the backlog or running on a thread. */
interface FillJob {
  readonly request: Omit<FillMessage, 'type' | 'id'>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * One worker thread, running one fill at a time. Jobs wait in the filler's shared backlog rather than
 * in per-thread queues, so a thread never idles while another has a queue of chunks.
 */
class GeneratorThread {
  private current: { readonly id: number; readonly job: FillJob } | undefined;
  private nextId = 0;
  private failure: Error | undefined;
  private closing = false;
  private readonly readyWaiter: { resolve: () => void; reject: (e: Error) => void };
  readonly ready: Promise<void>;

  constructor(
    readonly index: number,
    private readonly worker: Worker,
    init: Omit<InitMessage, 'type'>,
    private readonly onIdle: () => void,
  ) {
    let waiter: GeneratorThread['readyWaiter'] | undefined;
    this.ready = new Promise<void>((resolve, reject) => (waiter = { resolve, reject }));
    if (waiter === undefined) throw new Error('unreachable: Promise executors run synchronously');
    this.readyWaiter = waiter;
    worker.on('message', (msg: FromWorker) => this.onMessage(msg));
    worker.on('error', (e: Error) => this.fail(new Error(`payload worker ${index} failed: ${e.message}`, { cause: e })));
    worker.on('exit', (code: number) => {
      if (!this.closing) this.fail(new Error(`payload worker ${index} exited unexpectedly with code ${code}`));
    });
    const msg: ToWorker = { type: 'init', ...init };
    worker.postMessage(msg);
    // Referenced until ready, later only while a fill runs: an idle pool never keeps the process alive.
  }

  get alive(): boolean {
    return this.failure === undefined && !this.closing;
  }

  get idle(): boolean {
    return this.alive && this.current === undefined;
  }

  get error(): Error | undefined {
    return this.failure;
  }

  run(job: FillJob): void {
    const id = this.nextId++;
    this.current = { id, job };
    this.worker.ref();
    const msg: ToWorker = { type: 'fill', id, ...job.request };
    this.worker.postMessage(msg);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.settle(new Error('payload pool is closed'));
    await this.worker.terminate();
  }

  private onMessage(msg: FromWorker): void {
    if (msg.type === 'ready') {
      this.worker.unref();
      this.readyWaiter.resolve();
      return;
    }
    if (this.current?.id !== msg.id) return; // already settled by close() or a failure
    this.settle(msg.type === 'done' ? undefined : new Error(`payload worker ${this.index} could not generate a chunk: ${msg.error}`));
    this.onIdle();
  }

  private fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.readyWaiter.reject(error);
    this.settle(error);
    this.onIdle(); // lets the filler hand the backlog to others, or reject it if no thread is left
  }

  /** Ends the running fill, if any: resolved without an error, rejected with one. */
  private settle(error: Error | undefined): void {
    const current = this.current;
    this.current = undefined;
    this.worker.unref();
    if (current === undefined) return;
    if (error === undefined) current.job.resolve();
    else current.job.reject(error);
  }
}

/** Fills on `workers` worker threads sharing the slab and the source. */
export class ThreadFiller implements Filler {
  readonly description: string;
  private readonly threads: GeneratorThread[] = [];
  private readonly backlog: FillJob[] = [];
  private closed = false;

  private constructor(
    workers: number,
    private readonly slab: ArrayBufferLike,
  ) {
    this.description = `${workers} worker thread${workers === 1 ? '' : 's'}`;
  }

  /** Starts the threads (`url`: tests only, a script speaking the payload-worker protocol) and waits until each is ready. */
  static async start(workers: number, slab: SharedArrayBuffer, source: SharedArrayBuffer, url?: URL): Promise<ThreadFiller> {
    const filler = new ThreadFiller(workers, slab);
    const script = url ?? new URL('./payload-worker.js', import.meta.url);
    try {
      for (let i = 0; i < workers; i++) {
        filler.threads.push(new GeneratorThread(i, new Worker(script), { slab, source }, () => filler.dispatch()));
      }
      await Promise.all(filler.threads.map((t) => t.ready));
    } catch (e) {
      await filler.close();
      throw e;
    }
    return filler;
  }

  fill(target: Uint8Array, spec: FillSpec): Promise<void> {
    if (this.closed) return Promise.reject(new Error('payload pool is closed'));
    if (target.buffer !== this.slab) return Promise.reject(new Error('a payload slot must be a view of the pool slab'));
    return new Promise<void>((resolve, reject) => {
      // The material copied: a message clones a view's whole buffer (the pool's views share 4 KiB ones).
      const request = { byteOffset: target.byteOffset, length: target.length, ...spec, material: spec.material.slice() };
      this.backlog.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.rejectBacklog(new Error('payload pool is closed'));
    await Promise.all(this.threads.map((t) => t.close()));
  }

  /** Hands waiting fills, oldest first, to idle threads; fails them all if no thread is left. */
  private dispatch(): void {
    for (const thread of this.threads) {
      const job = this.backlog[0];
      if (job === undefined) return;
      if (!thread.idle) continue;
      this.backlog.shift();
      thread.run(job);
    }
    if (this.backlog.length > 0 && !this.threads.some((t) => t.alive)) {
      const cause = this.threads.find((t) => t.error !== undefined)?.error;
      this.rejectBacklog(new Error(`payload pool has no live worker${cause ? `: ${cause.message}` : ''}`, { cause }));
    }
  }

  private rejectBacklog(error: Error): void {
    for (const job of this.backlog.splice(0)) job.reject(error);
  }
}
