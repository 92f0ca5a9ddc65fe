// Entry metadata and per-tier LRU order. Each tier keeps its entries in a Map whose insertion order
// is the access order (an access re-inserts the key), so the least recently used entry is the first
// key: O(1) per access instead of the reference's sort of a snapshot on every eviction.
import type { TierName } from '../tiers/backend.js';

export interface EntryMeta {
  readonly key: string;
  tier: TierName;
  readonly size: number;
  /** Monotonic ms of the last access (the reference used wall-clock time, spec §11.9). */
  lastAccess: number;
  accessCount: number;
}

export class EntryTable {
  private readonly byKey = new Map<string, EntryMeta>();
  private readonly lru = new Map<TierName, Map<string, EntryMeta>>();
  private readonly resident = new Map<TierName, number>();

  constructor(tiers: readonly TierName[]) {
    for (const t of tiers) {
      this.lru.set(t, new Map());
      this.resident.set(t, 0);
    }
  }

  get(key: string): EntryMeta | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  insert(meta: EntryMeta): void {
    if (this.byKey.has(meta.key)) throw new Error(`entry '${meta.key}' already exists`);
    this.byKey.set(meta.key, meta);
    this.tierMap(meta.tier).set(meta.key, meta);
    this.resident.set(meta.tier, this.residentBytes(meta.tier) + meta.size);
  }

  remove(key: string): EntryMeta | undefined {
    const meta = this.byKey.get(key);
    if (meta === undefined) return undefined;
    this.byKey.delete(key);
    this.tierMap(meta.tier).delete(key);
    this.resident.set(meta.tier, this.residentBytes(meta.tier) - meta.size);
    return meta;
  }

  /** Marks an access: most recently used in its tier. */
  touch(meta: EntryMeta, now: number): void {
    meta.lastAccess = now;
    meta.accessCount++;
    const m = this.tierMap(meta.tier);
    m.delete(meta.key);
    m.set(meta.key, meta);
  }

  /** Moves an entry to another tier, keeping its recency (it becomes the newest there). */
  move(meta: EntryMeta, to: TierName): void {
    this.tierMap(meta.tier).delete(meta.key);
    this.resident.set(meta.tier, this.residentBytes(meta.tier) - meta.size);
    meta.tier = to;
    this.tierMap(to).set(meta.key, meta);
    this.resident.set(to, this.residentBytes(to) + meta.size);
  }

  /** Entries of a tier, least recently used first. */
  lruOrder(tier: TierName): IterableIterator<EntryMeta> {
    return this.tierMap(tier).values();
  }

  count(tier: TierName): number {
    return this.tierMap(tier).size;
  }

  /** Sum of the sizes of the entries that live in `tier` (excludes reservations in flight). */
  residentBytes(tier: TierName): number {
    return this.resident.get(tier) ?? 0;
  }

  keysIn(tier: TierName): IterableIterator<string> {
    return this.tierMap(tier).keys();
  }

  private tierMap(tier: TierName): Map<string, EntryMeta> {
    const m = this.lru.get(tier);
    if (m === undefined) throw new Error(`unknown tier '${tier}'`);
    return m;
  }
}
