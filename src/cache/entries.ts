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

interface Node {
  readonly meta: EntryMeta;
  prev: Node | undefined;
  next: Node | undefined;
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
    this.bytes += n.meta.size;
  }

  unlink(n: Node): void {
    if (n.prev !== undefined) n.prev.next = n.next;
    else this.head = n.next;
    if (n.next !== undefined) n.next.prev = n.prev;
    else this.tail = n.prev;
    n.prev = undefined;
    n.next = undefined;
    this.count--;
    this.bytes -= n.meta.size;
  }
}

export class EntryTable {
  private readonly byKey = new Map<string, Node>();
  private readonly tiers = new Map<TierName, TierList>();

  constructor(tiers: readonly TierName[]) {
    for (const t of tiers) this.tiers.set(t, new TierList());
  }

  get(key: string): EntryMeta | undefined {
    return this.byKey.get(key)?.meta;
  }

  get size(): number {
    return this.byKey.size;
  }

  insert(meta: EntryMeta): void {
    if (this.byKey.has(meta.key)) throw new Error(`entry '${meta.key}' already exists`);
    const node: Node = { meta, prev: undefined, next: undefined };
    this.byKey.set(meta.key, node);
    this.list(meta.tier).append(node);
  }

  remove(key: string): EntryMeta | undefined {
    const node = this.byKey.get(key);
    if (node === undefined) return undefined;
    this.byKey.delete(key);
    this.list(node.meta.tier).unlink(node);
    return node.meta;
  }

  /** Marks an access: most recently used in its tier. */
  touch(meta: EntryMeta, now: number): void {
    meta.lastAccess = now;
    meta.accessCount++;
    this.refresh(meta);
  }

  /** Makes an entry the most recently used in its tier without counting an access. */
  refresh(meta: EntryMeta): void {
    const node = this.byKey.get(meta.key);
    if (node === undefined) return;
    const list = this.list(meta.tier);
    if (list.tail === node) return;
    list.unlink(node);
    list.append(node);
  }

  /** Moves an entry to another tier, keeping its recency (it becomes the newest there). */
  move(meta: EntryMeta, to: TierName): void {
    const node = this.byKey.get(meta.key);
    if (node === undefined) throw new Error(`entry '${meta.key}' is not in the table`);
    this.list(meta.tier).unlink(node);
    meta.tier = to;
    this.list(to).append(node);
  }

  /** Entries of a tier, least recently used first. */
  *lruOrder(tier: TierName): IterableIterator<EntryMeta> {
    for (let n = this.list(tier).head; n !== undefined; n = n.next) yield n.meta;
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

  private list(tier: TierName): TierList {
    const l = this.tiers.get(tier);
    if (l === undefined) throw new Error(`unknown tier '${tier}'`);
    return l;
  }
}
