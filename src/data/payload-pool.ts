// Payload generation ahead of the writes. A Filler (fillers.ts: native code, or worker threads without
// the helper) fills slots of one shared, O_DIRECT-aligned slab in place, so the file tier can write a
// chunk straight from the slot. Each entry's iterator generates a few chunks ahead, so a write rarely
// waits for data, while the number of slots bounds the memory whatever the number of entries.
import { performance } from 'node:perf_hooks';
import type { ChunkSource, WholeChunk } from './chunk-source.js';
import { DIRECT_ALIGN } from './aligned.js';
import type { DirectSlabs } from './aligned.js';
import { checkEntrySize, type PayloadFactory } from './inline-payload.js';
import { entryKeyMaterial, MATERIAL_BYTES, MIN_REPEAT_BYTES, payloadSource, SOURCE_BYTES, sourceOffsetOf, START_ALIGN } from './payload.js';
import { NativeFiller, nativeFillHelper, ThreadFiller } from './fillers.js';
import type { Filler, FillerKind } from './fillers.js';
import { SlotPool } from './slots.js';
import { awaitCounted } from '../util/timed-wait.js';

export type { PayloadFactory } from './inline-payload.js';

/**
 * Chunks an entry holds by default: the one being written and one filled ahead. A fill (stamps, a tenth
 * of a millisecond per 4 MiB) is far shorter than a write; more read-ahead only holds slots that other
 * entries need, to find a free one holding a base they may reuse.
 */
export const PAYLOAD_READAHEAD = 2;

export interface PayloadPoolOptions {
  readonly seed: number;
  /** Generator threads (≥ 1) when the fills run on worker threads. */
  readonly workers: number;
  /**
   * Who fills the slots: 'native' (the C helper: stamps at once, copies on libuv's threadpool) or 'threads' (worker threads).
   * Default: native when the helper is built, else threads; a `workerUrl` means threads.
   */
  readonly filler?: FillerKind;
  /**
   * Bytes per chunk, a multiple of DIRECT_ALIGN (every chunk but an entry's last then ends on an
   * aligned file offset, which O_DIRECT writes need) dividing START_ALIGN (4 MiB: a chunk then copies
   * part of one base).
   */
  readonly chunkBytes: number;
  /** Chunk buffers shared by all entries (≥ 1); this bounds the pool's memory. */
  readonly slots: number;
  /** A directory on the file system the file tier will use with O_DIRECT (see AlignedSlab.create). */
  readonly probeDir?: string;
  /** Where slots that pass the probe are recorded, for the file tier to write them as they are. */
  readonly directSlabs?: DirectSlabs;
  /**
   * Most chunks one entry holds at once: the one its consumer has plus those generated ahead.
   * Default min(slots, PAYLOAD_READAHEAD).
   */
  readonly readahead?: number;
  /** Milliseconds from a monotonic clock, for the consumers' waits (default performance.now). */
  readonly now?: () => number;
  /** Tests only: a worker script speaking the payload-worker protocol, to exercise failures. */
  readonly workerUrl?: URL;
}

/** What a chunk is: entry bytes from `entryOffset`, copying the source from `sourceFrom`. */
interface ChunkSpec {
  readonly material: Uint8Array;
  readonly entryOffset: number;
  readonly sourceFrom: number;
  readonly length: number;
}

/**
 * Hands out MATERIAL_BYTES views of shared 4 KiB buffers. A 32-byte typed array of its own lives on
 * V8's heap, and the first native call that takes it moves it off (a backing store allocated per
 * entry written); a view of a buffer already off the heap is passed as it is. A buffer is freed once
 * no view of it is left.
 */
class MaterialArena {
  private buffer = new ArrayBuffer(0);
  private used = 0;

  next(): Uint8Array {
    if (this.used + MATERIAL_BYTES > this.buffer.byteLength) {
      this.buffer = new ArrayBuffer(128 * MATERIAL_BYTES);
      this.used = 0;
    }
    const view = new Uint8Array(this.buffer, this.used, MATERIAL_BYTES);
    this.used += MATERIAL_BYTES;
    return view;
  }
}

/** The best score a slot can have for the next chunk: it holds the source bytes, only its stamps are rewritten. */
const STAMPS_ONLY = 2;

