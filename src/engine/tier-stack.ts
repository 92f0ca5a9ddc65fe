// The storage side of a run or a replay, assembled in one place: the storage backend the run names
// (asked of the registry by kind, tiers/registry.ts; no backend is known here by name), the payload
// generator pool that fills its writes, the CPU tier and its copy threads, the simulated
// GPU — or, in trace mode, null tiers and the I/O trace. Everything made here is released by
// `tearDown`, in the order it spells out.
import { availableParallelism } from 'node:os';
import { TieredCache } from '../cache/tiered-cache.js';
import type { CacheOptions, CacheTier } from '../cache/tiered-cache.js';
import { CopyPool } from '../data/copy-pool.js';
import type { FillerKind } from '../data/fillers.js';
import { PAYLOAD_READAHEAD, PayloadPool } from '../data/payload-pool.js';
import { storageDeviceOf } from '../metrics/diskstats.js';
import type { StorageDevice } from '../metrics/diskstats.js';
import type { Recorder } from '../metrics/recorder.js';
import type { PayloadGeneration } from '../metrics/result.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { DirectSlabs } from '../data/aligned.js';
import type { LeftBehind } from '../tiers/backend.js';
import { READS_IN_FLIGHT } from '../tiers/direct-io.js';
import type { IoMode } from '../tiers/io-mode.js';
import { MemoryBackend } from '../tiers/memory.js';
import { NullBackend } from '../tiers/null.js';
import { storageKind } from '../tiers/registry.js';
import type { StorageBackendName } from '../tiers/registry.js';
import { SimulatedGpuBackend } from '../tiers/simulated-gpu.js';
import { objectStoreOptionsOf } from '../tiers/storage-kind.js';
import type {
  FileIoFigures,
  LeftoverEntries,
  ObjectStoreOptions,
  ObjectStoreReport,
  OpenedStorage,
  PoolAtStart,
  PoolOpenOptions,
  SlabLayoutOptions,
  StorageDescription,
} from '../tiers/storage-kind.js';
import type { SlabReport } from '../tiers/slab-pool.js';
import type { MetadataOpSink } from '../tiers/metadata-ops.js';
import { runBlockTokens } from './sources/registry.js';
import { slabOptionsOf } from './kv-layout.js';
import { TraceWriter } from '../trace/writer.js';
import type { Clock } from '../util/clock.js';
import { Semaphore } from '../util/lock.js';
import { gibToBytes, MiB } from '../util/units.js';
import type { FileCalls } from '../settings/choices.js';
import { availableMemoryBytes, planMemory } from './memory-check.js';
import type { MemoryPlan } from './memory-check.js';
import type { RunConfig } from '../settings/run-config.js';
import { StorageFullWatch } from './storage-full.js';
import type { EntryFilesAt } from './entry-cleanup.js';

/** Largest single I/O and payload chunk. */
export const IO_CHUNK_BYTES = 4 * MiB;

/** Buffers for `concurrency` operations in flight, bounded to keep memory predictable. */
export interface SlotCounts {
  /** Staging (bounce) buffers of the file tier: one per concurrent storage operation. */
  readonly staging: number;
  /** Payload buffers the generator threads fill ahead of the writes. */
  readonly payload: number;
}

/**
 * Payload slots per concurrent writer: the PAYLOAD_READAHEAD it holds plus one spare, so that a free slot
 * holding a base its entry may reuse (stamps only) is nearly always there. Measured on the RAM-backed
 * device (16 users): 2 per writer, all held, left 75 % of chunks to full copies; 3 left 0.2 %.
 */
const PAYLOAD_SLOTS_PER_WRITER = PAYLOAD_READAHEAD + 1;

export function slotCounts(concurrency: number): SlotCounts {
  return {
    staging: Math.max(4, Math.min(READS_IN_FLIGHT * concurrency + 4, 64)),
    payload: Math.max(8, Math.min(PAYLOAD_SLOTS_PER_WRITER * concurrency, 96)),
  };
}

/**
 * What the storage tier is — its backend's description — and the block device behind it, resolved
 * once when it is opened: the device counters, the per-second series, the machine context and the
 * tracing filter all read this one value.
 */
