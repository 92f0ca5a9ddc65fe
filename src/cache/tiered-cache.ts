// The tiered KV cache (docs/reference-compat.md#rc-10): new entries go to the fastest tier with room, older entries
// are demoted down the waterfall GPU → CPU → storage by LRU, and the last tier deletes. No promotion
// on a hit. Per-key locks (withKeyLock) make concurrent async operations on one key safe. What each
// event counts is the recorder's business: the cache reports it with one record* call, once the
// operation has completed (or failed, or been cut short by the end of the run).
//
// A tier's limit is hard: the bytes its entries take on the medium (Backend.allocatedBytes: whole
// blocks, whole pages), entries being written or demoted into it included, never exceed it. Room is
// reserved before a write starts, and victims are deleted (their deletes finished) before that. A new
// entry no tier can make room for is refused (recordAllocationRefused), never written over the limit;
// when the last tier is out of victims only because other operations are in flight there, the
// allocation waits for one of them to finish and tries again.
//
// Operations are step functions (util/steps.ts): they run synchronously until something really has
// to wait (a lock held by someone else, a tier's I/O), so with immediate tiers (trace mode) a whole
// operation completes without a promise. The *Steps methods are for callers that are step functions
// themselves (the request pipeline); allocate/access/delete wrap them in a promise for everyone else.
import type { CacheType, Phase } from '../model/kv-access.js';
import { entrySizeOf } from '../model/models.js';
import { AlreadyPublishedError, EntryNotFoundError, IoAbortedError } from '../tiers/backend.js';
import type { PoolAccess } from '../tiers/backend.js';
import type { PoolOrigin } from '../tiers/pool-names.js';
import { failureClassOf } from '../metrics/recorder.js';
import type { FailedOperation, FailureClass } from '../metrics/recorder.js';
import type { Backend, IOTiming, ReadResult, TierName } from '../tiers/backend.js';
import type { ChunkSource } from '../data/chunk-source.js';
import type { Recorder } from '../metrics/recorder.js';
import type { Clock } from '../util/clock.js';
import { KeyedRwLock, Semaphore } from '../util/lock.js';
import type { LockMode } from '../util/lock.js';
import { EntryTable } from './entries.js';
import { TierUsage } from './tier-usage.js';
import type { EntryMeta } from './entries.js';
import { CopyFailedError, copyEntry, copyNow } from './entry-copy.js';
import type { CopyResult } from './entry-copy.js';
import { settle } from '../util/steps.js';
import { DEFAULT_EVICTION } from '../settings/eviction.js';
import type { EvictionConfig } from '../settings/eviction.js';
import type { Steps } from '../util/steps.js';

/** The I/O trace's phase names (docs/reference-compat.md#rc-21), plus Delete for entries removed from the last tier. */
export type IoPhase = 'Prefill' | 'Decode' | 'Both' | 'Evict';

export interface IoEvent {
  readonly op: 'Write' | 'Read' | 'Delete';
  readonly tier: TierName;
  readonly key: string;
  readonly size: number;
  readonly phase: IoPhase;
}

export interface CacheTier {
  readonly backend: Backend;
  /** Capacity in bytes; Infinity for an unlimited last tier. */
  readonly limitBytes: number;
}

/** Below this share of its limit a tier accepts any entry without evicting ("near empty, trust it"). */
const NEAR_EMPTY_RATIO = 0.05;

export interface CacheOptions {
  /** Fastest first; the last one is the terminal tier that deletes. */
  readonly tiers: readonly CacheTier[];
  readonly bytesPerToken: number;
  readonly tensorParallel?: number;
  /** The bytes of a new entry. */
  readonly payload: (key: string, size: number) => ChunkSource;
  readonly recorder: Recorder;
  readonly clock: Clock;
  readonly eviction?: Partial<EvictionConfig>;
  /** Bounds concurrent allocations (--max-concurrent-allocs); absent = unlimited. */
  readonly allocSemaphore?: Semaphore;
  /** Sees every placement write, hit read, demotion and deletion (the I/O trace). */
  readonly observer?: (e: IoEvent) => void;
  /** Told of every failed tier operation, after it was recorded (the run stops on a full storage tier). */
  readonly onFailure?: (f: TierFailure) => void;
}

/** A failed tier operation, as the cache reports it to `onFailure`. */
export interface TierFailure {
  readonly tier: TierName;
  readonly operation: FailedOperation;
  readonly error: FailureClass;
  readonly cause: unknown;
}