/**
 * The bases (source offsets) one entry's chunks copied within the last MIN_REPEAT_BYTES of the entry:
 * the next chunk may copy any other (payload.ts: no source byte repeats nearer than that).
 */
class RecentBases {
  private readonly recent: number[] = [];
  private readonly keep: number;

  constructor(private readonly chunkBytes: number) {
    this.keep = MIN_REPEAT_BYTES / chunkBytes - 1;
  }

  allows(sourceFrom: number): boolean {
    return !this.recent.includes(sourceFrom);
  }

  /** `preferred` (the default layout's) if allowed, else the next allowed chunk-aligned offset after it. */
  firstAllowed(preferred: number): number {
    let at = preferred;
    while (!this.allows(at)) at = (at + this.chunkBytes) % SOURCE_BYTES;
    return at;
  }

  use(sourceFrom: number): void {
    this.recent.push(sourceFrom);
    if (this.recent.length > this.keep) this.recent.shift();
  }
}

/**
 * What a slot holds outside the stamps after its last fill: the source bytes from `sourceFrom` on, for
 * `length` bytes. A chunk that may copy them (payload.ts's repeat rule), no longer, needs only its
 * stamps rewritten.
 */
interface SlotContent {
  readonly sourceFrom: number;
  readonly length: number;
}

/** A chunk of one entry: its slot, how many bytes of it are used, and when the worker is done. */
interface InFlight {
  readonly slot: Uint8Array;
  readonly length: number;
  readonly filled: Promise<void>;
  /** Set when `filled` settles: a consumer that finds it set did not wait. */
  done: boolean;
}

/** What the pool produced and how long its consumers waited for it. */
export interface PayloadStats {
  /** Who fills the slots (fillerDescription). */
  readonly filler: string;
  /** Bytes made by rewriting the stamps of a slot that held the source bytes already. */
  readonly stampedBytes: number;
  /** Bytes made by a full copy from the source (a slot's first use, or one holding a base the entry used too recently). */
  readonly copiedBytes: number;
  /**
   * Milliseconds consumers (the tiers' writes) spent waiting for a chunk: for a free slot or for a
   * thread to fill it. Writes do not count this time, so when it is large the generator, not the
   * device, set the write bandwidth.
   */
  readonly consumerWaitMs: number;
  /** Chunks a consumer had to wait for. */
  readonly chunksWaitedFor: number;
}

export class PayloadPool implements PayloadFactory {
  readonly seed: number;
  readonly chunkBytes: number;
  readonly readahead: number;
  private closed = false;

  /** Per slot, what its last fill left in it; a slot not yet filled has none. */
  private readonly contents = new WeakMap<Uint8Array, SlotContent>();
  /** Bytes filled by rewriting stamps only, and by a full copy: how often slots were reused for the same source offset. */
  private stampedBytes = 0;
  private copiedBytes = 0;
  private consumerWaitMs = 0;
  private chunksWaitedFor = 0;
  private readonly now: () => number;
  /** Where each entry's key material is written (views the native fills read without moving them). */
  private readonly materials = new MaterialArena();

  private constructor(
    options: PayloadPoolOptions,
    private readonly slotPool: SlotPool,
    private readonly filler: Filler,
    /** Why the fills run on worker threads when native ones were not asked against: for the user. */
    private readonly fallback: string | undefined,
  ) {
    this.seed = options.seed;
    this.chunkBytes = options.chunkBytes;
    this.readahead = options.readahead ?? Math.min(options.slots, PAYLOAD_READAHEAD);
    this.now = options.now ?? (() => performance.now());
  }

  /** Allocates (and touches) the slots, starts the filler (worker threads: waits until each is ready). */
  static async create(options: PayloadPoolOptions): Promise<PayloadPool> {
    checkOptions(options);
    const slots = new SlotPool(options.slots, options.chunkBytes, options.probeDir, options.directSlabs);
    const source = payloadSource(options.seed);
    const kind = options.filler ?? (options.workerUrl !== undefined ? 'threads' : 'native');
    const helper = kind === 'native' ? nativeFillHelper() : undefined;
    const filler =
      helper !== undefined && typeof helper !== 'string'
        ? new NativeFiller(helper, source)
        : await ThreadFiller.start(options.workers, slots.buffer, sharedBufferOf(source), options.workerUrl);
    return new PayloadPool(options, slots, filler, typeof helper === 'string' ? helper : undefined);
  }

