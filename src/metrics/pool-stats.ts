// What a shared KV pool adds to the measurement (--kv-pool shared; docs/shared-pool.md): the lookups
// through the storage (each an existence check, timed as its own operation class), who published the
// blocks the prefix hits read (this rank, another rank, an earlier run), publishes and the races lost,
// blocks that vanished between a lookup and the read; and, for ranks that divide a trace (--route),
// the trace's own reuse over every request the rank passed, its own or not (the ideal of the whole
// cluster's traffic, the same on every rank that passed the same requests).
import { POOL_ORIGINS } from '../tiers/pool-names.js';
import type { PoolOrigin } from '../tiers/pool-names.js';
import type { IOTiming } from '../tiers/backend.js';
import { IdealReuse } from './block-stats.js';
import type { LookedUpBlock } from './block-stats.js';
import { LatencyHistogram } from './latency.js';
import type { LatencySnapshot } from './latency.js';

export { POOL_ORIGINS };
export type { PoolOrigin };
export type ByOrigin = Readonly<Record<PoolOrigin, number>>;

export interface PoolStatsSnapshot {
  readonly lookups: number;
  readonly lookupsFound: number;
  readonly lookupLatency: LatencySnapshot;
  readonly hitTokens: ByOrigin;
  readonly hitBlocks: ByOrigin;
  readonly published: number;
  readonly publishedBytes: number;
  /** Blocks another writer published first: not rewritten. */
  readonly publishRaces: number;
  /** Bytes of those blocks' temporary copies, written and discarded. */
  readonly discardedBytes: number;
  /** Blocks a lookup found that were gone when read (evicted by their publisher meanwhile): misses. */
  readonly vanished: number;
  /** This rank's own blocks a lookup no longer found (removed by someone else): dropped from its index. */
  readonly lostOwn: number;
  /** Requests the rank passed in its source (every rank's), and of them its own. */
  readonly routedSeen: number;
  readonly routedServed: number;
  /** The reuse of every request passed, by key (unlimited capacity, one pool). */
  readonly traceIdeal: { readonly tracked: boolean; readonly tokensAsked: number; readonly hitTokens: number };
}

const zeroByOrigin = (): Record<PoolOrigin, number> => ({ own: 0, other_rank: 0, earlier_run: 0 });

/** Per-pool counters of a run, reset with the Recorder after preparation. */
export class PoolStats {
  private lookups = 0;
  private lookupsFound = 0;
  private readonly lookupLatency = new LatencyHistogram();
  private hitTokens = zeroByOrigin();
  private hitBlocks = zeroByOrigin();
  private published = 0;
  private publishedBytes = 0;
  private publishRaces = 0;
  private discardedBytes = 0;
  private vanished = 0;
  private lostOwn = 0;
  private routedSeen = 0;
  private routedServed = 0;
  private readonly ideal = new IdealReuse();

  recordLookup(t: IOTiming, found: boolean): void {
    this.lookups++;
    if (found) this.lookupsFound++;
    this.lookupLatency.recordMs(t.totalMs);
  }

  /** A prefix hit on a pooled block of `tokens` tokens, published by `origin`. */
  recordHit(origin: PoolOrigin, tokens: number): void {
    this.hitTokens[origin] += tokens;
    this.hitBlocks[origin]++;
  }

  recordPublished(bytes: number): void {
    this.published++;
    this.publishedBytes += bytes;
  }

  recordPublishRace(discardedBytes: number): void {
    this.publishRaces++;
    this.discardedBytes += discardedBytes;
  }

  recordVanished(): void {
    this.vanished++;
  }

  recordLostOwn(): void {
    this.lostOwn++;
  }

  /** A request the rank's source passed: `served` when routed to this rank; its chain when known. */
  recordRouted(served: boolean, chain: readonly LookedUpBlock[] | undefined): void {
    this.routedSeen++;
    if (served) this.routedServed++;
    if (chain !== undefined) this.ideal.add(chain);
    else this.ideal.tracked = false;
  }

  reset(): void {
    this.lookups = 0;
    this.lookupsFound = 0;
    this.lookupLatency.reset();
    this.hitTokens = zeroByOrigin();
    this.hitBlocks = zeroByOrigin();
    this.published = 0;
    this.publishedBytes = 0;
    this.publishRaces = 0;
    this.discardedBytes = 0;
    this.vanished = 0;
    this.lostOwn = 0;
    this.routedSeen = 0;
    this.routedServed = 0;
    this.ideal.reset();
  }

  snapshot(): PoolStatsSnapshot {
    return {
      lookups: this.lookups,
      lookupsFound: this.lookupsFound,
      lookupLatency: this.lookupLatency.snapshot(),
      hitTokens: { ...this.hitTokens },
      hitBlocks: { ...this.hitBlocks },
      published: this.published,
      publishedBytes: this.publishedBytes,
      publishRaces: this.publishRaces,
      discardedBytes: this.discardedBytes,
      vanished: this.vanished,
      lostOwn: this.lostOwn,
      routedSeen: this.routedSeen,
      routedServed: this.routedServed,
      traceIdeal: { tracked: this.ideal.tracked, tokensAsked: this.ideal.tokensAsked, hitTokens: this.ideal.hitTokens },
    };
  }
}

/** Hits over every origin. */
export function totalByOrigin(b: ByOrigin): number {
  return POOL_ORIGINS.reduce((n, o) => n + b[o], 0);
}