export type StorageTarget = StorageDescription & { readonly device: StorageDevice };

/** Trace mode: no storage at all. */
export const TRACE_MODE_STORAGE: StorageTarget = {
  kind: 'none',
  location: '(none: trace mode)',
  noDevice: 'trace mode (--io-trace-log) does no device I/O',
  headline: 'none (trace mode: null tiers, no device I/O)',
  ioMode: 'none (trace mode)',
  fileSystem: 'none',
  device: { kind: 'none', reason: 'trace mode (--io-trace-log) does no device I/O' },
};

/** Resolves the block device behind `d` (once per run or replay). */
async function targetOf(d: StorageDescription): Promise<StorageTarget> {
  if (d.dir !== undefined) return { ...d, device: await storageDeviceOf(d.dir) };
  return { ...d, device: { kind: 'none', reason: d.noDevice ?? `the ${d.kind} storage backend has no local directory` } };
}

interface Closable {
  close(): Promise<unknown>;
}

/**
 * What a stack owns, one field per teardown step, in teardown order. A part is absent when it was
 * never made (trace mode, no CPU tier, or an assembly that failed midway).
 */
export interface StackParts {
  /** Payload generator threads: stopped first, so nothing more is produced for a write. */
  payload?: Closable;
  /** The tiers: the cache once made (it closes every backend; the file tier deletes its entry files), the bare storage backend before. */
  tiers?: Closable;
  /** CPU-tier copy threads: after the CPU tier, whose copies run on them. */
  copier?: Closable;
  /** The I/O trace: after the last tier operation. The run closes it first to report its rows, so an error here is ignored. */
  trace?: Closable;
}

/**
 * Releases `parts` in the order of StackParts. Normally the first error stops the teardown and is
 * thrown; `quiet` (cleaning up after a failed assembly) ignores errors and releases everything.
 */
export async function tearDown(parts: StackParts, quiet = false): Promise<void> {
  const release = async (part: Closable | undefined): Promise<void> => {
    if (part === undefined) return;
    if (quiet) await part.close().catch(() => undefined);
    else await part.close();
  };
  await release(parts.payload);
  await release(parts.tiers);
  await release(parts.copier);
  await parts.trace?.close().catch(() => undefined);
}

/** The storage backend and the payload pool that fills its writes: all a replay needs, and a run's last tier. */
export interface OpenStorage {
  readonly opened: OpenedStorage;
  readonly payload: PayloadPool;
  /** Payload slots and CPU-tier pages the storage backend may write without a staging copy. */
  readonly directSlabs: DirectSlabs;
  readonly target: StorageTarget;
}

/** This process's place among the ranks of a run (one rank: 0 of 1). */
export interface RankPlace {
  readonly rank: number;
  readonly worldSize: number;
}

const ONE_RANK: RankPlace = { rank: 0, worldSize: 1 };

export interface StorageOptions {
  /** --storage-backend: the registry's row. */
  readonly backend: StorageBackendName;
  /** Absent: the kind decides (the file kind: a fresh temporary directory, removed at teardown). */
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  /** --payload-filler (default native). */
  readonly filler?: FillerKind;
  /** Seed of the payload bytes. */
  readonly seed: number;
  readonly slots: SlotCounts;
  /** The --s3-* flags (an object-store kind reads them). */
  readonly objectStore?: ObjectStoreOptions;
  /** A shared KV pool (--kv-pool shared). */
  readonly pool?: PoolOpenOptions;
  /** --kv-layout slab: the pool's slot and file sizes (engine/kv-layout.ts); absent: one file per entry. */
  readonly slab?: SlabLayoutOptions;
  /** --kv-layout fanout: one file per entry under the run's own hash fan-out directories. */
  readonly fanout?: boolean;
  /** --file-calls (default native). */
  readonly fileCalls?: FileCalls;
  /** --enable-latency-tracing (StorageOpenOptions.tracesSystemCalls). */
  readonly tracesSystemCalls?: boolean;
  /** Hears of a temporary directory the kind made, the moment it exists (for a force-quit). */
  readonly madeDir?: (at: EntryFilesAt) => void;
  /** Hears of the backend's creates, renames, links, unlinks, lookups and mkdirs (a recorder's metadata figures). */
  readonly metadataOps?: MetadataOpSink;
}

