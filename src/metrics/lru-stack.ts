// The LRU stack of a byte-limited cache, for stack distances (`kv-cache size`, docs/sizing.md): every
// block ever referenced keeps a place in one recency order, newest on top. The stack distance of a
// block is the bytes of the blocks above it plus its own: an LRU cache of C bytes that evicts from the
// bottom only as far as it must holds exactly the blocks whose distance is ≤ C (docs/sizing.md says
// when that is the run's cache), so one distance answers "is it cached?" for every capacity at once.
//
// Places are time slots: a reference takes the next slot, and a Fenwick tree over the slots sums the
// sizes of the blocks whose latest reference is at or after a slot — the bytes above a block — in
// O(log n). When the slots run out they are renumbered in order (the blocks' order is kept, the holes
// left by re-referenced blocks dropped), so memory stays linear in distinct blocks, not references.
// Sums are of whole byte counts below 2^53, so they are exact in doubles.

/** Fewest slots kept; slots grow to twice the distinct blocks at each renumbering. */
const MIN_SLOTS = 1024;

export class LruStack {
  private readonly ids = new Map<string | number, number>();
  /** Per block id: its slot (−1 before its first reference) and its bytes. */
  private slotOf = new Int32Array(MIN_SLOTS).fill(-1);
  private bytesOf = new Float64Array(MIN_SLOTS);
  /** Per slot: the block whose latest reference it holds, or −1. */
  private blockAt = new Int32Array(MIN_SLOTS).fill(-1);
  /** Fenwick tree over slots (1-based): bytes per slot. */
  private tree = new Float64Array(MIN_SLOTS + 1);
  private nextSlot = 0;
  private totalBytes = 0;

  /** Distinct blocks seen. */
  get distinct(): number {
    return this.ids.size;
  }

  /** Bytes of every distinct block (each at its latest size): the capacity past which nothing more is evicted. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** The id of a block key (a string, or a number a source interned it to), a new one for a key not seen before. */
  idOf(key: string | number): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
      if (id >= this.slotOf.length) this.growIds();
    }
    return id;
  }

  /** The block's stack distance in bytes (bytes above it plus its own); Infinity before its first reference. */
  distance(id: number): number {
    const slot = this.slotOf[id] ?? -1;
    if (slot < 0) return Infinity;
    return this.totalBytes - this.sumBelow(slot);
  }

  /** References the block: it goes on top of the stack, with `bytes` as its size from now on. */
  touch(id: number, bytes: number): void {
    const old = this.slotOf[id] ?? -1;
    if (old >= 0) {
      if (old === this.nextSlot - 1 && this.bytesOf[id] === bytes) return; // already on top
      this.add(old, -(this.bytesOf[id] ?? 0));
      this.blockAt[old] = -1;
      this.totalBytes -= this.bytesOf[id] ?? 0;
    }
    if (this.nextSlot === this.blockAt.length) this.renumber();
    const slot = this.nextSlot++;
    this.add(slot, bytes);
    this.blockAt[slot] = id;
    this.slotOf[id] = slot;
    this.bytesOf[id] = bytes;
    this.totalBytes += bytes;
  }

  /** Bytes in slots 0 … slot − 1. */
  private sumBelow(slot: number): number {
    let s = 0;
    for (let i = slot; i > 0; i -= i & -i) s += this.tree[i] ?? 0;
    return s;
  }

  private add(slot: number, bytes: number): void {
    const n = this.blockAt.length;
    for (let i = slot + 1; i <= n; i += i & -i) this.tree[i] = (this.tree[i] ?? 0) + bytes;
  }

  private growIds(): void {
    const slotOf = new Int32Array(this.slotOf.length * 2).fill(-1);
    slotOf.set(this.slotOf);
    this.slotOf = slotOf;
    const bytesOf = new Float64Array(this.bytesOf.length * 2);
    bytesOf.set(this.bytesOf);
    this.bytesOf = bytesOf;
  }

  /** Renumbers the occupied slots 0 … k − 1 in order and rebuilds the tree in O(slots). */
  private renumber(): void {
    let live = 0;
    for (let s = 0; s < this.nextSlot; s++) if ((this.blockAt[s] ?? -1) >= 0) live++;
    const size = Math.max(MIN_SLOTS, 2 * live);
    const blockAt = new Int32Array(size).fill(-1);
    const tree = new Float64Array(size + 1);
    let k = 0;
    for (let s = 0; s < this.nextSlot; s++) {
      const id = this.blockAt[s] ?? -1;
      if (id < 0) continue;
      blockAt[k] = id;
      this.slotOf[id] = k;
      tree[k + 1] = this.bytesOf[id] ?? 0;
      k++;
    }
    // Linear Fenwick build: each node passes its sum to its parent.
    for (let i = 1; i <= size; i++) {
      const parent = i + (i & -i);
      if (parent <= size) tree[parent] = (tree[parent] ?? 0) + (tree[i] ?? 0);
    }
    this.blockAt = blockAt;
    this.tree = tree;
    this.nextSlot = k;
  }
}