export interface AllocateResult {
  readonly ok: boolean;
  /** This call wrote the entry (false: it existed already, or was not written). */
  readonly wrote: boolean;
  readonly tier: TierName | null;
  readonly latencyMs: number;
}

export interface AccessResult {
  readonly tier: TierName | null;
  readonly latencyMs: number;
  /** A hit's bytes (the entry read); absent on a miss. */
  readonly size?: number;
}

/** A block lookup's result (lookupSteps): where it was read, and in a shared pool who published it. */
export interface LookupResult extends AccessResult {
  /** Absent unless the block was read from a shared pool. */
  readonly origin?: PoolOrigin;
}

const MISS: AccessResult = Object.freeze({ tier: null, latencyMs: 0 });

function ioPhase(p: Phase): IoPhase {
  return p === 'prefill' ? 'Prefill' : p === 'decode' ? 'Decode' : 'Both';
}

export class TieredCache {
  readonly order: readonly TierName[];
  readonly entries: EntryTable;
  /** Room, peaks, operations in flight and waiters per tier: the bookkeeping the algorithm below consults. */
  private readonly usage: TierUsage;
  private stopping = false;
  private readonly locks = new KeyedRwLock();
  /** Victims chosen by an eviction whose move or delete has not finished, with the tier they leave. */
  private readonly moving = new Map<string, TierName>();
  private readonly ev: EvictionConfig;
  private readonly tokenBytes: number;
  /**
   * Every tier completes its operations synchronously (trace mode): no operation can interleave with
   * another, so per-key locks are skipped (they were a fifth of trace-mode CPU).
   */
  private readonly synchronous: boolean;
  /** The last tier's shared pool (--kv-pool shared): the storage itself is the index of what it holds. */
  private readonly pool: { readonly access: PoolAccess; readonly tier: TierName } | undefined;

  constructor(private readonly opts: CacheOptions) {
    if (opts.tiers.length === 0) throw new RangeError('a cache needs at least one tier');
    this.order = opts.tiers.map((t) => t.backend.tier);
    if (new Set(this.order).size !== this.order.length) throw new RangeError('tier names must be distinct');
    this.usage = new TierUsage(opts.tiers);
    this.entries = new EntryTable(this.order);
    this.synchronous = opts.tiers.every((t) => t.backend.immediate !== undefined);
    this.ev = { ...DEFAULT_EVICTION, ...opts.eviction };
    this.tokenBytes = opts.bytesPerToken / (opts.tensorParallel ?? 1);
    const last = opts.tiers[opts.tiers.length - 1]?.backend;
    this.pool = last?.pool !== undefined ? { access: last.pool, tier: last.tier } : undefined;
  }

  /** Whether the last tier is a shared pool. */
  get pooled(): boolean {
    return this.pool !== undefined;
  }

  limitBytes(tier: TierName): number {
    return this.usage.limitBytes(tier);
  }

  /** Bytes reserved in `tier` (entries plus in-flight writes/demotions). Equals resident bytes when idle. */
  usedBytes(tier: TierName): number {
    return this.usage.usedBytes(tier);
  }

  /** Tier operations in flight now: placement writes, demotions (each counted once) and hit reads. */
  operationsInFlight(): number {
    return this.usage.operationsInFlight();
  }

  /** usedBytes as the medium counts them (whole blocks or pages): what the tier's limit bounds. */
  allocatedBytes(tier: TierName): number {
    return this.usage.allocatedBytes(tier);
  }

  /** The highest allocatedBytes(tier) so far. */
  peakAllocatedBytes(tier: TierName): number {
    return this.usage.peakAllocatedBytes(tier);
  }

  backend(tier: TierName): Backend {
    return this.usage.backend(tier);
  }

  /** Counts `n` misses without looking anything up (block lookups stop at the first missing block). */
  countMisses(n: number): void {
    for (let i = 0; i < n; i++) this.opts.recorder.recordMiss();
  }

  /** Bytes of an entry of `tokens` tokens (what allocate writes). */
  sizeOf(tokens: number): number {
    return entrySizeOf(this.opts.bytesPerToken, tokens, this.opts.tensorParallel);
  }

  /** Bytes of the entry `key`, if cached. */
  sizeOfEntry(key: string): number | undefined {
    return this.entries.get(key)?.size;
  }