/** The sink that hands a backend's metadata calls to `recorder` (reset with it after preparation). */
export function recordingMetadata(recorder: Recorder): MetadataOpSink {
  return (op, ms, ok) => recorder.metadata.record(op, ms, ok);
}

export async function openStorage(o: StorageOptions): Promise<OpenStorage> {
  const directSlabs = new DirectSlabs();
  const opened = await storageKind(o.backend).open({
    ...(o.cacheDir !== undefined ? { dir: o.cacheDir } : {}),
    ioMode: o.ioMode,
    chunkBytes: IO_CHUNK_BYTES,
    stagingSlots: o.slots.staging,
    directSlabs,
    ...(o.objectStore !== undefined ? { objectStore: o.objectStore } : {}),
    ...(o.pool !== undefined ? { pool: o.pool } : {}),
    ...(o.slab !== undefined ? { slab: o.slab } : {}),
    ...(o.fanout === true ? { fanout: true } : {}),
    ...(o.fileCalls !== undefined ? { fileCalls: o.fileCalls } : {}),
    ...(o.tracesSystemCalls === true ? { tracesSystemCalls: true } : {}),
    ...(o.madeDir !== undefined ? { madeDir: o.madeDir } : {}),
    ...(o.metadataOps !== undefined ? { metadataOps: o.metadataOps } : {}),
  });
  try {
    const payload = await PayloadPool.create({
      seed: o.seed,
      workers: Math.max(1, availableParallelism()),
      chunkBytes: IO_CHUNK_BYTES,
      slots: o.slots.payload,
      readahead: PAYLOAD_READAHEAD,
      ...(o.filler !== undefined ? { filler: o.filler } : {}),
      ...(opened.probeDir !== undefined ? { probeDir: opened.probeDir } : {}),
      directSlabs,
    });
    return { opened, payload, directSlabs, target: await targetOf(opened.description) };
  } catch (e) {
    await opened.backend.close().catch(() => undefined);
    throw e;
  }
}

/** A run's assembled tiers, ready to measure. */
export interface TierStack {
  readonly cache: TieredCache;
  readonly storage: StorageTarget;
  readonly memory: MemoryPlan;
  /** The I/O trace being written (--io-trace-log); closed by the run, which reports its row count. */
  readonly trace?: TraceWriter;
  readonly warnings: readonly string[];
  /** Entries of earlier runs found at start; absent in trace mode, null for a kind that keeps none. */
  readonly staleEntries?: LeftoverEntries | null;
  /** Watches for a full storage tier; absent in trace mode (no storage). */
  readonly storageFull?: StorageFullWatch;
  /** The payload generator's figures (reset after preparation); absent in trace mode. */
  readonly payload?: { readonly stats: PayloadGeneration; resetStats(): void };
  /** Where this run's entry files are (a force-quit removes them); absent in trace mode. */
  readonly entryFiles?: EntryFilesAt;
  /** An object store's account of its traffic (kvcache_bench.object_store); absent for other kinds. */
  readonly objectStore?: () => ObjectStoreReport;
  /** The file tier's threadpool use and staging waits (reset after preparation); absent for other kinds and in trace mode. */
  readonly fileIo?: FileIoFigures;
  /** A shared pool (--kv-pool shared): what it held at start, and this rank's share of its capacity. */
  readonly pool?: { readonly atStart: PoolAtStart; readonly shareBytes: number; readonly place: RankPlace };
  /** Lays a slab pool out (once, after the force-quit clean-up knows its files, before anything is written); absent for other layouts. */
  readonly layOut?: (signal?: AbortSignal) => Promise<void>;
  /** A slab pool's account (kvcache_bench.slab); absent for other layouts. */
  readonly slab?: () => SlabReport;
  close(): Promise<void>;
  /** Where this run's own objects are in an object store (OpenedStorage.objectsAt). */
  readonly objectsAt?: string;
  /** After close(): what the storage backend could not remove of its own (an object store that stopped answering). */
  readonly leftBehind?: () => LeftBehind | undefined;
}

