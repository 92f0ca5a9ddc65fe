// The cache's bookkeeping per tier, apart from its algorithm (tiered-cache.ts): the bytes reserved in
// each tier and what they take on the medium (checked against the tier's limit), the peak, the writes
// and demotions in flight into it, the hit reads in flight, and the allocations waiting for its room
// to change. One mutable record per tier, found with one map lookup: the hot path allocates nothing.
import type { Backend, TierName } from '../tiers/backend.js';

interface TierState {
  readonly backend: Backend;
  /** Capacity in bytes; Infinity for an unlimited last tier. */
  readonly limit: number;
  /** Resident entries plus writes and demotions in flight. */
  reserved: number;
  /** The same reservations in bytes taken on the medium (Backend.allocatedBytes): what the limit is checked against. */
  allocated: number;
  /** Highest `allocated` since the start. */
  peak: number;
  /** Writes and demotions in flight into the tier: their room comes back, or becomes an evictable entry. */
  inFlight: number;
  /** Allocations waiting for room, woken when its room or its victims change. */
  waiters: Array<() => void>;
}

export class TierUsage {
  private readonly tiers = new Map<TierName, TierState>();
  /** Hit reads in flight (any tier): with the writes and demotions, what operationsInFlight() reports. */
  private readsInFlight = 0;
  private readonly backendList: readonly Backend[];

  constructor(tiers: ReadonlyArray<{ readonly backend: Backend; readonly limitBytes: number }>) {
    this.backendList = tiers.map((t) => t.backend);
    for (const t of tiers) {
      this.tiers.set(t.backend.tier, {
        backend: t.backend,
        limit: t.limitBytes,
        reserved: 0,
        allocated: 0,
        peak: 0,
        inFlight: 0,
        waiters: [],
      });
    }
  }

  backend(tier: TierName): Backend {
    const s = this.tiers.get(tier);
    if (s === undefined) throw new Error(`no ${tier} tier`);
    return s.backend;
  }

  /** Every tier's backend, fastest first. */
  get backends(): readonly Backend[] {
    return this.backendList;
  }

  limitBytes(tier: TierName): number {
    return this.tiers.get(tier)?.limit ?? 0;
  }

  /** Bytes reserved in `tier` (entries plus in-flight writes/demotions). Equals resident bytes when idle. */
  usedBytes(tier: TierName): number {
    return this.tiers.get(tier)?.reserved ?? 0;
  }

  /** usedBytes as the medium counts them (whole blocks or pages): what the tier's limit bounds. */
  allocatedBytes(tier: TierName): number {
    return this.tiers.get(tier)?.allocated ?? 0;
  }

  /** The highest allocatedBytes(tier) so far. */
  peakAllocatedBytes(tier: TierName): number {
    return this.tiers.get(tier)?.peak ?? 0;
  }

  /** What an entry of `bytes` takes in `tier`. */
  footprint(tier: TierName, bytes: number): number {
    return this.backend(tier).allocatedBytes?.(bytes) ?? bytes;
  }

  /** Takes room for an entry of `bytes` in `tier` (the caller has checked it fits). */
  reserve(tier: TierName, bytes: number): void {
    const s = this.state(tier);
    s.reserved += bytes;
    s.allocated += this.footprint(tier, bytes);
    if (s.allocated > s.peak) s.peak = s.allocated;
  }

  /** Gives back the room of an entry of `bytes` and wakes whoever waits for it. */
  release(tier: TierName, bytes: number): void {
    const s = this.state(tier);
    s.reserved -= bytes;
    s.allocated -= this.footprint(tier, bytes);
    this.notifySpace(tier);
  }

  /** Tier operations in flight now: placement writes, demotions (each counted once) and hit reads. */
  operationsInFlight(): number {
    let n = this.readsInFlight;
    for (const s of this.tiers.values()) n += s.inFlight;
    return n;
  }

  /** Writes and demotions in flight into `tier`. */
  inFlightTo(tier: TierName): number {
    return this.tiers.get(tier)?.inFlight ?? 0;
  }

  /** A write or demotion into `tier` starts. */
  landing(tier: TierName): void {
    this.state(tier).inFlight++;
  }

  /** A write or demotion into `tier` is over (landed, failed or cut short). */
  landed(tier: TierName): void {
    this.state(tier).inFlight--;
  }

  readStarted(): void {
    this.readsInFlight++;
  }

  readEnded(): void {
    this.readsInFlight--;
  }

  /** Wakes the allocations waiting for room in `tier`: they look again. */
  notifySpace(tier: TierName): void {
    const s = this.tiers.get(tier);
    if (s === undefined || s.waiters.length === 0) return;
    const waiters = s.waiters;
    s.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves at the next change of `tier`'s room or victims. */
  spaceChange(tier: TierName): Promise<void> {
    return new Promise((resolve) => this.tiers.get(tier)?.waiters.push(resolve));
  }

  private state(tier: TierName): TierState {
    const s = this.tiers.get(tier);
    if (s === undefined) throw new Error(`no ${tier} tier`);
    return s;
  }
}
