// Builds what a run needs from its RunConfig: the storage directory and file tier, the payload
// generator pool, the tier stack with capacities, and the workload objects. Owns nothing after
// teardown: every thread, buffer and file it made is released by `close`.
import { availableParallelism } from 'node:os';
import { storageLimitBytes } from '../cache/capacity.js';
import { TieredCache } from '../cache/tiered-cache.js';
import type { CacheTier } from '../cache/tiered-cache.js';
import { DirectSlabs } from '../data/aligned.js';
import { PayloadPool } from '../data/payload-pool.js';
import { CopyPool } from '../data/copy-pool.js';
import type { Recorder } from '../metrics/recorder.js';
import { kvBytesPerToken } from '../model/models.js';
import { FileBackend, RAM_FILE_SYSTEMS } from '../tiers/file.js';
import { MemoryBackend } from '../tiers/memory.js';
import { SimulatedGpuBackend } from '../tiers/simulated-gpu.js';
import type { Clock } from '../util/clock.js';
import { Semaphore } from '../util/lock.js';
import { NullBackend } from '../tiers/null.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { TraceWriter } from '../trace/writer.js';
import { GiB, MiB } from '../util/units.js';
import { availableMemoryBytes, planMemory } from './memory-check.js';
import type { MemoryPlan } from './memory-check.js';
import type { RunConfig } from '../settings/run-config.js';

/** Largest single I/O and payload chunk. */
export const IO_CHUNK_BYTES = 4 * MiB;
/** Worker (logical) count cap, as the reference (bin/kv-cache.cjs sizes libuv's pool with the same cap). */
export const MAX_WORKERS = 500;

/** Logical workers: one per user, for every user autoscaling may add (idle workers cost nothing), capped. */
function workerCount(cfg: RunConfig): number {
  const users = cfg.enableAutoscaling ? Math.max(cfg.numUsers, cfg.settings.autoscaler.maxUsers) : cfg.numUsers;
  return Math.min(users, MAX_WORKERS);
}

/** Where the storage tier lives; `dir` undefined in trace mode (no real I/O). */
export interface StorageInfo {
  readonly dir?: string;
  readonly ioMode: string;
  readonly fileSystem: string;
}

export interface RunSetup {
  readonly cache: TieredCache;
  readonly storage: StorageInfo;
  readonly memory: MemoryPlan;
  /** The I/O trace being written (--io-trace-log); closed by the run, which reports its row count. */
  readonly trace?: TraceWriter;
  readonly workers: number;
  readonly warnings: string[];
  close(): Promise<void>;
}

/**
 * Trace mode (spec §3.7): every tier is a NullBackend (sizes only, no time), the GPU tier always
 * exists, storage is unlimited unless --storage-capacity-gb; every tier operation goes to the trace.
 */
async function setupTraceMode(cfg: RunConfig, recorder: Recorder, clock: Clock, tracePath: string): Promise<RunSetup> {
  const trace = await TraceWriter.open(tracePath);
  const noBytes: ChunkSource = { size: 0, chunks: async function* () {} };
  const cache = new TieredCache({
    tiers: [
      { backend: new NullBackend('gpu'), limitBytes: cfg.gpuMemGb * cfg.numGpus * GiB },
      { backend: new NullBackend('cpu'), limitBytes: cfg.cpuMemGb * GiB },
      { backend: new NullBackend('storage'), limitBytes: cfg.storageCapacityGb > 0 ? cfg.storageCapacityGb * GiB : Infinity },
    ],
    bytesPerToken: kvBytesPerToken(cfg.model),
    tensorParallel: cfg.tensorParallel,
    payload: (_k, n) => ({ ...noBytes, size: n }),
    recorder,
    clock,
    eviction: cfg.settings.eviction,
    observer: trace.observe,
    ...(cfg.maxConcurrentAllocs > 0 ? { allocSemaphore: new Semaphore(cfg.maxConcurrentAllocs) } : {}),
  });
  return {
    cache,
    storage: { ioMode: 'none (trace mode)', fileSystem: 'none' },
    memory: planMemory(0, 0, availableMemoryBytes()),
    trace,
    workers: workerCount(cfg),
    warnings: [],
    close: async () => {
      await cache.close();
      await trace.close().catch(() => undefined); // closed (and reported) by the run normally
    },
  };
}