/** The tiers of a run with `concurrency` requests in flight: real devices, or null tiers in trace mode. */
export async function assembleTiers(
  cfg: RunConfig,
  recorder: Recorder,
  clock: Clock,
  concurrency: number,
  madeDir?: (at: EntryFilesAt) => void,
  place: RankPlace = ONE_RANK,
): Promise<TierStack> {
  return cfg.ioTraceLog !== undefined
    ? assembleTraceTiers(cfg, recorder, clock, cfg.ioTraceLog)
    : assembleDeviceTiers(cfg, recorder, clock, concurrency, place, madeDir);
}

/** The pool a run opens, if --kv-pool shared: its blocks' identity (model, block size, bytes per token on this rank). */
function poolOptionsOf(cfg: RunConfig): PoolOpenOptions | undefined {
  const blockTokens = runBlockTokens(cfg);
  if (cfg.kvPool !== 'shared' || blockTokens === undefined) return undefined;
  const bytesPerToken = kvBytesPerToken(cfg.model) / Math.max(1, cfg.tensorParallel);
  return { identity: { model: cfg.model.key, blockTokens, bytesPerToken }, keep: cfg.keepPool };
}

/** The cache over `tiers`, with the run's model, eviction and allocation settings. */
function cacheOver(
  cfg: RunConfig,
  recorder: Recorder,
  clock: Clock,
  tiers: CacheTier[],
  payload: CacheOptions['payload'],
  observer?: CacheOptions['observer'],
  onFailure?: CacheOptions['onFailure'],
): TieredCache {
  return new TieredCache({
    tiers,
    bytesPerToken: kvBytesPerToken(cfg.model),
    tensorParallel: cfg.tensorParallel,
    payload,
    recorder,
    clock,
    eviction: cfg.settings.eviction,
    ...(observer !== undefined ? { observer } : {}),
    ...(onFailure !== undefined ? { onFailure } : {}),
    ...(cfg.maxConcurrentAllocs > 0 ? { allocSemaphore: new Semaphore(cfg.maxConcurrentAllocs) } : {}),
  });
}

/**
 * Trace mode (docs/reference-compat.md#rc-19): every tier is a NullBackend (sizes only, no time), the GPU tier always
 * exists, storage is unlimited unless --storage-capacity-gb; every tier operation goes to the trace.
 */
async function assembleTraceTiers(cfg: RunConfig, recorder: Recorder, clock: Clock, tracePath: string): Promise<TierStack> {
  const trace = await TraceWriter.open(tracePath);
  const noBytes: ChunkSource = {
    size: 0,
    chunks: async function* () {
      // trace mode moves no bytes
    },
  };
  const tiers: CacheTier[] = [
    { backend: new NullBackend('gpu'), limitBytes: gibToBytes(cfg.gpuMemGb * cfg.numGpus) },
    { backend: new NullBackend('cpu'), limitBytes: gibToBytes(cfg.cpuMemGb) },
    { backend: new NullBackend('storage'), limitBytes: cfg.storageCapacityGb > 0 ? gibToBytes(cfg.storageCapacityGb) : Infinity },
  ];
  const cache = cacheOver(cfg, recorder, clock, tiers, (_k, n) => ({ ...noBytes, size: n }), trace.observe);
  const parts: StackParts = { tiers: cache, trace };
  return {
    cache,
    storage: TRACE_MODE_STORAGE,
    memory: planMemory(0, 0, availableMemoryBytes()),
    trace,
    warnings: [],
    close: () => tearDown(parts),
  };
}

/** The slab pool's shape of --kv-layout slab, as StorageOptions takes it. */
function slabOf(cfg: RunConfig): { slab?: SlabLayoutOptions } {
  const slab = slabOptionsOf(cfg);
  return slab !== undefined ? { slab } : {};
}

