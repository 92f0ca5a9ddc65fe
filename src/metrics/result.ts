// The measured outcome of a run, handed from the engine to the reporters, as plain data (nothing
// live: a snapshot taken when the measurement ended). Reporters compute every figure they print
// from this value; they never measure.
import type { PoolStatsSnapshot } from './pool-stats.js';
import type { MetadataStatsSnapshot } from './metadata-stats.js';
import type { PoolAtStart } from '../tiers/storage-kind.js';
import type { BlockStatsSnapshot } from './block-stats.js';
import type { TierName } from '../tiers/backend.js';
import type { ObjectStoreReport } from '../tiers/storage-kind.js';
import type { FileIoStats } from '../tiers/file-io-gauge.js';
export type { FileIoStats };
import type { SlabReport } from '../tiers/slab-pool.js';
export type { SlabReport };
import type { TierOccupancy } from './cache-stats.js';
import type { RecorderSnapshot } from './recorder.js';
import type { RequestMetricsSnapshot } from './request-metrics.js';
import type { DiskDelta } from './diskstats.js';
import type { ValidationTraceStats } from '../workload/validation-trace.js';
import type { RunTimeline } from './timeline.js';
import type { DeviceTelemetry } from './device-series.js';
import type { LatencyTracingOutcome } from './trace-capture.js';
import type { TtftModelled } from './ttft.js';

export type StopReason = 'duration' | 'max_requests' | 'interrupted' | 'failed' | 'capacity_peak' | 'workload_complete' | 'storage_full';