  /** Where `key` lives, without counting a hit or a miss. */
  locate(key: string): TierName | null {
    return this.entries.get(key)?.tier ?? null;
  }

  /**
   * Marks `key` most recently used without counting an access. Called for a block chain from its tail
   * to its head, it keeps the head newest, so LRU evicts a chain from its tail, as engines do (vLLM
   * frees a request's blocks tail first): evicting the head would orphan every block after it.
   */
  keepRecent(key: string): void {
    const meta = this.entries.get(key);
    if (meta !== undefined) this.entries.refresh(meta);
  }

  /** Writes a new entry of `tokens` tokens; an existing key is left as is (no write, latency 0). */
  allocate(key: string, tokens: number, phase: Phase = 'prefill'): Promise<AllocateResult> {
    return settle(this.allocateSteps(key, tokens, phase));
  }

  /** allocate() as a step function. */
  *allocateSteps(key: string, tokens: number, phase: Phase = 'prefill'): Steps<AllocateResult> {
    const existing = this.entries.get(key);
    if (existing !== undefined) return { ok: true, wrote: false, tier: existing.tier, latencyMs: 0 };
    const place = this.withKeyLock(key, this.placeSteps(key, tokens, phase));
    const sem = this.opts.allocSemaphore;
    if (sem === undefined) return yield* place;
    if (!sem.tryAcquire()) yield sem.acquire();
    try {
      return yield* place;
    } finally {
      sem.release();
    }
  }

  /** Writes a new entry to the fastest tier that makes room for it. Under the key's lock. */
  private *placeSteps(key: string, tokens: number, phase: Phase): Steps<AllocateResult> {
    const existing = this.entries.get(key);
    if (existing !== undefined) return { ok: true, wrote: false, tier: existing.tier, latencyMs: 0 };
    const rec = this.opts.recorder;
    const size = entrySizeOf(this.opts.bytesPerToken, tokens, this.opts.tensorParallel);

    let tier: TierName | undefined;
    for (let i = 0; i < this.order.length && tier === undefined; i++) {
      if (yield* this.ensureSpaceSteps(i, size, 0)) tier = this.order[i];
    }
    if (tier === undefined) {
      // No tier can hold it within its limit: refused, not written (at the end of the run: just not started).
      if (!this.stopping) rec.recordAllocationRefused(size);
      return { ok: false, wrote: false, tier: null, latencyMs: 0 };
    }

    const backend = this.backend(tier);
    let t: IOTiming;
    this.usage.landing(tier);
    try {
      const now = backend.immediate;
      t = now !== undefined ? now.writeNow(key, size) : ((yield backend.write(key, this.opts.payload(key, size))) as IOTiming);
    } catch (e) {
      this.usage.landed(tier);
      this.usage.release(tier, size);
      if (e instanceof AlreadyPublishedError) {
        // Published by another server first: in the pool, not ours (never evicted or deleted by us).
        rec.recordPublishRace(tier, e.bytes);
        return { ok: true, wrote: false, tier, latencyMs: e.timing.totalMs };
      }
      if (e instanceof IoAbortedError) rec.recordPlacementStopped(tier, e.bytes);
      else this.failed(tier, 'placement_write', e);
      return { ok: false, wrote: false, tier: null, latencyMs: 0 };
    }
    this.usage.landed(tier);
    this.entries.insert({ key, tier, size, lastAccess: this.opts.clock.now(), accessCount: 1 });
    this.usage.notifySpace(tier); // a new victim for allocations waiting here
    rec.recordPlacement(tier, size, tokens, t, phase === 'prefill');
    if (tier === this.pool?.tier) rec.pool.recordPublished(size);
    this.opts.observer?.({ op: 'Write', tier, key, size, phase: ioPhase(phase) });
    return { ok: true, wrote: true, tier, latencyMs: t.totalMs };
  }

  /** Tokens a resident entry holds (its size ÷ bytes per token on this rank); undefined when not cached. */
  entryTokens(key: string): number | undefined {
    const meta = this.entries.get(key);
    return meta === undefined ? undefined : Math.round(meta.size / this.tokenBytes);
  }

  /** Reads the whole entry from the tier it lives in; a missing key is a miss (latency 0). */
  access(key: string, phase: Phase = 'decode', type: CacheType = 'user'): Promise<AccessResult> {
    return settle(this.accessSteps(key, phase, type));
  }