export async function setupRun(cfg: RunConfig, recorder: Recorder, clock: Clock): Promise<RunSetup> {
  if (cfg.ioTraceLog !== undefined) return setupTraceMode(cfg, recorder, clock, cfg.ioTraceLog);
  const warnings: string[] = [];
  const workers = workerCount(cfg);
  // One staging buffer per concurrent storage operation, bounded to keep memory predictable.
  const stagingSlots = Math.max(4, Math.min(workers + 4, 64));
  const payloadSlots = Math.max(8, Math.min(2 * workers, 64));
  // Payload slots and CPU-tier pages the file tier may write without a staging copy.
  const directSlabs = new DirectSlabs();
  const storage = await FileBackend.create({ ...(cfg.cacheDir !== undefined ? { dir: cfg.cacheDir } : {}), ioMode: cfg.ioMode, chunkBytes: IO_CHUNK_BYTES, stagingSlots, directSlabs });
  const storageCloser = (): Promise<void> => storage.close();
  const closers: Array<() => Promise<void>> = [storageCloser];
  try {
    if (storage.effectiveIoMode !== cfg.ioMode) warnings.push(`${storage.dir}: the file system refused O_DIRECT; using buffered I/O (reads may come from the page cache)`);
    if (RAM_FILE_SYSTEMS.has(storage.fileSystem)) warnings.push(`${storage.dir} is on ${storage.fileSystem}: this measures RAM, not a storage device`);
    const payload = await PayloadPool.create({ seed: cfg.seed, workers: Math.max(1, availableParallelism()), chunkBytes: IO_CHUNK_BYTES, slots: payloadSlots, probeDir: storage.dir, directSlabs });
    closers.unshift(() => payload.close());

    const memory = planMemory(cfg.cpuMemGb * GiB, (stagingSlots + payloadSlots) * IO_CHUNK_BYTES, availableMemoryBytes());
    if (!memory.ok) warnings.push(memory.lines[memory.lines.length - 1] ?? 'CPU tier capped');

    const tiers: CacheTier[] = [];
    if (cfg.gpuMemGb > 0) {
      // No CUDA here: the GPU tier is the bandwidth model of spec §3.8, always present when sized.
      tiers.push({ backend: new SimulatedGpuBackend((k, n) => payload.source(k, n), cfg.gpuBandwidthGbs), limitBytes: cfg.gpuMemGb * cfg.numGpus * GiB });
    }
    // CPU-tier copies run on worker threads, on pages the file tier can write without a bounce copy.
    const copier = memory.cpuLimitBytes > 0 ? await CopyPool.create(Math.max(1, availableParallelism())) : undefined;
    if (copier !== undefined) closers.push(() => copier.close());
    tiers.push({ backend: new MemoryBackend('cpu', undefined, { ...(copier !== undefined ? { copier } : {}), probeDir: storage.dir, directSlabs, reserveBytes: memory.cpuLimitBytes }), limitBytes: memory.cpuLimitBytes });
    tiers.push({ backend: storage, limitBytes: await storageLimitBytes(cfg.storageCapacityGb, storage.dir) });
    const cache = new TieredCache({
      tiers,
      bytesPerToken: kvBytesPerToken(cfg.model),
      tensorParallel: cfg.tensorParallel,
      payload: (k, n) => payload.source(k, n),
      recorder,
      clock,
      eviction: cfg.settings.eviction,
      ...(cfg.maxConcurrentAllocs > 0 ? { allocSemaphore: new Semaphore(cfg.maxConcurrentAllocs) } : {}),
    });
    // The cache closes every backend (the storage tier deletes its files); the pools are separate.
    closers.splice(closers.indexOf(storageCloser), 1, () => cache.close());
    return {
      cache,
      storage: { dir: storage.dir, ioMode: storage.effectiveIoMode, fileSystem: storage.fileSystem },
      memory,
      workers,
        warnings,
      close: async () => {
        for (const c of closers) await c();
      },
    };
  } catch (e) {
    for (const c of closers) await c().catch(() => undefined);
    throw e;
  }
}