  /** Slots free right now (all of them when no entry is being generated). */
  get available(): number {
    return this.slotPool.available;
  }

  /** Whether the slots passed the O_DIRECT probe (the directSlabs accept the chunks). */
  get direct(): boolean {
    return this.slotPool.direct;
  }

  /** Who fills the slots, and why not natively when the native helper was wanted but is missing. */
  get fillerDescription(): string {
    return this.fallback === undefined ? this.filler.description : `${this.filler.description} (${this.fallback})`;
  }

  /** Bytes generated so far, by how, and the consumers' waits; resetStats() starts them again (after preparation). */
  get stats(): PayloadStats {
    const { stampedBytes, copiedBytes, consumerWaitMs, chunksWaitedFor } = this;
    return { filler: this.fillerDescription, stampedBytes, copiedBytes, consumerWaitMs, chunksWaitedFor };
  }

  resetStats(): void {
    this.stampedBytes = this.copiedBytes = this.consumerWaitMs = this.chunksWaitedFor = 0;
  }

  /**
   * Chunks are views of aligned slots (the directSlabs accept them when `direct`), chunkBytes long except
   * an entry's last. Iterate to the end or break out: either returns the slots; an iterator dropped
   * without either keeps its slots.
   */
  source(key: string, size: number): ChunkSource {
    checkEntrySize(size);
    const chunks = (): AsyncGenerator<Uint8Array> => this.generate(key, size);
    return size > 0 && size <= this.chunkBytes ? { size, chunks, whole: () => this.whole(key, size) } : { size, chunks };
  }

  /**
   * A one-chunk entry (ChunkSource.whole): a slot taken and filled as generate() takes and fills its
   * first, without the iteration. The slot goes back at release().
   */
  private whole(key: string, size: number): Promise<WholeChunk> {
    if (this.closed) return Promise.reject(new Error('payload pool is closed'));
    const material = entryKeyMaterial(this.seed, key, this.materials.next());
    // Any base will do for an entry's first chunk (no bases used yet).
    const prefer = (slot: Uint8Array): number => this.preference(slot, this.reusable(slot, size));
    const fillSlot = (slot: Uint8Array): Promise<WholeChunk> => {
      const held = this.reusable(slot, size);
      const sourceFrom = held?.sourceFrom ?? sourceOffsetOf(material, 0);
      const release = (): void => this.slotPool.release(slot);
      const filled = this.fill(slot, { material, entryOffset: 0, sourceFrom, length: size }, held);
      // As generate() counts a chunk it had to wait for (its fill had not settled when it asked).
      return this.waitFor(filled, false).then(
        () => ({ bytes: slot.subarray(0, size), release }),
        (e: unknown) => {
          release(); // a fill that failed has stopped writing into it
          throw e;
        },
      );
    };
    const free = this.slotPool.tryAcquire(prefer, STAMPS_ONLY);
    if (free !== undefined) return fillSlot(free);
    return this.waitFor(this.slotPool.acquire(prefer, STAMPS_ONLY), false).then(fillSlot);
  }

  /** `slot`'s content when a chunk of `length` bytes may take it as it is (stamps only; `bases`: the entry's recent ones), else undefined. */
  private reusable(slot: Uint8Array, length: number, bases?: RecentBases): SlotContent | undefined {
    const held = this.contents.get(slot);
    return held !== undefined && held.length >= length && (bases?.allows(held.sourceFrom) ?? true) ? held : undefined;
  }

  /** A slot's score for a chunk: one it can take by its stamps alone (`held`), then an unused one, then any (a copy). */
  private preference(slot: Uint8Array, held: SlotContent | undefined): number {
    return held !== undefined ? STAMPS_ONLY : this.contents.has(slot) ? 0 : 1;
  }