  /** access() as a step function. */
  accessSteps(key: string, phase: Phase = 'decode', type: CacheType = 'user'): Steps<AccessResult> {
    // Under the key's lock, a key being written right now is waited for rather than missed: a reader
    // of an entry whose prefill is in flight gets it when the write lands, whatever the timing.
    return this.readSteps(key, phase, type, !this.synchronous);
  }

  /**
   * One block of a chain lookup (block-pipeline.ts). Without a shared pool: accessSteps. With one, a
   * block in this server's own GPU or CPU tier is read there; any other is looked up in the pool
   * through the storage (`check`: an existence check, timed as a lookup; a decode re-read skips it)
   * and read from it if found — whoever published it. A block gone between lookup and read is a miss.
   */
  lookupSteps(key: string, tokens: number, phase: Phase, type: CacheType, check = true): Steps<LookupResult> {
    // accessSteps itself, not a generator around it: this runs once per block read.
    const pool = this.pool;
    if (pool === undefined) return this.accessSteps(key, phase, type);
    const own = this.entries.get(key);
    if (own !== undefined && own.tier !== pool.tier) return this.accessSteps(key, phase, type);
    return this.pooledLookupSteps(pool, own, key, tokens, phase, type, check);
  }

  /** lookupSteps of a block that may be in the shared pool (`own`: this server's entry of it in the pool's tier, if any). */
  private *pooledLookupSteps(
    pool: { readonly access: PoolAccess; readonly tier: TierName },
    own: EntryMeta | undefined,
    key: string,
    tokens: number,
    phase: Phase,
    type: CacheType,
    check: boolean,
  ): Steps<LookupResult> {
    const rec = this.opts.recorder;
    let lookupMs = 0;
    let publishedAtMs = 0;
    let size = own?.size ?? this.sizeOf(tokens);
    if (check) {
      const probe = (yield pool.access.lookup(key)) as Awaited<ReturnType<PoolAccess['lookup']>>;
      rec.pool.recordLookup(probe.timing, probe.found);
      lookupMs = probe.timing.totalMs;
      if (!probe.found) {
        if (own !== undefined) this.forgetLost(key);
        rec.recordMiss();
        return { tier: null, latencyMs: lookupMs };
      }
      publishedAtMs = probe.publishedAtMs;
      size = probe.size;
    }
    if (this.entries.get(key) !== undefined) {
      const r = yield* this.accessSteps(key, phase, type);
      return { ...r, latencyMs: r.latencyMs + lookupMs, ...(r.tier !== null ? { origin: 'own' as const } : {}) };
    }
    const r = yield* this.withKeyLock(key, this.readPublishedSteps(pool, key, size, phase, type), 'shared');
    const origin: PoolOrigin = publishedAtMs < pool.access.openedAtMs ? 'earlier_run' : 'other_rank';
    return { ...r, latencyMs: r.latencyMs + lookupMs, ...(r.tier !== null && check ? { origin } : {}) };
  }

  /** A block another writer published, read from the pool; gone meanwhile: a miss (counted as vanished). */
  private *readPublishedSteps(
    pool: { readonly access: PoolAccess; readonly tier: TierName },
    key: string,
    size: number,
    phase: Phase,
    type: CacheType,
  ): Steps<AccessResult> {
    const rec = this.opts.recorder;
    let r: ReadResult;
    this.usage.readStarted();
    try {
      r = (yield pool.access.readPublished(key, size)) as ReadResult;
    } catch (e) {
      if (e instanceof EntryNotFoundError) rec.pool.recordVanished();
      else this.failed(pool.tier, 'hit_read', e);
      rec.recordMiss();
      return MISS;
    } finally {
      this.usage.readEnded();
    }
    if (r.bytes < size) {
      rec.recordHitReadStopped(pool.tier, r.bytes);
      return { tier: null, latencyMs: r.timing.totalMs };
    }
    rec.recordHitRead(pool.tier, size, size / this.tokenBytes, type, phase === 'decode', r.timing);
    this.opts.observer?.({ op: 'Read', tier: pool.tier, key, size, phase: ioPhase(phase) });
    return { tier: pool.tier, latencyMs: r.timing.totalMs, size };
  }

  /** One of this server's pool blocks is gone (removed by someone else): dropped from its index, its room given back. */
  private forgetLost(key: string): void {
    const meta = this.entries.get(key);
    if (meta === undefined || meta.tier !== this.pool?.tier || this.moving.has(key)) return;
    this.entries.remove(key);
    this.usage.release(meta.tier, meta.size);
    this.opts.recorder.pool.recordLostOwn();
    this.pool.access.forget(key); // never unlinked by us later: the name may be another writer's by then
  }