/** Simulated GPU (when sized), CPU memory, and the storage backend of --storage-backend. */
async function assembleDeviceTiers(
  cfg: RunConfig,
  recorder: Recorder,
  clock: Clock,
  concurrency: number,
  place: RankPlace,
  madeDir?: (at: EntryFilesAt) => void,
): Promise<TierStack> {
  const slots = slotCounts(concurrency);
  const pool = poolOptionsOf(cfg);
  const storage = await openStorage({
    backend: cfg.storageBackend,
    ...(cfg.cacheDir !== undefined ? { cacheDir: cfg.cacheDir } : {}),
    ioMode: cfg.ioMode,
    filler: cfg.payloadFiller,
    seed: cfg.seed,
    slots,
    objectStore: objectStoreOptionsOf(cfg),
    ...(pool !== undefined ? { pool } : {}),
    ...slabOf(cfg),
    ...(cfg.kvLayout === 'fanout' ? { fanout: true } : {}),
    fileCalls: cfg.fileCalls,
    ...(cfg.enableLatencyTracing ? { tracesSystemCalls: true } : {}),
    ...(madeDir !== undefined ? { madeDir } : {}),
    metadataOps: recordingMetadata(recorder),
  });
  const { opened, payload } = storage;
  const parts: StackParts = { payload, tiers: opened.backend };
  try {
    const warnings = [...opened.warnings];
    // Before the default capacity is computed: removed leftovers free their space for this run.
    const stale = await opened.leftovers(cfg.removeStaleEntries);
    warnings.push(...stale.warnings);
    const storageFull = new StorageFullWatch(opened.fullness);
    const memory = planMemory(gibToBytes(cfg.cpuMemGb), (slots.staging + slots.payload) * IO_CHUNK_BYTES, availableMemoryBytes());
    if (!memory.ok) warnings.push(memory.lines[memory.lines.length - 1] ?? 'CPU tier capped');

    const tiers: CacheTier[] = [];
    if (cfg.gpuMemGb > 0) {
      // No CUDA here: the GPU tier is the bandwidth model of docs/reference-compat.md#rc-7, always present when sized.
      tiers.push({
        backend: new SimulatedGpuBackend((k, n) => payload.source(k, n), cfg.gpuBandwidthGbs),
        limitBytes: gibToBytes(cfg.gpuMemGb * cfg.numGpus),
      });
    }
    // CPU-tier copies run on worker threads, on pages the storage backend can write without a bounce copy.
    const copier = memory.cpuLimitBytes > 0 ? await CopyPool.create(Math.max(1, availableParallelism())) : undefined;
    parts.copier = copier;
    tiers.push({
      backend: new MemoryBackend('cpu', undefined, {
        ...(copier !== undefined ? { copier } : {}),
        ...(opened.probeDir !== undefined ? { probeDir: opened.probeDir } : {}),
        directSlabs: storage.directSlabs,
        reserveBytes: memory.cpuLimitBytes,
      }),
      limitBytes: memory.cpuLimitBytes,
    });
    // A shared pool's capacity is the whole pool's: each rank publishes (and evicts) within its share.
    const poolLimit = await opened.limitBytes(gibToBytes(cfg.storageCapacityGb));
    const storageLimit = pool !== undefined && Number.isFinite(poolLimit) ? Math.floor(poolLimit / place.worldSize) : poolLimit;
    tiers.push({ backend: opened.backend, limitBytes: storageLimit });
    const cache = cacheOver(cfg, recorder, clock, tiers, (k, n) => payload.source(k, n), undefined, storageFull.onFailure);
    parts.tiers = cache;
    return {
      cache,
      storage: storage.target,
      memory,
      warnings,
      staleEntries: stale.found,
      storageFull,
      payload,
      ...(opened.entryFiles !== undefined ? { entryFiles: opened.entryFiles } : {}),
      ...(opened.objectsAt !== undefined ? { objectsAt: opened.objectsAt } : {}),
      ...(opened.objectStore !== undefined ? { objectStore: opened.objectStore } : {}),
      ...(opened.fileIo !== undefined ? { fileIo: opened.fileIo } : {}),
      ...(stale.pool !== undefined ? { pool: { atStart: stale.pool, shareBytes: storageLimit, place } } : {}),
      ...(opened.layOut !== undefined ? { layOut: opened.layOut } : {}),
      ...(opened.slab !== undefined ? { slab: opened.slab } : {}),
      close: () => tearDown(parts),
      leftBehind: () => opened.backend.leftBehind?.(),
    };
  } catch (e) {
    await tearDown(parts, true);
    throw e;
  }
}
