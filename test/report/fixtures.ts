// A RunResult made by hand from a real Recorder and RequestMetrics with known counts, for the tests of
// the results document and of the reports built from it.
import { Recorder } from '../../src/metrics/recorder.js';
import type { MachineContext, RunResult } from '../../src/metrics/result.js';
import { RequestMetrics } from '../../src/metrics/request-metrics.js';
import type { RequestSample } from '../../src/metrics/request-metrics.js';
import { GiB, MiB } from '../../src/util/units.js';

export const FIXTURE_MACHINE: MachineContext = {
  cpuModel: 'Test CPU @ 3.0GHz',
  cpuCount: 6,
  totalMemoryBytes: 16 * GiB,
  kernelRelease: '6.1.0-test',
  nodeVersion: 'v20.0.0',
  ioBuffers: '2 MiB transparent huge pages (advised: enabled = madvise)',
  cacheDir: { fileSystem: 'ext2/3/4', blockDevice: 'nvme9n1', deviceModel: 'Test NVMe 1TB' },
};

const sample = (qos: string, e2eMs: number, storageMs: number, tokens: number, generationMs: number): RequestSample => ({
  qos,
  e2eMs,
  queueMs: 1,
  storageMs,
  generationMs,
  prefillMs: storageMs / 2,
  generatedTokens: tokens,
  contextTokens: 10 * tokens,
  multiTurnHits: 1,
  multiTurnMisses: 0,
});

/**
 * A 10-second storage-only run: 4 requests of 100 tokens with 500 ms of storage time each (2 s in
 * all), one multi-turn miss (an aborted request) besides the 4 hits, 2 GiB placed and 1 GiB demoted
 * into storage, 3 GiB of hits and 1 GiB demoted out of it, 10 storage reads of 1.5 ms and 5 writes of
 * 2 ms. Latencies stay under 2.048 ms, where the HDR histograms are exact to the microsecond.
 * `generationMs` is every request's simulated generation time (0: a storage-only run, as by default).
 */
export function runResultFixture(options: { keepRawSamples?: boolean; generationMs?: number } = {}): RunResult {
  const recorder = new Recorder();
  const c = recorder.counters;
  Object.assign(c, { cacheHits: 30, cacheMisses: 10, prefillWrites: 5, decodeReads: 10, writeOperations: 5, readOperations: 10 });
  Object.assign(c, {
    totalReadBytes: 3 * GiB,
    totalWriteBytes: 2 * GiB,
    offloadsStorage: 5,
    evictions: 2,
    multiTurnHits: 4,
    storageTokensProcessed: 1234.5,
  });
  Object.assign(recorder.traffic.storage, {
    writeOps: 5,
    writeBytes: 2 * GiB,
    readOps: 10,
    readBytes: 3 * GiB,
    demoteInOps: 1,
    demoteInBytes: GiB,
    demoteOutOps: 1,
    demoteOutBytes: GiB,
  });
  for (let i = 0; i < 10; i++) recorder.recordIo('storage', 'read', { totalMs: 1.5, deviceMs: 1.25, hostMs: 0.25 });
  for (let i = 0; i < 5; i++) recorder.recordIo('storage', 'write', { totalMs: 2, deviceMs: 1.5, hostMs: 0.5 });

  const run = new RequestMetrics(
    { interactive: { targetP95Ms: 1 }, responsive: { targetP95Ms: 2 }, batch: { targetP95Ms: 10 } },
    options.keepRawSamples ?? false,
  );
  const generationMs = options.generationMs ?? 0;
  for (const e2e of [0.5, 1.5]) run.record(sample('interactive', e2e, 500, 100, generationMs));
  for (const e2e of [1, 1.25]) run.record(sample('responsive', e2e, 500, 100, generationMs));
  run.recordAborted(0, 1);

  return {
    toolVersion: '9.9.9',
    startedAt: '2026-01-02T03:04:05.000Z',
    seed: 42,
    modelKey: 'tiny-1b',
    bytesPerToken: 4096,
    performanceProfile: 'latency',
    effectiveConfig: { args: { num_users: 4, seed: 42 }, model: { name: 'tiny' }, config: { qos_profiles: {} } },
    stopReason: 'max_requests',
    elapsedSec: 10,
    nominalDurationSec: 60,
    recorded: recorder.snapshot(),
    requests: run.snapshot(),
    occupancy: { storage: { entries: 5, usedBytes: 5 * GiB, limitBytes: Infinity } },
    entrySizes: { count: 5, minBytes: MiB, meanBytes: 1.5 * MiB, p95Bytes: 2 * MiB, maxBytes: 2 * MiB },
    conversationsLost: 0,
    eventLoopDelayMs: { mean: 0.5, p50: 0.25, p99: 2, max: 4 },
    device: {
      name: 'nvme9n1',
      delta: {
        name: 'nvme9n1',
        major: 259,
        minor: 0,
        readOps: 40,
        readMerges: 0,
        readBytes: 4 * GiB,
        readMs: 100,
        writeOps: 30,
        writeMerges: 0,
        writeBytes: 3 * GiB,
        writeMs: 80,
        inFlight: 0,
        busyMs: 150,
        weightedMs: 180,
        discardOps: 0,
        discardBytes: 0,
        flushOps: 5,
      },
    },
    storage: { dir: '/mnt/test/cache', ioMode: 'direct', fileSystem: 'ext2/3/4' },
    workers: 4,
    warnings: ['a warning'],
    workloadSource: { kind: 'synthetic' },
    machine: FIXTURE_MACHINE,
    mainThreadBusy: 0.25,
    storageSetup: { traceMode: false, ramFileSystem: false, capacityExplicit: false },
  };
}
