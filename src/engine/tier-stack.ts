// The storage side of a run or a replay, assembled in one place: the storage directory and file tier,
// the payload generator pool that fills its writes, the CPU tier and its copy threads, the simulated
// GPU — or, in trace mode, null tiers and the I/O trace. Everything made here is released by
// `tearDown`, in the order it spells out.
import { availableParallelism } from 'node:os';
import { storageLimitBytes } from '../cache/capacity.js';
import { TieredCache } from '../cache/tiered-cache.js';
import type { CacheOptions, CacheTier } from '../cache/tiered-cache.js';
import { CopyPool } from '../data/copy-pool.js';
import { PayloadPool } from '../data/payload-pool.js';
import type { Recorder } from '../metrics/recorder.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { DirectSlabs } from '../data/aligned.js';
import { FileBackend, RAM_FILE_SYSTEMS, READS_IN_FLIGHT, findStaleEntries, removeStaleEntries } from '../tiers/file.js';
import type { IoMode } from '../settings/choices.js';
import { MemoryBackend } from '../tiers/memory.js';
import { NullBackend } from '../tiers/null.js';
import { SimulatedGpuBackend } from '../tiers/simulated-gpu.js';
import { TraceWriter } from '../trace/writer.js';
import type { Clock } from '../util/clock.js';
import { Semaphore } from '../util/lock.js';
import { GiB, gibToBytes, MiB } from '../util/units.js';
import { availableMemoryBytes, planMemory } from './memory-check.js';
import type { MemoryPlan } from './memory-check.js';
import type { RunConfig } from '../settings/run-config.js';
import { StorageFullWatch } from './storage-full.js';
import { entryFilesOf } from './entry-cleanup.js';
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

export function slotCounts(concurrency: number): SlotCounts {
  return { staging: Math.max(4, Math.min(READS_IN_FLIGHT * concurrency + 4, 64)), payload: Math.max(8, Math.min(2 * concurrency, 64)) };
}

/** Where the storage tier lives; `dir` undefined in trace mode (no real I/O). */
export interface StorageInfo {
  readonly dir?: string;
  readonly ioMode: string;
  readonly fileSystem: string;
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
  /** The tiers: the cache once made (it closes every backend; the file tier deletes its entry files), the bare file tier before. */
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

/** The file tier and the payload pool that fills its writes: all a replay needs, and a run's last tier. */
export interface FileStorage {
  readonly file: FileBackend;
  readonly payload: PayloadPool;
  /** Payload slots and CPU-tier pages the file tier may write without a staging copy. */
  readonly directSlabs: DirectSlabs;
  readonly info: StorageInfo & { readonly dir: string };
}

export interface FileStorageOptions {
  /** Absent: a fresh temporary directory, removed at teardown. */
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  /** Seed of the payload bytes. */
  readonly seed: number;
  readonly slots: SlotCounts;
}

export async function openFileStorage(o: FileStorageOptions): Promise<FileStorage> {
  const directSlabs = new DirectSlabs();
  const file = await FileBackend.create({
    ...(o.cacheDir !== undefined ? { dir: o.cacheDir } : {}),
    ioMode: o.ioMode,
    chunkBytes: IO_CHUNK_BYTES,
    stagingSlots: o.slots.staging,
    directSlabs,
  });
  try {
    const payload = await PayloadPool.create({
      seed: o.seed,
      workers: Math.max(1, availableParallelism()),
      chunkBytes: IO_CHUNK_BYTES,
      slots: o.slots.payload,
      probeDir: file.dir,
      directSlabs,
    });
    return { file, payload, directSlabs, info: { dir: file.dir, ioMode: file.effectiveIoMode, fileSystem: file.fileSystem } };
  } catch (e) {
    await file.close().catch(() => undefined);
    throw e;
  }
}

/** A run's assembled tiers, ready to measure. */
export interface TierStack {
  readonly cache: TieredCache;
  readonly storage: StorageInfo;
  readonly memory: MemoryPlan;
  /** The I/O trace being written (--io-trace-log); closed by the run, which reports its row count. */
  readonly trace?: TraceWriter;
  readonly warnings: readonly string[];
  /** Entry files of earlier runs found in the cache dir at start; absent in trace mode. */
  readonly staleEntries?: StaleEntriesFound;
  /** Watches for a full storage tier; absent in trace mode (no file system). */
  readonly storageFull?: StorageFullWatch;
  /** Where this run's entry files are (a force-quit removes them); absent in trace mode. */
  readonly entryFiles?: EntryFilesAt;
  close(): Promise<void>;
}

/** What the start-up scan found of earlier runs' entry files, and whether they were removed. */
export interface StaleEntriesFound {
  readonly count: number;
  readonly bytes: number;
  readonly allocatedBytes: number;
  readonly removed: number;
}

/**
 * Looks for entry files of other runs in `file`'s directory (a killed run leaves them), removes them
 * when `remove` (--remove-stale-entries), and says so. Files not named as our entries are never touched.
 */
async function handleStaleEntries(file: FileBackend, remove: boolean): Promise<{ found: StaleEntriesFound; warnings: string[] }> {
  const stale = await findStaleEntries(file.dir, file.runId);
  const removed = remove ? await removeStaleEntries(stale) : 0;
  const found = { count: stale.paths.length, bytes: stale.bytes, allocatedBytes: stale.allocatedBytes, removed };
  if (found.count === 0) return { found, warnings: [] };
  const what = `${file.dir} held ${found.count} entry file(s) of earlier runs (kvc-<run id>-*.bin, ${(found.allocatedBytes / GiB).toFixed(3)} GiB on disk), e.g. from a killed run`;
  const action = remove
    ? `; ${removed} removed (--remove-stale-entries)`
    : '; left in place, taking that space from this run: remove them with --remove-stale-entries';
  return { found, warnings: [what + action] };
}

/** The tiers of a run with `concurrency` requests in flight: real devices, or null tiers in trace mode. */
export async function assembleTiers(cfg: RunConfig, recorder: Recorder, clock: Clock, concurrency: number): Promise<TierStack> {
  return cfg.ioTraceLog !== undefined
    ? assembleTraceTiers(cfg, recorder, clock, cfg.ioTraceLog)
    : assembleDeviceTiers(cfg, recorder, clock, concurrency);
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
    storage: { ioMode: 'none (trace mode)', fileSystem: 'none' },
    memory: planMemory(0, 0, availableMemoryBytes()),
    trace,
    warnings: [],
    close: () => tearDown(parts),
  };
}