  /**
   * Reads `key` from its tier: a hit, or a miss if it is not (or no longer) cached. Under the key's
   * shared lock when `lock` (withKeyLock's, taken here: one generator per block read, not two).
   */
  private *readSteps(key: string, phase: Phase, type: CacheType, lock: boolean): Steps<AccessResult> {
    if (lock && !this.locks.tryLock(key, 'shared')) yield this.locks.lock(key, 'shared');
    try {
      const rec = this.opts.recorder;
      const meta = this.entries.get(key);
      if (meta === undefined) {
        rec.recordMiss();
        return MISS;
      }
      this.entries.touch(meta, this.opts.clock.now());
      const backend = this.backend(meta.tier);
      let r: ReadResult;
      try {
        const now = backend.immediate;
        if (now !== undefined) r = now.readNow(key);
        else {
          this.usage.readStarted();
          try {
            r = (yield backend.read(key)) as ReadResult;
          } finally {
            this.usage.readEnded();
          }
        }
      } catch (e) {
        // Served nothing: a failure, and a miss for the request.
        this.failed(meta.tier, 'hit_read', e);
        rec.recordMiss();
        return MISS;
      }
      return this.readDone(meta, phase, type, r);
    } finally {
      if (lock) this.locks.unlock(key, 'shared');
    }
  }

  /** What a read of `meta`'s entry that served `r` counts, and its result. */
  private readDone(meta: EntryMeta, phase: Phase, type: CacheType, r: ReadResult): AccessResult {
    const rec = this.opts.recorder;
    if (r.bytes < meta.size) {
      // Cut short by the end of the run: count the bytes that moved, not a hit or a whole-entry latency.
      rec.recordHitReadStopped(meta.tier, r.bytes);
      return { tier: null, latencyMs: r.timing.totalMs };
    }
    rec.recordHitRead(meta.tier, meta.size, meta.size / this.tokenBytes, type, phase === 'decode', r.timing);
    this.opts.observer?.({ op: 'Read', tier: meta.tier, key: meta.key, size: meta.size, phase: ioPhase(phase) });
    return { tier: meta.tier, latencyMs: r.timing.totalMs, size: meta.size };
  }

  /** Removes an entry wherever it lives (the reference's missing `cache.delete`, docs/reference-compat.md#rc-30). */
  delete(key: string): Promise<boolean> {
    return settle(this.withKeyLock(key, this.deleteSteps(key)));
  }

  /** Under the key's lock. */
  private *deleteSteps(key: string): Steps<boolean> {
    const meta = this.entries.get(key);
    if (meta === undefined) return false;
    if (!(yield* this.removeEntrySteps(meta))) return false;
    this.opts.recorder.recordExplicitDelete(meta.tier, meta.size);
    return true;
  }

  /** The run is over: back-ends stop operations in flight at their next chunk; waiting allocations give up. */
  stopInFlight(): void {
    this.stopping = true;
    for (const b of this.usage.backends) b.stopInFlight?.();
    for (const tier of this.order) this.usage.notifySpace(tier);
  }

  /** After stopInFlight, once the run's operations have ended: what cut-short writes left is removed (Backend.dropStopped). */
  async dropStopped(): Promise<void> {
    for (const b of this.usage.backends) await b.dropStopped?.();
  }

  /**
   * After the run, its results taken: deletes `tier`'s least recently used entries until `bytes` are
   * free under its limit, or none is left, and returns the room then. Nothing is recorded (the window
   * is over, and teardown would delete them anyway); a failed delete stops it, its room still taken.
   */
  async makeRoomAfterRun(tier: TierName, bytes: number): Promise<number> {
    const room = (): number => this.limitBytes(tier) - this.usage.allocatedBytes(tier);
    for (let victim = this.nextVictim(tier); victim !== undefined && room() < bytes; victim = this.nextVictim(tier)) {
      this.entries.remove(victim.key);
      try {
        await this.backend(tier).delete(victim.key);
      } catch {
        break; // its bytes are still on the medium: so is its room
      }
      this.usage.release(tier, victim.size);
    }
    return room();
  }

  /** Closes every backend (their files and buffers); the cache is unusable afterwards. */
  async close(): Promise<void> {
    for (const b of this.usage.backends) await b.close();
  }