export interface DelaySummaryMs {
  readonly mean: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** CPU seconds the whole process used over the measured window (user and system, every thread). */
export interface HarnessCpu {
  readonly userSec: number;
  readonly systemSec: number;
}

export interface EntrySizeSummary {
  readonly count: number;
  readonly minBytes: number;
  readonly meanBytes: number;
  readonly p95Bytes: number;
  readonly maxBytes: number;
}

export interface PrefixSummary {
  readonly prefixHits: number;
  readonly prefixMisses: number;
  readonly systemPromptReuse: number;
  readonly commonPhraseReuse: number;
  readonly bytesSaved: number;
}

/** The host a run or replay measured on, captured once at run time (engine/machine.ts). */
export interface MachineContext {
  readonly cpuModel: string;
  /** CPUs this process may use (os.availableParallelism), the count the run sizes its threads by. */
  readonly cpuCount: number;
  readonly totalMemoryBytes: number;
  readonly kernelRelease: string;
  readonly nodeVersion: string;
  /** How the I/O buffers are backed (data/huge-pages.ts): huge pages keep O_DIRECT requests whole. */
  readonly ioBuffers: string;
  /** The cache directory's file system and block device; null in trace mode (no directory). */
  readonly cacheDir: {
    readonly fileSystem: string;
    /** Physical device under the directory (see diskstats.ts), or null when it cannot be resolved. */
    readonly blockDevice: string | null;
    /** /sys/block/<dev>/device/model, or null when the device or its model is unknown. */
    readonly deviceModel: string | null;
  } | null;
}

export interface RunResult {
  readonly toolVersion: string;
  readonly startedAt: string;
  readonly seed: number;
  readonly modelKey: string;
  readonly bytesPerToken: number;
  readonly performanceProfile: 'latency' | 'throughput';
  /** The whole effective configuration, JSON-ready. */
  readonly effectiveConfig: unknown;
  readonly stopReason: StopReason;
  /** Seconds from the first issued request to the last I/O completed: the denominator of every rate. */
  readonly elapsedSec: number;
  readonly nominalDurationSec: number;
  /** Per cache and tier operation: counters, traffic, I/O latencies. */
  readonly recorded: RecorderSnapshot;
  /** Per request: completions, tokens, latency distributions, QoS. */
  readonly requests: RequestMetricsSnapshot;
  readonly occupancy: Partial<Record<TierName, TierOccupancy>>;
  readonly entrySizes: EntrySizeSummary;
  readonly prefix?: PrefixSummary;
  readonly conversationsLost: number;
  readonly eventLoopDelayMs: DelaySummaryMs;
  /** Block-device counters over the measured phase, when the cache dir's device could be resolved. */
  readonly device?: { readonly name: string; readonly delta: DiskDelta };
  /** The file system's own bytes per new file, calibrated before the window (engine/metadata-calibration.ts); absent unless flat or fanout on a device. */
  readonly metadataCalibration?: MetadataCalibration;
  readonly storage: {
    readonly dir: string;
    readonly ioMode: string;
    readonly fileSystem: string;
    readonly layout?: 'flat' | 'fanout' | 'slab';
    /** How one-chunk entries' system calls were made (StorageDescription.fileCalls). */
    readonly fileCalls?: string;
  };
  readonly workers: number;
  readonly warnings: readonly string[];
  /** Where requests came from (synthetic, ShareGPT, BurstGPT) with counts of skipped input. */
  readonly workloadSource: Record<string, unknown>;
  /** Autoscaler events (the reference's autoscaling_stats), summary and throughput timeline. */
  readonly autoscaling?: { readonly events: readonly object[]; readonly summary: object; readonly timeline: readonly object[] };
  readonly machine: MachineContext;
  /** --validation-trace: the real trace's figures, read at start; the report compares the run with them. */
  readonly validationTrace?: { readonly path: string; readonly stats: ValidationTraceStats };
  // Failure accounting, hard capacity and stale entries (issue 11). Failed operations and refused
  // allocations are in `recorded` (failures, refusedAllocations).
  /** Entry files of earlier runs found in the cache dir at start; null or absent in trace mode. */
  readonly staleEntries?: {
    readonly count: number;
    readonly bytes: number;
    readonly allocatedBytes: number;
    readonly removed: number;
  } | null;
  /** The storage tier's limit and the most it held, both in bytes on the medium (whole blocks); null or absent in trace mode. */
  readonly storageCapacity?: { readonly limitBytes: number; readonly peakAllocatedBytes: number } | null;
  /** An object-store storage tier's own account (endpoint host, client, retries, failures, time to first byte); absent for other kinds. */
  readonly objectStore?: ObjectStoreReport;
  // The per-second series of the measured phase (issues 13 and 15): absent in hand-made results.
  /** One point per second of the measured window (metrics/timeline.ts). */
  readonly timeline?: RunTimeline;
  /** The cache dir's block device sampled every second; null when it could not be resolved or in trace mode. */
  readonly deviceTelemetry?: DeviceTelemetry | null;
  // Inputs of the validity verdict (metrics/validity.ts) beyond the figures above.
  /** Share of the measured window the main thread was busy (performance.eventLoopUtilization), 0–1. */
  readonly mainThreadBusy: number;
  /** The process's CPU over the measured window (issue 34); absent in hand-made results. */
  readonly harnessCpu?: HarnessCpu;
  /** --kv-layout slab: the pool's shape, its lay-out before the window, slots used and freed; absent for other layouts. */
  readonly slab?: SlabReport;
  /** How the payload generator made the bytes written in the measured window, and how long writes waited for them; absent in trace mode. */
  readonly payload?: PayloadGeneration;
  /** The file tier's threadpool use and staging waits over the measured window; absent for other kinds and in trace mode. */
  readonly fileIo?: FileIoStats;
  /** The storage tier's metadata calls over the measured window (creates, renames, links, unlinks, lookups, mkdirs); absent in trace mode and hand-made results. */
  readonly metadataOps?: MetadataStatsSnapshot;
  readonly storageSetup: {
    /** Trace mode: null tiers, no real I/O. */
    readonly traceMode: boolean;
    /** The cache dir is on a RAM file system (tmpfs, ramfs): it measures memory, not storage. */
    readonly ramFileSystem: boolean;
    /** The storage backend keeps its entries in RAM (--storage-backend memory): its name; it measures memory, not storage. */
    readonly ramBackend?: string;
    /** --storage-capacity-gb was given: storage evictions are then the workload's intent, not a full disk. */
    readonly capacityExplicit: boolean;
  };
  // Ranks of a multi-process run (issue 14): this rank, its barrier waits and window skew.
  /** Present when the run is a rank of a launcher (mpirun, srun, Kubernetes indexed job). */
  readonly ranks?: RankFacts;
  /** Block-granular runs (--kv-block-tokens, Mooncake traces): the block size and per-block figures; absent otherwise. */
  readonly kvBlocks?: KvBlocksFacts;
  /** Block-granular runs with a shared pool or ranks dividing the trace (issue 32): the pool and the route; absent otherwise. */
  readonly kvPool?: KvPoolFacts;
  // Block-layer tracing (issue 13): --enable-latency-tracing's capture, or the one reason there is none.
  /** Absent when tracing was not asked for. */
  readonly latencyTracing?: LatencyTracingOutcome;
  // The modelled time to first token (issue 23): absent with --gpu-profile none. Modelled, never measured.
  readonly ttftModelled?: TtftModelled;
}

/** A block-granular run's KV blocks: their size, where their keys came from, and the measured figures. */
export interface KvBlocksFacts {
  readonly blockTokens: number;
  /** Bytes of a full block for the run's model. */
  readonly blockBytes: number;
  /** 'prefix_hash': derived from prompts and conversations; 'trace_hash_ids': the trace's own ids. */
  readonly keys: 'prefix_hash' | 'trace_hash_ids';
  readonly stats: BlockStatsSnapshot;
}

/** A block-granular run's pool and route (docs/shared-pool.md). */
export interface KvPoolFacts {
  /** --kv-pool (settings/choices.ts KV_POOLS). */
  readonly pool: 'private' | 'shared';
  /** --route in effect (workload/routing.ts). */
  readonly route: 'replicate' | 'session' | 'round-robin';
  readonly rank: number;
  readonly worldSize: number;
  /** Present with --kv-pool shared. */
  readonly shared?: {
    readonly atStart: PoolAtStart;
    /** This rank's share of the pool's capacity (bytes; Infinity: unlimited). */
    readonly shareBytes: number;
    readonly keep: boolean;
  };
  readonly stats: PoolStatsSnapshot;
}

/** One rank's identity and its measured window against the instants the ranks agreed (engine/rank-session.ts). */
export interface RankFacts {
  readonly rank: number;
  readonly worldSize: number;
  readonly launcher: string;
  readonly worldSizeFrom: string;
  readonly host: string;
  readonly barrier: {
    readonly dir: string;
    readonly timeoutSec: number;
    readonly startWaitMs: number;
    readonly endWaitMs: number | null;
    readonly endProblem: string | null;
  } | null;
  readonly agreedStartEpochMs: number | null;
  readonly agreedEndEpochMs: number | null;
  readonly windowStartEpochMs: number;
  readonly windowEndEpochMs: number;
  readonly startSkewMs: number | null;
  readonly endSkewMs: number | null;
  readonly clockSource: string;
  readonly peers: ReadonlyArray<{ readonly rank: number; readonly host: string; readonly arrivedEpochMs: number }>;
}

/** The payload generator over the measured window (data/payload-pool.ts PayloadStats, as plain data). */
export interface PayloadGeneration {
  /** Who filled the payload buffers (PayloadPool.fillerDescription): native threadpool jobs or worker threads, and why. */
  readonly filler: string;
  /** Bytes made by rewriting the stamps of a buffer that held the right source bytes already. */
  readonly stampedBytes: number;
  /** Bytes made by a full copy from the random source. */
  readonly copiedBytes: number;
  /** Milliseconds writes (CPU and storage tier) waited for a payload chunk: not part of any write's time. */
  readonly consumerWaitMs: number;
  readonly chunksWaitedFor: number;
}

/** What a metadata calibration found (kvcache_bench.metadata_calibration). */
export interface MetadataCalibration {
  /** The layout whose pattern was calibrated. */
  readonly layout: 'flat' | 'fanout';
  readonly filesPerRound: number;
  /** Data bytes of one calibration file (the device writes these besides the metadata). */
  readonly fileBytes: number;
  /** Per round: the device's written bytes beyond the files' data, per file. */
  readonly roundsBytesPerFile: readonly number[];
  /** The least of the rounds: the file system's own bytes per new file. */
  readonly bytesPerNewFile: number;
  /** Fanout: per round, the same with each file in a directory made for it; null for flat. */
  readonly roundsBytesPerFileInNewDir: readonly number[] | null;
  /** Fanout: what a new directory adds (the least such round less bytesPerNewFile); null for flat. */
  readonly bytesPerNewDir: number | null;
  /** Every round saw more than a file system writes for a file (another writer was busy): not used by the verdict. */
  readonly disturbed: boolean;
  readonly seconds: number;
  /** The same rounds among the run's own entries after its window; absent when not made (and why in the log). */
  readonly afterWindow?: AfterWindowCalibration;
}

/** The calibration among a run's own entries after its window (engine/metadata-calibration.ts). */
export interface AfterWindowCalibration {
  /** Data bytes of each file: the one before the window's, or less where the tier had less room left. */
  readonly fileBytes: number;
  readonly roundsBytesPerFile: readonly number[];
  /** The least of the rounds. */
  readonly bytesPerNewFile: number;
  readonly disturbed: boolean;
  readonly seconds: number;
}

/**
 * Bytes per new file the verdict allows: the larger of the two calibrations (a grown directory costs
 * more); 0 when the one before the window was disturbed, the one after only counting when it was not.
 */
export function allowedBytesPerNewFile(c: MetadataCalibration): number {
  if (c.disturbed) return 0;
  const after = c.afterWindow !== undefined && !c.afterWindow.disturbed ? c.afterWindow.bytesPerNewFile : 0;
  return Math.max(c.bytesPerNewFile, after);
}
