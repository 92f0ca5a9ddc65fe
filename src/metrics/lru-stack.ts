// The LRU stack of a byte-limited cache, for stack distances (`kv-cache size`, docs/sizing.md): every
// block ever referenced keeps a place in one recency order, newest on top. The stack distance of a
// block is the bytes of the blocks above it plus its own: an LRU cache of C bytes that evicts from the
// bottom only as far as it must holds exactly the blocks whose distance is ≤ C (docs/sizing.md says
// when that is the run's cache), so one distance answers "is it cached?" for every capacity at once.
//
// Blocks are small integer ids (a caller numbers its keys 0, 1, 2, …; `idOf` does it for key strings),
// so the hot path indexes arrays and looks nothing up. Places are time slots: a reference takes the
// next slot, and a Fenwick tree over the slots sums the sizes of the blocks whose latest reference is
// at or after a slot — the bytes above a block — in O(log n). Only nodes up to the top slot are kept:
// queries read nothing above it, so a new top node is made from its children when its slot is taken
// (amortised O(1)) and a block leaving its slot updates the nodes up to the top only. When the slots
// run out they are renumbered in order (the blocks' order is kept, the holes left by re-referenced
// blocks dropped), so memory stays linear in distinct blocks, not references. Sums are of whole byte
// counts below 2^53, so they are exact in doubles.

/** Fewest slots kept; slots grow to twice the distinct blocks at each renumbering. */
const MIN_SLOTS = 1024;

export class LruStack {
  /** Keys numbered by `idOf`, for callers whose keys are not numbers already. */
  private readonly ids = new Map<string | number, number>();
  /** Per block id: its slot (−1 before its first reference) and its bytes. */
  private slotOf = new Int32Array(MIN_SLOTS).fill(-1);
  private bytesOf = new Float64Array(MIN_SLOTS);
  /** Per slot: the block whose latest reference it holds, or −1. */
  private blockAt = new Int32Array(MIN_SLOTS).fill(-1);
  /** Fenwick tree over slots (1-based): bytes per slot; nodes above `nextSlot` are not kept. */
  private tree = new Float64Array(MIN_SLOTS + 1);
  private nextSlot = 0;
  private totalBytes = 0;
  private referenced = 0;

  /** Distinct blocks referenced. */
  get distinct(): number {
    return this.referenced;
  }

  /** Bytes of every distinct block (each at its latest size): the capacity past which nothing more is evicted. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** The id of a block key, a new one (the next unused number) for a key not seen before. */
  idOf(key: string | number): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }

  /** The block's stack distance in bytes (bytes above it plus its own); Infinity before its first reference. */
  distance(id: number): number {
    const slot = id < this.slotOf.length ? this.slotOf[id] : -1;
    if (slot < 0) return Infinity;
    const tree = this.tree;
    let below = 0;
    for (let i = slot; i > 0; i -= i & -i) below += tree[i];
    return this.totalBytes - below;
  }

  /** References the block (an integer ≥ 0): it goes on top of the stack, with `bytes` as its size from now on. */
  touch(id: number, bytes: number): void {
    if (id >= this.slotOf.length) this.growIds(id);
    const old = this.slotOf[id];
    if (old >= 0) {
      const was = this.bytesOf[id];
      if (old === this.nextSlot - 1 && was === bytes) return; // already on top
      const tree = this.tree;
      const top = this.nextSlot;
      for (let i = old + 1; i <= top; i += i & -i) tree[i] -= was;
      this.blockAt[old] = -1;
      this.totalBytes -= was;
    } else this.referenced++;
    if (this.nextSlot === this.blockAt.length) this.renumber();
    const slot = this.nextSlot++;
    // The new top node: its own bytes plus its children's sums (nodes i − 1, i − 2, i − 4, … below its low bit).
    const tree = this.tree;
    const node = slot + 1;
    const low = node & -node;
    let sum = bytes;
    for (let k = 1; k < low; k <<= 1) sum += tree[node - k];
    tree[node] = sum;
    this.blockAt[slot] = id;
    this.slotOf[id] = slot;
    this.bytesOf[id] = bytes;
    this.totalBytes += bytes;
  }

  private growIds(id: number): void {
    let n = this.slotOf.length * 2;
    while (n <= id) n *= 2;
    const slotOf = new Int32Array(n).fill(-1);
    slotOf.set(this.slotOf);
    this.slotOf = slotOf;
    const bytesOf = new Float64Array(n);
    bytesOf.set(this.bytesOf);
    this.bytesOf = bytesOf;
  }

  /**
   * Renumbers the occupied slots 0 … k − 1 in order and rebuilds the tree up to slot k, in O(slots).
   * Slots are a power of two from twice the live blocks (2–4 times them), so most renumberings keep
   * their arrays and compact them in place: no new memory to touch, no garbage.
   */
  private renumber(): void {
    let live = 0;
    for (let s = 0; s < this.nextSlot; s++) if (this.blockAt[s] >= 0) live++;
    let size = MIN_SLOTS;
    while (size < 2 * live) size *= 2;
    const tree = size === this.blockAt.length ? this.tree : new Float64Array(size + 1);
    const blockAt = this.blockAt;
    let k = 0;
    for (let s = 0; s < this.nextSlot; s++) {
      const id = blockAt[s];
      if (id < 0) continue;
      blockAt[k] = id;
      this.slotOf[id] = k;
      tree[k + 1] = this.bytesOf[id];
      k++;
    }
    tree.fill(0, k + 1);
    if (size === blockAt.length) blockAt.fill(-1, k);
    else {
      this.blockAt = new Int32Array(size).fill(-1);
      this.blockAt.set(blockAt.subarray(0, k));
      this.tree = tree;
    }
    // Linear Fenwick build: each node passes its sum to its parent (nodes above k are made when taken).
    for (let i = 1; i <= k; i++) {
      const parent = i + (i & -i);
      if (parent <= k) tree[parent] += tree[i];
    }
    this.nextSlot = k;
  }
}
