// The arithmetic and bookkeeping of a slab pool (--kv-layout slab), apart from any I/O: how a capacity
// becomes slots of a fixed size in pool files (`slabGeometry`), where a slot lives (`slotPlace`), and
// the in-memory index of which key holds which slot (`SlotIndex`). Dynamo KVBM's local-SSD tier keeps
// its blocks this way: a pre-provisioned pool, each block a file offset, so storing a block creates
// nothing and evicting one deletes nothing; only the index changes.
import { DIRECT_ALIGN } from '../data/aligned.js';
import { roundUp } from '../util/units.js';

/** Pool files when --slab-file-gib is not given: "a few", so a pool is neither one huge file nor many small ones. */
export const DEFAULT_SLAB_FILES = 4;

/** What a slab pool did, for the results (kvcache_bench.slab). */
export interface SlabReport {
  readonly slotBytes: number;
  readonly slots: number;
  readonly files: number;
  /** The largest pool file (all but the last are this size). */
  readonly fileBytes: number;
  readonly poolBytes: number;
  /** Bytes written to lay the pool out, before the measured window (not in its device counters). */
  readonly layOutBytes: number;
  readonly layOutSec: number;
  /** Most slots held at once. */
  readonly slotsUsedPeak: number;
  /** Slots given back by evictions and deletes (no unlink for any). */
  readonly slotsFreed: number;
  /** Pool files created (all during the lay-out) and unlinked (at close) so far: nothing per entry. */
  readonly fileCreates: number;
  readonly fileUnlinks: number;
  /** The largest entry refused because it was larger than a slot, or null when none was. */
  readonly largestRefusedBytes: number | null;
}

/** How a pool is cut: `slots` slots of `slotBytes`, `slotsPerFile` of them in each file but the last. */
export interface SlabGeometry {
  readonly slotBytes: number;
  readonly slots: number;
  readonly slotsPerFile: number;
  readonly files: number;
  /** slots × slotBytes: the storage tier's limit. */
  readonly poolBytes: number;
}

/** A slot's size on the medium: the bytes asked for, rounded up to the O_DIRECT unit (every slot offset stays aligned). */
export function slotSizeOf(bytes: number): number {
  return roundUp(Math.max(1, Math.ceil(bytes)), DIRECT_ALIGN);
}

/**
 * The pool that fits in `limitBytes` with slots of `slotBytes` (already slotSizeOf'd) and files of about
 * `fileBytes` (0: the pool in DEFAULT_SLAB_FILES files). A string when not even one slot fits.
 */
export function slabGeometry(limitBytes: number, slotBytes: number, fileBytes: number): SlabGeometry | string {
  const slots = Number.isFinite(limitBytes) ? Math.floor(limitBytes / slotBytes) : 0;
  if (slots < 1) return `the storage tier's limit (${limitBytes} bytes) holds no slot of ${slotBytes} bytes`;
  const slotsPerFile = fileBytes > 0 ? Math.max(1, Math.floor(fileBytes / slotBytes)) : Math.max(1, Math.ceil(slots / DEFAULT_SLAB_FILES));
  return { slotBytes, slots, slotsPerFile, files: Math.ceil(slots / slotsPerFile), poolBytes: slots * slotBytes };
}

/** Bytes of pool file `file` (the last one holds what is left). */
export function poolFileBytes(g: SlabGeometry, file: number): number {
  const first = file * g.slotsPerFile;
  return Math.max(0, Math.min(g.slotsPerFile, g.slots - first)) * g.slotBytes;
}

/** The pool file of `slot` and the slot's offset in it. */
export function slotPlace(g: SlabGeometry, slot: number): { readonly file: number; readonly offset: number } {
  const file = Math.floor(slot / g.slotsPerFile);
  return { file, offset: (slot - file * g.slotsPerFile) * g.slotBytes };
}

/** Where an entry lives in the pool: its slot, and its size. */
export interface SlotEntry {
  readonly slot: number;
  readonly size: number;
}

/**
 * Which key holds which slot. A key takes a slot when its write starts (`take`) and is stored once the
 * write succeeded (`commit`); a failed write or a delete gives the slot back (`release`). Free slots are
 * a stack: the slot freed last is reused first.
 */
export class SlotIndex {
  /** Per key its slot, and its size once committed (undefined while it is being written). One map: a block read looks a key up once. */
  private readonly held = new Map<string, { readonly slot: number; size: number | undefined }>();
  private readonly free: number[];
  private peak = 0;
  /** Slots given back by deletes and evictions (no file was unlinked for any). */
  freed = 0;

  constructor(readonly slots: number) {
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  /** The slot `key` writes into: its own when it holds one (a rewrite), else a free one; undefined when none is free. */
  take(key: string): number | undefined {
    const own = this.held.get(key);
    if (own !== undefined) {
      own.size = undefined; // being rewritten: not readable until committed
      return own.slot;
    }
    const slot = this.free.pop();
    if (slot === undefined) return undefined;
    this.held.set(key, { slot, size: undefined });
    this.peak = Math.max(this.peak, this.held.size);
    return slot;
  }

  commit(key: string, size: number): void {
    const own = this.held.get(key);
    if (own === undefined) throw new Error(`slab index: '${key}' holds no slot`);
    own.size = size;
  }

  /** Gives `key`'s slot back; false when it held none. */
  release(key: string): boolean {
    const own = this.held.get(key);
    if (own === undefined) return false;
    this.held.delete(key);
    this.free.push(own.slot);
    this.freed++;
    return true;
  }

  /** The stored entry of `key`: its slot and size, or undefined. */
  entry(key: string): SlotEntry | undefined {
    const own = this.held.get(key);
    return own?.size === undefined ? undefined : { slot: own.slot, size: own.size };
  }

  *keys(): IterableIterator<string> {
    for (const [key, own] of this.held) if (own.size !== undefined) yield key;
  }

  /** Every slot free again (a cleared cache); the peak and the freed count stay. */
  clear(): void {
    for (const key of [...this.held.keys()]) this.release(key);
  }

  get used(): number {
    return this.held.size;
  }

  get peakUsed(): number {
    return this.peak;
  }
}
