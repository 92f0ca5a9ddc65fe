// The Recorder: every measured figure of a run lands here, as exact integer counters and latency
// histograms. It never prints and never computes report fields; metrics/cache-stats.ts does that.
import { BlockStats } from './block-stats.js';
import { PoolStats } from './pool-stats.js';
import { MetadataStats } from './metadata-stats.js';
import type { CacheType } from '../model/kv-access.js';
import type { TierName } from '../tiers/backend.js';
import type { IOTiming } from '../tiers/backend.js';
import { LatencyHistogram } from './latency.js';
import type { LatencySnapshot } from './latency.js';
import { LatencyWindow } from './latency-window.js';
import type { WindowSelection } from './latency-window.js';

export const TIER_NAMES: readonly TierName[] = ['gpu', 'cpu', 'storage'];

/** Operations whose latency is recorded per tier. Demotion traffic is kept apart from placement/hits. */
export type TierOp = 'write' | 'read' | 'demote_write' | 'demote_read';

/** Exact byte and operation counts of one tier. */
export interface TierTraffic {
  /** New entries placed in this tier (prefill/allocation writes). */
  writeOps: number;
  writeBytes: number;
  /** Cache-hit reads served by this tier. */
  readOps: number;
  readBytes: number;
  /** Entries demoted into this tier from the tier above, and out of it to the tier below. */
  demoteInOps: number;
  demoteInBytes: number;
  demoteOutOps: number;
  demoteOutBytes: number;
  /** Entries deleted from this tier by eviction (last tier) or by an explicit delete. */
  evictDeleteOps: number;
  evictDeleteBytes: number;
  explicitDeleteOps: number;
  explicitDeleteBytes: number;
  /** Operations that failed in the backend (the entry was not stored / not read); by kind in Recorder.failures. */
  failedOps: number;
  /** Operations cut short by the end of the run (their partial bytes are in the byte counts, not their operations). */
  abortedOps: number;
}

/** What a failed tier operation was doing. */
export type FailedOperation = 'placement_write' | 'hit_read' | 'demote_read' | 'demote_write' | 'delete';

/**
 * Why it failed: the errno classes a storage user acts on, an object store's answers and connection
 * failures (tiers/s3-client.ts: 403, 404, 5xx, 503 SlowDown, resets, refusals, timeouts), everything
 * else as 'other'.
 */