  /** Awaits `wait`, counting the time as a consumer's wait when `ready` says it was not ready yet. */
  private waitFor<T>(wait: Promise<T>, ready: boolean): Promise<T> {
    return awaitCounted(wait, ready, this.now, (ms) => {
      this.consumerWaitMs += ms;
      this.chunksWaitedFor++;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.filler.close();
  }

  /**
   * Deadlock-free under contention: the iterator waits for a slot (acquire) only when it holds none,
   * and takes further slots for read-ahead only if one is free (tryAcquire). Every iterator that holds
   * a slot can therefore finish its current chunk and hand the slot on when its consumer moves on.
   */
  private async *generate(key: string, size: number): AsyncGenerator<Uint8Array> {
    if (size === 0) return;
    const material = entryKeyMaterial(this.seed, key, this.materials.next());
    const bases = new RecentBases(this.chunkBytes);
    const queue: InFlight[] = [];
    let requested = 0;
    const nextLength = (): number => Math.min(this.chunkBytes, size - requested);
    const prefer = (slot: Uint8Array): number => this.preference(slot, this.reusable(slot, nextLength(), bases));
    const request = (slot: Uint8Array): void => {
      const length = nextLength();
      const held = this.reusable(slot, length, bases);
      const sourceFrom = held?.sourceFrom ?? bases.firstAllowed(sourceOffsetOf(material, requested));
      bases.use(sourceFrom);
      const filled = this.fill(slot, { material, entryOffset: requested, sourceFrom, length }, held);
      const chunk: InFlight = { slot, length, filled, done: false };
      // (the catch also keeps a read-ahead chunk that fails before anyone awaits it from going unhandled)
      filled.then(
        () => (chunk.done = true),
        () => (chunk.done = true),
      );
      queue.push(chunk);
      requested += length;
    };
    try {
      while (requested < size || queue.length > 0) {
        if (queue.length === 0) {
          const free = this.slotPool.available > 0;
          request(await this.waitFor(this.slotPool.acquire(prefer, STAMPS_ONLY), free));
        }
        while (requested < size && queue.length < this.readahead) {
          const spare = this.slotPool.tryAcquire(prefer, STAMPS_ONLY);
          if (spare === undefined) break;
          request(spare);
        }
        const head = queue[0]; // non-empty: a slot was requested above if it was empty
        await this.waitFor(head.filled, head.done);
        yield head.slot.subarray(0, head.length);
        queue.shift();
        this.slotPool.release(head.slot);
      }
    } finally {
      // A slot goes back only once its worker has stopped writing into it.
      for (const chunk of queue) {
        await chunk.filled.catch(() => undefined);
        this.slotPool.release(chunk.slot);
      }
    }
  }

  /** Fills `slot` with `chunk`: its stamps alone when the slot holds `held` (the same source bytes), else a copy. */
  private async fill(slot: Uint8Array, chunk: ChunkSpec, held: SlotContent | undefined): Promise<void> {
    if (this.closed) throw new Error('payload pool is closed');
    const { material, entryOffset, sourceFrom, length } = chunk;
    const stampOnly = held !== undefined;
    // Until the fill is done the slot's content is unknown (a failed fill may have stopped halfway).
    this.contents.delete(slot);
    if (stampOnly) this.stampedBytes += length;
    else this.copiedBytes += length;
    await this.filler.fill(slot.subarray(0, length), { material, entryOffset, sourceFrom, stampOnly });
    // Stamps alone leave the source bytes past the chunk as they were: the slot still holds all it held.
    this.contents.set(slot, { sourceFrom, length: Math.max(length, held?.length ?? 0) });
  }
}

function checkOptions(o: PayloadPoolOptions): void {
  const problems: string[] = [];
  if (!Number.isSafeInteger(o.workers) || o.workers < 1) problems.push(`workers must be a positive integer, got ${o.workers}`);
  if (!Number.isSafeInteger(o.slots) || o.slots < 1) problems.push(`slots must be a positive integer, got ${o.slots}`);
  if (!Number.isSafeInteger(o.chunkBytes) || o.chunkBytes < 1 || o.chunkBytes % DIRECT_ALIGN !== 0 || START_ALIGN % o.chunkBytes !== 0) {
    problems.push(`chunkBytes must be a positive multiple of ${DIRECT_ALIGN} dividing ${START_ALIGN}, got ${o.chunkBytes}`);
  }
  if (o.readahead !== undefined && (!Number.isSafeInteger(o.readahead) || o.readahead < 1)) {
    problems.push(`readahead must be a positive integer, got ${o.readahead}`);
  }
  if (problems.length > 0) throw new RangeError(`invalid payload pool options: ${problems.join('; ')}`);
}

function sharedBufferOf(view: Uint8Array): SharedArrayBuffer {
  if (!(view.buffer instanceof SharedArrayBuffer)) throw new Error('payload pool memory is not shared');
  return view.buffer;
}