  /**
   * `body` run holding `key`'s lock: exclusive (writes, moves, deletes) lets nothing else on the key
   * interleave; shared (hits) lets reads of one entry by several users run at once, as on a real
   * server — an exclusive lock there serialised them and idled the device (users waited on each
   * other's reads, outside every storage timing). With every tier synchronous nothing can
   * interleave: `body` itself is returned, at no cost.
   */
  private withKeyLock<T>(key: string, body: Steps<T>, mode: LockMode = 'exclusive'): Steps<T> {
    return this.synchronous ? body : this.lockedSteps(key, body, mode);
  }

  private *lockedSteps<T>(key: string, body: Steps<T>, mode: LockMode): Steps<T> {
    if (!this.locks.tryLock(key, mode)) yield this.locks.lock(key, mode);
    try {
      return yield* body;
    } finally {
      this.locks.unlock(key, mode);
    }
  }

  /** Records a failed operation and tells the run (which stops on a full storage tier). */
  private failed(tier: TierName, operation: FailedOperation, cause: unknown): void {
    const error = failureClassOf(cause);
    this.opts.recorder.recordFailure(tier, operation, error);
    this.opts.onFailure?.({ tier, operation, error, cause });
  }

  /**
   * Removes an entry from its tier; false if the backend's delete failed. Its room is given back only
   * once the delete has finished; a failed delete keeps it (the bytes are still on the medium).
   */
  private *removeEntrySteps(meta: EntryMeta): Steps<boolean> {
    this.entries.remove(meta.key);
    try {
      yield* this.deleteFrom(meta.tier, meta.key);
    } catch (e) {
      this.failed(meta.tier, 'delete', e);
      return false;
    }
    this.usage.release(meta.tier, meta.size);
    this.opts.observer?.({ op: 'Delete', tier: meta.tier, key: meta.key, size: meta.size, phase: 'Evict' });
    return true;
  }

  /** Deletes `key` from one tier's backend (synchronously if the tier is immediate). */
  private *deleteFrom(tier: TierName, key: string): Steps<void> {
    const backend = this.backend(tier);
    const now = backend.immediate;
    if (now !== undefined) now.deleteNow(key);
    else yield backend.delete(key);
  }

  /** The least recently used entry of `tier` that no other eviction has claimed. */
  private nextVictim(tier: TierName): EntryMeta | undefined {
    for (const meta of this.entries.lruOrder(tier)) if (!this.moving.has(meta.key)) return meta;
    return undefined;
  }

  /**
   * Makes room for `bytes` in the tier at `index` and reserves them, evicting LRU entries (demoting
   * them to the next tier, or deleting them from the last). False: the entry should try the next tier.
   */
  private *ensureSpaceSteps(index: number, bytes: number, depth: number): Steps<boolean> {
    const tier = this.order[index];
    const limit = this.limitBytes(tier);
    const isLast = index === this.order.length - 1;
    if (limit === Infinity) {
      this.usage.reserve(tier, bytes);
      return true;
    }
    const need = this.usage.footprint(tier, bytes);
    if (depth > this.ev.maxRecursionDepth || need > limit) return false;
    if (!isLast && (limit <= 0 || bytes > limit * this.ev.largeEntryLimitRatio)) return false;
    const target = isLast ? limit : limit * this.ev.targetUsageRatio;
    const budget = Math.min(this.ev.maxEvictionsHardCap, Math.max(this.ev.maxEvictionsMin, this.entries.count(tier) + 100));

    for (let evicted = 0; !this.stopping;) {
      const used = this.usage.allocatedBytes(tier);
      // Within the target, or a near-empty tier taking any entry that fits: never past the limit.
      if (used + need <= target || (used < limit * NEAR_EMPTY_RATIO && used + need <= limit)) {
        this.usage.reserve(tier, bytes);
        return true;
      }
      // A mostly empty upper tier should not be churned for one huge entry: let it go lower.
      if (evicted === 0 && !isLast && this.entries.residentBytes(tier) < 0.2 * limit && bytes > 0.5 * target) return false;
      if (evicted >= budget) return false;
      const victim = this.nextVictim(tier);
      if (victim === undefined) {
        // The last tier's room is held by operations in flight (writes, other evictions): it comes
        // back, or becomes an evictable entry, when one of them ends. Upper tiers let the entry go lower.
        if (!isLast || !this.roomPending(tier)) return false;
        yield this.usage.spaceChange(tier);
        continue;
      }
      evicted++;
      this.moving.set(victim.key, tier);
      try {
        if (isLast) yield* this.withKeyLock(victim.key, this.deleteVictimSteps(victim.key, tier));
        // A demotion makes room below first (which may cascade further down), then moves the victim.
        else if (!(yield* this.ensureSpaceSteps(index + 1, victim.size, depth + 1))) return false;
        else if (!(yield* this.withKeyLock(victim.key, this.demoteVictimSteps(victim, index)))) return false;
      } finally {
        this.moving.delete(victim.key);
        this.usage.notifySpace(tier); // the victim is evictable again if it did not go
      }
    }
    return false;
  }