export const FAILURE_CLASSES = [
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EEXIST',
  'HTTP_403',
  'HTTP_404',
  'HTTP_5XX',
  'SLOWDOWN',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'other',
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** The class of a thrown error: its errno code when it is one of FAILURE_CLASSES, else 'other'. */
export function failureClassOf(e: unknown): FailureClass {
  const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
  return FAILURE_CLASSES.find((c) => c === code) ?? 'other';
}

/** Failed operations of one tier, operation and class. */
export interface FailureCount {
  readonly tier: TierName;
  readonly operation: FailedOperation;
  readonly error: FailureClass;
  readonly count: number;
}

/** New entries no tier could make room for within its limit: not written, not counted as writes. */
export interface RefusedAllocations {
  count: number;
  bytes: number;
}

/** Bytes of KV data a tier read: hits served plus entries demoted out of it. */
export function kvReadBytes(t: TierTraffic): number {
  return t.readBytes + t.demoteOutBytes;
}

/** Bytes of KV data a tier wrote: entries placed plus entries demoted into it. */
export function kvWriteBytes(t: TierTraffic): number {
  return t.writeBytes + t.demoteInBytes;
}

function emptyTraffic(): TierTraffic {
  return {
    writeOps: 0,
    writeBytes: 0,
    readOps: 0,
    readBytes: 0,
    demoteInOps: 0,
    demoteInBytes: 0,
    demoteOutOps: 0,
    demoteOutBytes: 0,
    evictDeleteOps: 0,
    evictDeleteBytes: 0,
    explicitDeleteOps: 0,
    explicitDeleteBytes: 0,
    failedOps: 0,
    abortedOps: 0,
  };
}

/** The reference's cache counters (docs/reference-compat.md#rc-15), same meaning. */
export interface CacheCounters {
  cacheHits: number;
  cacheMisses: number;
  prefillWrites: number;
  decodeReads: number;
  writeOperations: number;
  readOperations: number;
  totalReadBytes: number;
  totalWriteBytes: number;
  offloadsCpu: number;
  offloadsStorage: number;
  /** Every demotion plus every last-tier delete, as the reference counts "evictions". */
  evictions: number;
  systemPromptHits: number;
  commonPhraseHits: number;
  multiTurnHits: number;
  userCacheHits: number;
  /** Logical (not tensor-parallel-divided) tokens written to, demoted to, or read from storage. */
  storageTokensProcessed: number;
}

function emptyCounters(): CacheCounters {
  return {
    cacheHits: 0,
    cacheMisses: 0,
    prefillWrites: 0,
    decodeReads: 0,
    writeOperations: 0,
    readOperations: 0,
    totalReadBytes: 0,
    totalWriteBytes: 0,
    offloadsCpu: 0,
    offloadsStorage: 0,
    evictions: 0,
    systemPromptHits: 0,
    commonPhraseHits: 0,
    multiTurnHits: 0,
    userCacheHits: 0,
    storageTokensProcessed: 0,
  };
}

const OPS: readonly TierOp[] = ['write', 'read', 'demote_write', 'demote_read'];
/** Histogram names per tier and operation, built once (the hot path must not format strings). */
const IO_NAMES = Object.fromEntries(
  TIER_NAMES.map((t) => [t, Object.fromEntries(OPS.map((op) => [op, `${t}_${op}`])) as Record<TierOp, string>]),
) as Record<TierName, Record<TierOp, string>>;

interface IoHistograms {
  readonly total: LatencyHistogram;
  readonly device?: LatencyHistogram;
  readonly host?: LatencyHistogram;
}

/** Per cache and tier operation (counters, traffic, I/O latencies); per-request figures are RequestMetrics'. */
export class Recorder {
  counters: CacheCounters = emptyCounters();
  readonly traffic: Record<TierName, TierTraffic> = { gpu: emptyTraffic(), cpu: emptyTraffic(), storage: emptyTraffic() };
  private readonly histograms = new Map<string, LatencyHistogram>();
  private readonly io: Record<TierName, Partial<Record<TierOp, IoHistograms>>> = { gpu: {}, cpu: {}, storage: {} };
  /** Open interval windows, one per consumer (autoscaler, timeline); none: no cost per operation. */
  private readonly windows: LatencyWindow[] = [];
  /** Failed operations by `<tier> <operation> <class>`, in the order first seen. */
  private failures = new Map<string, FailureCount>();
  private refused: RefusedAllocations = { count: 0, bytes: 0 };
  /** Block-granular runs' per-block figures (untouched in whole-request mode). */
  readonly blocks = new BlockStats();
  /** A shared pool's lookups, origins and publishes (untouched with a private storage tier). */
  readonly pool = new PoolStats();
  /** The storage tier's creates, renames, links, unlinks, lookups and mkdirs (what a backend reports through its sink). */
  readonly metadata = new MetadataStats();

  /** The histogram called `name`, created empty on first use. */
  latency(name: string): LatencyHistogram {
    let h = this.histograms.get(name);
    if (h === undefined) {
      h = new LatencyHistogram();
      this.histograms.set(name, h);
    }
    return h;
  }

  /** An existing histogram with at least one sample, else undefined. */
  latencyIfAny(name: string): LatencyHistogram | undefined {
    const h = this.histograms.get(name);
    return h !== undefined && h.count > 0 ? h : undefined;
  }

  histogramNames(): string[] {
    return [...this.histograms.keys()];
  }

  /**
   * Records an operation's total time under `<tier>_<op>`, and for the storage tier also its device and
   * host parts under `storage_<op>_device|_host` (the only split the reports use; the memory tiers'
   * parts are trivial).
   */
  recordIo(tier: TierName, op: TierOp, t: IOTiming): void {
    const h = this.ioHistograms(tier, op);
    h.total.recordMs(t.totalMs);
    for (const w of this.windows) w.record(tier, op, t.totalMs);
    h.device?.recordMs(t.deviceMs);
    h.host?.recordMs(t.hostMs);
  }

  // What the cache reports, one method per event, in the order the cache meets them. Every figure,
  // the reference's included, counts only I/O that completed: the reference counted a write or a hit
  // when it was asked for, so a failed write still added its bytes; here a failed operation moved
  // nothing and is counted only as a failure (recordFailure). An operation cut short by the end of
  // the run counts the bytes that reached the tier before the stop (they did move, inside the
  // measured window) but not as an operation, a hit, a prefill write or tokens: `abortedOps` counts it.

  /** The new entry of `bytes` (`tokens` logical tokens) was written to `tier` in `t`. */
  recordPlacement(tier: TierName, bytes: number, tokens: number, t: IOTiming, prefill: boolean): void {
    const traffic = this.traffic[tier];
    traffic.writeOps++;
    traffic.writeBytes += bytes;
    const c = this.counters;
    if (prefill) c.prefillWrites++;
    c.writeOperations++;
    c.totalWriteBytes += bytes;
    if (tier === 'cpu') c.offloadsCpu++;
    if (tier === 'storage') {
      c.offloadsStorage++;
      c.storageTokensProcessed += tokens;
    }
    this.recordIo(tier, 'write', t);
  }

  /** The new entry's write to `tier` was stopped by the end of the run after `movedBytes` reached it. */
  recordPlacementStopped(tier: TierName, movedBytes: number): void {
    const traffic = this.traffic[tier];
    traffic.abortedOps++;
    traffic.writeBytes += movedBytes;
    this.counters.totalWriteBytes += movedBytes;
  }

  /**
   * A shared pool's publish found the block published by another writer first: its temporary copy
   * of `movedBytes` reached `tier` (they moved, inside the window) and was discarded; no entry, no op.
   */
  recordPublishRace(tier: TierName, movedBytes: number): void {
    this.traffic[tier].writeBytes += movedBytes;
    this.counters.totalWriteBytes += movedBytes;
    this.pool.recordPublishRace(movedBytes);
  }

  /** `operation` on `tier` failed with `error`: nothing was stored, read, moved or deleted there. */
  recordFailure(tier: TierName, operation: FailedOperation, error: FailureClass): void {
    this.traffic[tier].failedOps++;
    const key = `${tier} ${operation} ${error}`;
    const f = this.failures.get(key);
    this.failures.set(key, { tier, operation, error, count: (f?.count ?? 0) + 1 });
  }

  /** No tier could make room for a new entry of `bytes` within its limit: nothing was written. */
  recordAllocationRefused(bytes: number): void {
    this.refused.count++;
    this.refused.bytes += bytes;
  }

  recordMiss(): void {
    this.counters.cacheMisses++;
  }

  /**
   * A hit: the entry of `bytes` (`tokens` logical tokens) was read whole from `tier` in `t`. Counted
   * when the read completed (a failed read served nothing: the cache records a failure and a miss).
   */
  recordHitRead(tier: TierName, bytes: number, tokens: number, type: CacheType, decode: boolean, t: IOTiming): void {
    const c = this.counters;
    c.cacheHits++;
    if (type === 'system') c.systemPromptHits++;
    else if (type === 'common') c.commonPhraseHits++;
    else if (type === 'multi_turn') c.multiTurnHits++;
    else c.userCacheHits++;
    if (decode) c.decodeReads++;
    c.readOperations++;
    c.totalReadBytes += bytes;
    const traffic = this.traffic[tier];
    traffic.readOps++;
    traffic.readBytes += bytes;
    this.recordIo(tier, 'read', t);
    if (tier === 'storage') c.storageTokensProcessed += tokens;
  }

  /** A hit's read from `tier` was cut short by the end of the run after `movedBytes`. */
  recordHitReadStopped(tier: TierName, movedBytes: number): void {
    const traffic = this.traffic[tier];
    traffic.readBytes += movedBytes;
    this.counters.totalReadBytes += movedBytes;
    traffic.abortedOps++;
  }

  /** An entry of `bytes` (`tokens` logical tokens) was demoted from `from` to `to`: read in `read`, written in `write`. */
  recordDemotion(from: TierName, to: TierName, bytes: number, tokens: number, read: IOTiming, write: IOTiming): void {
    const c = this.counters;
    c.evictions++;
    if (to === 'cpu') c.offloadsCpu++;
    if (to === 'storage') {
      c.offloadsStorage++;
      c.storageTokensProcessed += tokens;
    }
    const out = this.traffic[from];
    out.demoteOutOps++;
    out.demoteOutBytes += bytes;
    const into = this.traffic[to];
    into.demoteInOps++;
    into.demoteInBytes += bytes;
    this.recordIo(from, 'demote_read', read);
    this.recordIo(to, 'demote_write', write);
  }

  /** A demotion from `from` to `to` was cut short by the end of the run after `movedBytes` reached `to`. */
  recordDemotionStopped(from: TierName, to: TierName, movedBytes: number): void {
    this.traffic[from].demoteOutBytes += movedBytes;
    const into = this.traffic[to];
    into.demoteInBytes += movedBytes;
    into.abortedOps++;
  }

  /** The last tier deleted an entry of `bytes` to make room (an eviction, as the reference counts it). */
  recordEvictionDelete(tier: TierName, bytes: number): void {
    this.counters.evictions++;
    const traffic = this.traffic[tier];
    traffic.evictDeleteOps++;
    traffic.evictDeleteBytes += bytes;
  }

  /** An entry of `bytes` was removed from `tier` on request (not an eviction). */
  recordExplicitDelete(tier: TierName, bytes: number): void {
    const traffic = this.traffic[tier];
    traffic.explicitDeleteOps++;
    traffic.explicitDeleteBytes += bytes;
  }

  /** The histograms of one tier and operation, looked up by name once and then held directly. */
  private ioHistograms(tier: TierName, op: TierOp): IoHistograms {
    let h = this.io[tier][op];
    if (h === undefined) {
      const name = IO_NAMES[tier][op];
      h =
        tier === 'storage'
          ? { total: this.latency(name), device: this.latency(`${name}_device`), host: this.latency(`${name}_host`) }
          : { total: this.latency(name) };
      this.io[tier][op] = h;
    }
    return h;
  }

  /**
   * Opens an interval window for one consumer: from now on it collects the selected operations'
   * latencies until `closeWindow`; its `take()` hands out what was recorded since the previous take.
   * Each consumer has its own, so one consumer's take never empties another's.
   */
  openWindow(selection: WindowSelection): LatencyWindow {
    const w = new LatencyWindow(selection);
    this.windows.push(w);
    return w;
  }

  closeWindow(w: LatencyWindow): void {
    const i = this.windows.indexOf(w);
    if (i >= 0) this.windows.splice(i, 1);
  }

  /** Zeroes every counter and histogram (after preconditioning); cache contents are not touched. */
  reset(): void {
    this.counters = emptyCounters();
    for (const t of TIER_NAMES) Object.assign(this.traffic[t], emptyTraffic());
    for (const h of this.histograms.values()) h.reset();
    for (const w of this.windows) w.reset();
    this.failures = new Map();
    this.refused = { count: 0, bytes: 0 };
    this.blocks.reset();
    this.pool.reset();
    this.metadata.reset();
  }

  /** Everything recorded so far as plain data (copies: later operations do not change it). */
  snapshot(): RecorderSnapshot {
    const latencies: Record<string, LatencySnapshot> = {};
    for (const [name, h] of this.histograms) if (h.count > 0) latencies[name] = h.snapshot();
    const traffic = (t: TierName): TierTraffic => ({ ...this.traffic[t] });
    return {
      counters: { ...this.counters },
      traffic: { gpu: traffic('gpu'), cpu: traffic('cpu'), storage: traffic('storage') },
      latencies,
      failures: [...this.failures.values()],
      refusedAllocations: { ...this.refused },
    };
  }
}

/** A Recorder's figures as plain data, what the reporters read. */
export interface RecorderSnapshot {
  readonly counters: Readonly<CacheCounters>;
  readonly traffic: Readonly<Record<TierName, Readonly<TierTraffic>>>;
  /** Every histogram with at least one sample, by name (`<tier>_<op>`, `storage_<op>_device|_host`), in creation order. */
  readonly latencies: Readonly<Partial<Record<string, LatencySnapshot>>>;
  /** Failed operations per tier, operation and error class (each also in its tier's `failedOps`). */
  readonly failures: readonly FailureCount[];
  readonly refusedAllocations: Readonly<RefusedAllocations>;
}
