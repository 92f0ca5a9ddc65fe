// Entry metadata and per-tier LRU order. Each tier keeps its entries in an intrusive doubly linked
// list in access order (an access moves the entry to the tail), so the least recently used entry is
// the head: O(1) per access without hashing, instead of the reference's sort of a snapshot on every
// eviction (and cheaper than re-inserting into a Map, which dominated trace-mode profiles).
import type { TierName } from '../tiers/backend.js';

export interface EntryMeta {
  readonly key: string;
  tier: TierName;
  readonly size: number;
  /** Monotonic ms of the last access (the reference used wall-clock time, docs/reference-compat.md#rc-11). */
  lastAccess: number;
  accessCount: number;
}

/**
 * An entry and its place in its tier's list: the table hands out the node itself as the EntryMeta, so
 * an access or a move of a meta the caller holds needs no hash lookup (with 100 k+ entries each lookup
 * is a cache miss: a block read made four).
 */
interface Node extends EntryMeta {
  prev: Node | undefined;
  next: Node | undefined;
  /** In the table now (false once removed: a caller may still hold it). */
  listed: boolean;
}

class TierList {
  head: Node | undefined;
  tail: Node | undefined;
  count = 0;
  bytes = 0;

  append(n: Node): void {
    n.prev = this.tail;
    n.next = undefined;
    if (this.tail !== undefined) this.tail.next = n;
    else this.head = n;
    this.tail = n;
    this.count++;
    this.bytes += n.size;
  }

  unlink(n: Node): void {
    if (n.prev !== undefined) n.prev.next = n.next;
    else this.head = n.next;
    if (n.next !== undefined) n.next.prev = n.prev;
    else this.tail = n.prev;
    n.prev = undefined;
    n.next = undefined;
    this.count--;
    this.bytes -= n.size;
  }
}

export class EntryTable {
  private readonly byKey = new Map<string, Node>();
  private readonly tiers = new Map<TierName, TierList>();

  constructor(tiers: readonly TierName[]) {
    for (const t of tiers) this.tiers.set(t, new TierList());
  }

  get(key: string): EntryMeta | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Adds a copy of `meta` (get() returns the table's own). */
  insert(meta: EntryMeta): void {
    if (this.byKey.has(meta.key)) throw new Error(`entry '${meta.key}' already exists`);
    const { key, tier, size, lastAccess, accessCount } = meta;
    const node: Node = { key, tier, size, lastAccess, accessCount, prev: undefined, next: undefined, listed: true };
    this.byKey.set(key, node);
    this.list(tier).append(node);
  }

  remove(key: string): EntryMeta | undefined {
    const node = this.byKey.get(key);
    if (node === undefined) return undefined;
    this.byKey.delete(key);
    this.list(node.tier).unlink(node);
    node.listed = false;
    return node;
  }

  /** Marks an access: most recently used in its tier. */
  touch(meta: EntryMeta, now: number): void {
    meta.lastAccess = now;
    meta.accessCount++;
    this.refresh(meta);
  }

  /** Makes an entry the most recently used in its tier without counting an access (nothing if it is no longer in the table). */
  refresh(meta: EntryMeta): void {
    const node = this.nodeOf(meta);
    if (node === undefined) return;
    const list = this.list(node.tier);
    if (list.tail === node) return;
    list.unlink(node);
    list.append(node);
  }

  /** Moves an entry to another tier, keeping its recency (it becomes the newest there). */
  move(meta: EntryMeta, to: TierName): void {
    const node = this.nodeOf(meta);
    if (node === undefined) throw new Error(`entry '${meta.key}' is not in the table`);
    this.list(node.tier).unlink(node);
    node.tier = to;
    this.list(to).append(node);
  }

  /** Entries of a tier, least recently used first. */
  *lruOrder(tier: TierName): IterableIterator<EntryMeta> {
    for (let n = this.list(tier).head; n !== undefined; n = n.next) yield n;
  }

  count(tier: TierName): number {
    return this.list(tier).count;
  }

  /** Sum of the sizes of the entries that live in `tier` (excludes reservations in flight). */
  residentBytes(tier: TierName): number {
    return this.list(tier).bytes;
  }

  *keysIn(tier: TierName): IterableIterator<string> {
    for (const m of this.lruOrder(tier)) yield m.key;
  }

  /** The table's node of `meta` when it is one and still listed, else the one listed under its key. */
  private nodeOf(meta: EntryMeta): Node | undefined {
    const node = meta as Partial<Node>;
    if (node.listed === true) return node as Node;
    return this.byKey.get(meta.key);
  }

  private list(tier: TierName): TierList {
    const l = this.tiers.get(tier);
    if (l === undefined) throw new Error(`unknown tier '${tier}'`);
    return l;
  }
}