  /** Whether room in `tier` may come back without this allocation doing anything: operations in flight there. */
  private roomPending(tier: TierName): boolean {
    if (this.synchronous) return false; // nothing is ever in flight
    if (this.usage.inFlightTo(tier) > 0) return true;
    for (const from of this.moving.values()) if (from === tier) return true;
    return false;
  }

  /** Deletes the victim `key` from the last tier. Under the key's lock. */
  private *deleteVictimSteps(key: string, tier: TierName): Steps<void> {
    const meta = this.entries.get(key);
    if (meta?.tier !== tier) return; // gone or moved meanwhile
    if (yield* this.removeEntrySteps(meta)) this.opts.recorder.recordEvictionDelete(tier, meta.size);
  }

  /**
   * Moves `victim` from the tier at `index` to the next one, where its room is reserved: copies it,
   * then deletes it above. False if the copy failed. Under the victim's lock.
   */
  private *demoteVictimSteps(victim: EntryMeta, index: number): Steps<boolean> {
    const from = this.order[index];
    const to = this.order[index + 1];
    const meta = this.entries.get(victim.key);
    if (meta?.tier !== from) {
      this.usage.release(to, victim.size); // moot demotion: give back the room reserved below (docs/reference-compat.md#rc-13)
      return true;
    }
    const rec = this.opts.recorder;
    const src = this.backend(from);
    const dst = this.backend(to);
    let copy: CopyResult;
    this.usage.landing(to);
    try {
      copy =
        src.immediate !== undefined && dst.immediate !== undefined
          ? copyNow(src.immediate, dst.immediate, meta.key)
          : ((yield copyEntry(src, dst, meta.key, meta.size)) as CopyResult);
    } catch (e) {
      this.usage.landed(to);
      if (e instanceof CopyFailedError && e.cause instanceof AlreadyPublishedError) {
        // Another server published it first: the pool has it, not as ours; it leaves this server's tiers.
        this.usage.release(to, meta.size);
        rec.recordPublishRace(to, e.cause.bytes);
        try {
          yield* this.deleteFrom(from, meta.key);
        } catch (d) {
          this.failed(from, 'delete', d); // its bytes stay above: so does its room, and the entry
          return true;
        }
        this.entries.remove(meta.key);
        this.usage.release(from, meta.size);
        return true;
      }
      try {
        yield* this.deleteFrom(to, meta.key);
      } catch {
        // the copy failed already; a leftover at the destination is not worth a second error
      }
      this.usage.release(to, meta.size);
      if (e instanceof IoAbortedError) rec.recordDemotionStopped(from, to, e.bytes);
      else if (e instanceof CopyFailedError) this.failed(e.side === 'read' ? from : to, `demote_${e.side}`, e.cause);
      else this.failed(to, 'demote_write', e);
      return false;
    }
    this.usage.landed(to);
    try {
      yield* this.deleteFrom(from, meta.key);
    } catch (e) {
      // Both copies exist; the upper one's room stays taken (its bytes are still there), the entry lives below.
      this.failed(from, 'delete', e);
      this.entries.move(meta, to);
      return true;
    }
    this.entries.move(meta, to);
    this.usage.release(from, meta.size);
    rec.recordDemotion(from, to, meta.size, meta.size / this.tokenBytes, copy.read, copy.write);
    if (to === this.pool?.tier) rec.pool.recordPublished(meta.size);
    this.opts.observer?.({ op: 'Read', tier: from, key: meta.key, size: meta.size, phase: 'Evict' });
    this.opts.observer?.({ op: 'Write', tier: to, key: meta.key, size: meta.size, phase: 'Evict' });
    return true;
  }
}