function storageWarnings(requested: IoMode, file: FileBackend): string[] {
  const warnings: string[] = [];
  if (file.effectiveIoMode !== requested)
    warnings.push(`${file.dir}: the file system refused O_DIRECT; using buffered I/O (reads may come from the page cache)`);
  if (RAM_FILE_SYSTEMS.has(file.fileSystem)) warnings.push(`${file.dir} is on ${file.fileSystem}: this measures RAM, not a storage device`);
  return warnings;
}

/** Simulated GPU (when sized), CPU memory, and the file tier under --cache-dir. */
async function assembleDeviceTiers(cfg: RunConfig, recorder: Recorder, clock: Clock, concurrency: number): Promise<TierStack> {
  const slots = slotCounts(concurrency);
  const files = await openFileStorage({
    ...(cfg.cacheDir !== undefined ? { cacheDir: cfg.cacheDir } : {}),
    ioMode: cfg.ioMode,
    seed: cfg.seed,
    slots,
  });
  const { file, payload } = files;
  const parts: StackParts = { payload, tiers: file };
  try {
    const warnings = storageWarnings(cfg.ioMode, file);
    // Before the default capacity is computed: removed leftovers free their space for this run.
    const stale = await handleStaleEntries(file, cfg.removeStaleEntries);
    warnings.push(...stale.warnings);
    const storageFull = new StorageFullWatch(file.dir, file.fileSystem);
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
    // CPU-tier copies run on worker threads, on pages the file tier can write without a bounce copy.
    const copier = memory.cpuLimitBytes > 0 ? await CopyPool.create(Math.max(1, availableParallelism())) : undefined;
    parts.copier = copier;
    tiers.push({
      backend: new MemoryBackend('cpu', undefined, {
        ...(copier !== undefined ? { copier } : {}),
        probeDir: file.dir,
        directSlabs: files.directSlabs,
        reserveBytes: memory.cpuLimitBytes,
      }),
      limitBytes: memory.cpuLimitBytes,
    });
    tiers.push({ backend: file, limitBytes: await storageLimitBytes(cfg.storageCapacityGb, file.dir) });
    const cache = cacheOver(cfg, recorder, clock, tiers, (k, n) => payload.source(k, n), undefined, storageFull.onFailure);
    parts.tiers = cache;
    const entryFiles = entryFilesOf(file, cfg.cacheDir === undefined);
    return {
      cache,
      storage: files.info,
      memory,
      warnings,
      staleEntries: stale.found,
      storageFull,
      entryFiles,
      close: () => tearDown(parts),
    };
  } catch (e) {
    await tearDown(parts, true);
    throw e;
  }
}
