// What `kv-cache replay` measured, as plain data: the engine's replay produces it, the replay report
// reads it. Declared here so the report never imports the engine.
import type { DiskDelta } from './diskstats.js';
import type { RecorderSnapshot } from './recorder.js';
import type { MetadataStatsSnapshot } from './metadata-stats.js';
import type { MachineContext } from './result.js';
import type { ObjectStoreReport } from '../tiers/storage-kind.js';

export type ReplayStopReason = 'workload_complete' | 'duration' | 'interrupted' | 'failed';

export interface ReplayCounts {
  rows: number;
  writes: number;
  reads: number;
  deletes: number;
  writeBytes: number;
  readBytes: number;
  /** Rows of other tiers, not replayed (see allTiers in engine/replay.ts). */
  skippedOtherTiers: number;
  /** Reads or deletes of a key the replay never wrote (a trace that starts mid-run). */
  missingKeys: number;
  /** Operations cut short by the stop (duration or signal): not counted as replayed, their bytes not counted. */
  abortedAtStop: number;
  /** Distinct keys stored under a hashed file name (too long for a file name as they are). */
  hashedKeys: number;
}

export interface ReplayResult {
  readonly counts: ReplayCounts;
  /** The storage tier's operations, as a run's recorder holds them. */
  readonly recorded: RecorderSnapshot;
  /** The storage backend's metadata calls over the replay (creates, unlinks, …); absent in hand-made results. */
  readonly metadataOps?: MetadataStatsSnapshot;
  readonly elapsedSec: number;
  readonly storage: { readonly dir: string; readonly ioMode: string; readonly fileSystem: string };
  readonly device?: { readonly name: string; readonly delta: DiskDelta };
  readonly machine: MachineContext;
  readonly stopReason: ReplayStopReason;
  readonly durationLimitSec?: number;
  /** An object store's account of the replay's traffic (kvcache_bench.object_store); absent for other kinds. */
  readonly objectStore?: ObjectStoreReport;
}
