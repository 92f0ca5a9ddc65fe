// The validity checks, each on hand-built facts: a quiet, sound run passes every one; each fault
// trips exactly its own code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  byteMismatch,
  checkCutShort,
  checkDeviceBytes,
  checkDiskFull,
  checkFailedOps,
  checkHarness,
  checkPageCache,
  checkRamBackend,
  checkRamFileSystem,
  checkRunLength,
  checkSamples,
  checkTraceMode,
  validityFactsOf,
  validityOf,
} from '../../src/metrics/validity.js';
import type { ValidityFacts } from '../../src/metrics/validity.js';
import { GiB, MiB } from '../../src/util/units.js';
import { runResultFixture } from '../report/fixtures.js';

/** A sound 60-second direct-I/O run on a quiet ext4 device. */
const SOUND: ValidityFacts = {
  traceMode: false,
  ioMode: 'direct',
  fileSystem: 'ext2/3/4',
  ramFileSystem: false,
  toolReadBytes: 10 * GiB,
  toolWriteBytes: 4 * GiB,
  device: { name: 'nvme0n1', readBytes: 10 * GiB + 3 * MiB, writeBytes: 4 * GiB + 20 * MiB },
  storageReadSamples: 2000,
  storageWriteSamples: 1500,
  storageTransfers: 3500,
  failedOps: { gpu: 0, cpu: 0, storage: 0 },
  requestsCompleted: 400,
  requestsAborted: 8,
  eventLoopDelayP99Ms: 1.5,
  mainThreadBusy: 0.1,
  capacityExplicit: false,
  storageLimitBytes: 100 * GiB,
  storageEvictDeletes: 0,
};

const codes = (v: ValidityFacts): string[] => {
  const r = validityOf(v);
  return [...r.reasons.map((x) => x.code), ...r.warnings.map((x) => `(warning) ${x.code}`)];
};

test('a sound run is VALID with no reason and no warning', () => {
  assert.deepEqual(validityOf(SOUND), { valid: true, reasons: [], warnings: [] });
});

test('device vs tool bytes: 5 % and 16 MiB of slack, beyond which the direction names the cause', () => {
  assert.equal(byteMismatch(105 * GiB, 100 * GiB), undefined, 'exactly 5 % over');
  assert.equal(byteMismatch(105 * GiB + 1, 100 * GiB), 'above');
  assert.equal(byteMismatch(95 * GiB - 1, 100 * GiB), 'below');
  assert.equal(byteMismatch(16 * MiB, 0), undefined, 'metadata of a run that moved nothing');
  assert.equal(byteMismatch(16 * MiB + 1, 0), 'above');

  // The case of issue 11: 21.3 GiB on the device against 7.6 GiB the tool moved.
  const busy: ValidityFacts = { ...SOUND, toolReadBytes: 7.6 * GiB, device: { name: 'vda', readBytes: 21.3 * GiB, writeBytes: 4 * GiB } };
  assert.deepEqual(checkDeviceBytes(busy), [
    {
      code: 'device_reads_exceed_tool',
      message:
        'vda read 21.300 GiB, the tool read 7.600 GiB (+180.3 %): another process read from the device during the run, and its load is in these latencies and device figures; rerun with the device otherwise idle',
      severity: 'reason',
    },
  ]);
  const writer: ValidityFacts = { ...SOUND, device: { name: 'vda', readBytes: 10 * GiB, writeBytes: 5 * GiB } };
  assert.deepEqual(codes(writer), ['device_writes_exceed_tool']);
  const lost: ValidityFacts = { ...SOUND, device: { name: 'vda', readBytes: 10 * GiB, writeBytes: 3 * GiB } };
  assert.deepEqual(codes(lost), ['device_writes_below_tool']);
  const directReadsElsewhere: ValidityFacts = { ...SOUND, device: { name: 'dm-0', readBytes: 0, writeBytes: 4 * GiB } };
  assert.deepEqual(codes(directReadsElsewhere), ['device_reads_below_tool']);
  assert.deepEqual(checkDeviceBytes(SOUND), []);
});

test("a file-per-block layout's metadata writes: named, not blamed on another process; a foreign writer beyond them still caught", () => {
  // Issue 34's case: 16 KiB blocks, one file each; the device wrote 0.869 GiB for the tool's 0.636 GiB.
  const small: ValidityFacts = {
    ...SOUND,
    toolWriteBytes: 0.636 * GiB,
    device: { name: 'vda', readBytes: 10 * GiB, writeBytes: 0.869 * GiB },
    metadataWrites: { newFiles: 40_000, bytesPerNewFile: 6 * 1024, newDirs: 0, bytesPerNewDir: 0 },
  };
  assert.deepEqual(checkDeviceBytes(small), [
    {
      code: 'device_writes_metadata',
      message:
        "vda wrote 0.869 GiB, the tool wrote 0.636 GiB (+36.6 %): the file system's own writes for the 40,000 files created in the window (at most 6.0 KiB each), as calibrated on its file system: up to 0.229 GiB account for the difference (file-per-block layouts pay them; --kv-layout slab does not)",
      severity: 'warning',
    },
  ]);
  assert.equal(validityOf(small).valid, true);
  // Another process writing 0.3 GiB on top: more than the metadata explains.
  const foreign: ValidityFacts = { ...small, device: { name: 'vda', readBytes: 10 * GiB, writeBytes: 1.169 * GiB } };
  const [found] = checkDeviceBytes(foreign);
  assert.equal(found?.code, 'device_writes_exceed_tool');
  assert.equal(found?.severity, 'reason');
  assert.match(
    found?.message ?? '',
    /\(\+83\.8 %\), more than the file system's own writes for the 40,000 files created .* explain: another process wrote to the device/,
  );
  // Without a calibration (or with no new files) the excess stays another process's.
  assert.deepEqual(codes({ ...small, metadataWrites: { newFiles: 0, bytesPerNewFile: 6144, newDirs: 0, bytesPerNewDir: 0 } }), [
    'device_writes_exceed_tool',
  ]);
  // Fanout: the directories made in the window are allowed for too.
  const fanout: ValidityFacts = {
    ...small,
    device: { name: 'vda', readBytes: 10 * GiB, writeBytes: 1.169 * GiB },
    metadataWrites: { newFiles: 40_000, bytesPerNewFile: 6 * 1024, newDirs: 30_000, bytesPerNewDir: 12 * 1024 },
  };
  assert.deepEqual(checkDeviceBytes(fanout)[0]?.code, 'device_writes_metadata');
  assert.match(
    checkDeviceBytes(fanout)[0]?.message ?? '',
    /40,000 files created in the window \(at most 6\.0 KiB each\) and 30,000 directories \(at most 12\.0 KiB each\), as calibrated on its file system: up to 0\.572 GiB/,
  );
  // XFS writes its metadata home lazily, beyond the calibration: still NOT VALID, but not blamed on another process alone.
  const [xfs] = checkDeviceBytes({ ...foreign, fileSystem: 'xfs' });
  assert.equal(xfs?.code, 'device_writes_exceed_tool');
  assert.match(
    xfs?.message ?? '',
    /explain: xfs writes inodes and directory blocks home lazily, which the calibration cannot see, so the excess is its own metadata or another process's writes, not told apart; --kv-layout slab/,
  );
  assert.match(checkDeviceBytes({ ...foreign, fileSystem: 'ext2/3/4' })[0]?.message ?? '', /explain: another process wrote to the device/);
  const { metadataWrites: _m, ...uncalibrated } = small;
  assert.deepEqual(codes(uncalibrated), ['device_writes_exceed_tool']);
  // Reads are never explained by metadata.
  assert.deepEqual(codes({ ...small, device: { name: 'vda', readBytes: 12 * GiB, writeBytes: 0.869 * GiB } }), [
    'device_reads_exceed_tool',
    '(warning) device_writes_metadata',
  ]);
});

test('an unresolvable device is a warning (nothing to compare), except on a RAM file system and in trace mode', () => {
  const { device: _d, ...noDevice } = SOUND;
  assert.deepEqual(checkDeviceBytes({ ...noDevice, fileSystem: 'overlayfs' }), [
    {
      code: 'device_unknown',
      message: "the cache dir's block device could not be resolved (overlayfs): device bytes could not be checked against the tool's",
      severity: 'warning',
    },
  ]);
  assert.deepEqual(checkDeviceBytes({ ...noDevice, ramFileSystem: true }), []);
  assert.deepEqual(checkDeviceBytes({ ...noDevice, traceMode: true }), []);
});

test('buffered I/O is a warning; buffered reads the device never saw are the page cache (a reason)', () => {
  const buffered: ValidityFacts = { ...SOUND, ioMode: 'buffered' };
  assert.deepEqual(codes(buffered), ['(warning) buffered_io']);
  const cached: ValidityFacts = { ...buffered, device: { name: 'vda', readBytes: 2 * GiB, writeBytes: 4 * GiB } };
  assert.deepEqual(checkPageCache(cached), [
    {
      code: 'buffered_io',
      message: 'buffered I/O (--io-mode buffered or O_DIRECT refused): reads may be served from the page cache',
      severity: 'warning',
    },
    {
      code: 'reads_from_page_cache',
      message:
        'vda read 2.000 GiB while the tool read 10.000 GiB with buffered I/O: 80.0 % of the reads came from the page cache (RAM); use --io-mode direct',
      severity: 'reason',
    },
  ]);
  assert.deepEqual(codes(cached), ['reads_from_page_cache', '(warning) buffered_io'], 'not also device_reads_below_tool');
  assert.deepEqual(checkPageCache(SOUND), []);
});

test('a storage backend kept in RAM is a reason, and no device to compare is then not a warning', () => {
  const { device: _d, ...noDevice } = SOUND;
  const memory: ValidityFacts = { ...noDevice, fileSystem: 'none (RAM)', ioMode: 'none (memory backend)', ramBackend: 'memory' };
  assert.deepEqual(checkRamBackend(memory), [
    {
      code: 'ram_storage_backend',
      message:
        "--storage-backend memory keeps the storage tier's entries in RAM: this measured memory and the harness, not a storage device; use --storage-backend file with --cache-dir on the device under test",
      severity: 'reason',
    },
  ]);
  assert.deepEqual(checkDeviceBytes(memory), []);
  assert.deepEqual(codes(memory), ['ram_storage_backend']);
  assert.deepEqual(checkRamBackend({ ...memory, traceMode: true }), [], 'trace mode says it once, as trace_mode');
  assert.deepEqual(checkRamBackend(SOUND), []);
  const r = runResultFixture();
  assert.equal(validityFactsOf({ ...r, storageSetup: { ...r.storageSetup, ramBackend: 'memory' } }).ramBackend, 'memory');
});

test('a RAM file system is a reason', () => {
  const { device: _d, ...noDevice } = SOUND;
  const tmpfs: ValidityFacts = { ...noDevice, fileSystem: 'tmpfs', ramFileSystem: true };
  assert.deepEqual(checkRamFileSystem(tmpfs), [
    {
      code: 'ram_file_system',
      message: 'the cache dir is on tmpfs, a RAM file system: this measured memory; point --cache-dir at the device under test',
      severity: 'reason',
    },
  ]);
  assert.deepEqual(codes(tmpfs), ['ram_file_system']);
  assert.deepEqual(checkRamFileSystem(SOUND), []);
});

test('samples: a p95 needs 20 (a reason below), a p99 100 and a p99.9 1,000 (a warning below, per percentile)', () => {
  assert.deepEqual(checkSamples({ ...SOUND, storageReadSamples: 19, storageWriteSamples: 0 }), [
    {
      code: 'too_few_samples',
      message:
        'storage latency samples (read 19) are under the 20 a p95 needs: the reported p95 is just the slowest sample; run longer or with more users',
      severity: 'reason',
    },
  ]);
  assert.deepEqual(checkSamples({ ...SOUND, storageReadSamples: 20, storageWriteSamples: 999 }), [
    {
      code: 'few_samples_for_tail',
      message:
        'too few storage latency samples for the tail percentiles: a p99 needs 100 (read 20); a p99.9 needs 1,000 (read 20, write 999); those fields are the slowest samples, not percentiles',
      severity: 'warning',
    },
  ]);
  assert.deepEqual(
    checkSamples({ ...SOUND, storageReadSamples: 1000, storageWriteSamples: 0 }),
    [],
    'no writes: no write percentile reported',
  );
});

test('failed operations on any tier are a reason, listed per tier', () => {
  assert.deepEqual(checkFailedOps({ ...SOUND, failedOps: { gpu: 0, cpu: 1, storage: 3 } }), [
    {
      code: 'failed_operations',
      message:
        "4 tier operations failed (cpu 1, storage 3): what they were to move was not stored or read, so the run measured a partly failing system; see the run's warnings and fix the cause (full disk, permissions, I/O errors)",
      severity: 'reason',
    },
  ]);
  assert.deepEqual(checkFailedOps(SOUND), []);
});

test('more requests cut short at the stop than completed is a reason; as many is not', () => {
  assert.deepEqual(checkCutShort({ ...SOUND, requestsAborted: 5, requestsCompleted: 5 }), []);
  assert.deepEqual(
    checkCutShort({ ...SOUND, requestsAborted: 6, requestsCompleted: 5 }).map((f) => [f.code, f.message]),
    [
      [
        'requests_cut_short',
        'more requests were cut short at the stop (6) than completed (5): a request outlasts the run, so the figures cover beginnings of requests; raise --duration or lower --num-users',
      ],
    ],
  );
});

test('harness saturated: event-loop p99 over 20 ms or the main thread over 90 % busy', () => {
  assert.deepEqual(checkHarness({ ...SOUND, eventLoopDelayP99Ms: 20, mainThreadBusy: 0.9 }), [], 'at the limits');
  assert.deepEqual(
    checkHarness({ ...SOUND, eventLoopDelayP99Ms: 26.04, mainThreadBusy: 0.95 }).map((f) => f.message),
    [
      'the benchmark itself was a bottleneck: event-loop delay p99 26.0 ms (limit 20 ms); main thread busy 95.0 % of the window (limit 90.0 %): latencies include time waiting for the harness; use fewer users or an otherwise idle host',
    ],
  );
  assert.deepEqual(codes({ ...SOUND, mainThreadBusy: 0.91 }), ['harness_saturated']);
});

test('harness saturated: writes that waited for payload bytes over 10 % of their time', () => {
  assert.deepEqual(checkHarness({ ...SOUND, payloadWaitShare: 0.1 }), [], 'at the limit');
  assert.deepEqual(
    checkHarness({ ...SOUND, payloadWaitShare: 0.2 }).map((f) => f.message),
    [
      'the benchmark itself was a bottleneck: writes waited for payload bytes 20.0 % of their time (limit 10.0 %): payload generation, not the device, set the write figure: latencies include time waiting for the harness; use fewer users or an otherwise idle host',
    ],
  );
  // From a run: the fixture's 5 storage writes of 2 ms each (10 ms) and 2.5 ms of waiting: 2.5 / 12.5.
  const r = runResultFixture();
  const payload = { filler: '2 worker threads', stampedBytes: 3 * MiB, copiedBytes: MiB, consumerWaitMs: 2.5, chunksWaitedFor: 2 };
  assert.equal(validityFactsOf({ ...r, payload }).payloadWaitShare, 0.2);
  assert.ok(codes(validityFactsOf({ ...r, payload })).includes('harness_saturated'));
  assert.ok(!codes(validityFactsOf(r)).includes('harness_saturated'));
  assert.equal(validityFactsOf(r).payloadWaitShare, undefined, 'no payload figures (trace mode): no share');
});

test('harness saturated: file calls queued for a libuv thread, or reads waiting for a staging buffer, over 10 %', () => {
  const at = { poolThreads: 4, poolQueuedShare: 0.1, stagingWaitShare: 0.1 };
  assert.deepEqual(checkHarness({ ...SOUND, fileIo: at }), [], 'at the limits');
  assert.deepEqual(
    checkHarness({ ...SOUND, fileIo: { ...at, poolQueuedShare: 0.5 } }).map((f) => f.message),
    [
      "the benchmark itself was a bottleneck: file calls queued for one of libuv's 4 threads 50.0 % of the window (limit 10.0 %; UV_THREADPOOL_SIZE): the queueing is inside the latencies: latencies include time waiting for the harness; use fewer users or an otherwise idle host",
    ],
  );
  assert.match(
    checkHarness({ ...SOUND, fileIo: { ...at, stagingWaitShare: 0.25 } })[0]?.message ?? '',
    /storage operations waited for a staging buffer 25\.0 % of their time/,
  );
  // From a run: 10 s measured, 3 s queued; the fixture's storage reads take 1 ms each, the waits as long.
  const r = runResultFixture();
  const fileIo = { poolThreads: 1, maxInFlight: 9, queuedMs: 3000, callsQueued: 40, stagingWaitMs: 0, stagingWaits: 0 };
  const facts = validityFactsOf({ ...r, fileIo });
  assert.deepEqual(facts.fileIo, { poolThreads: 1, poolQueuedShare: 0.3, stagingWaitShare: 0 });
  assert.ok(codes(facts).includes('harness_saturated'));
  assert.equal(validityFactsOf(r).fileIo, undefined, 'no file tier: no shares');
});

test('storage evictions with the default capacity mean the disk filled; with --storage-capacity-gb they are the intent', () => {
  const full: ValidityFacts = { ...SOUND, storageEvictDeletes: 12, storageLimitBytes: 50 * GiB };
  assert.deepEqual(
    checkDiskFull(full).map((f) => [f.code, f.message]),
    [
      [
        'storage_capacity_reached',
        'the storage tier filled its default capacity (95 % of the free space, 50.000 GiB) and deleted 12 entries to make room: the file system ran nearly full, which the workload did not ask for; free space, or set --storage-capacity-gb to make eviction part of the workload',
      ],
    ],
  );
  assert.deepEqual(checkDiskFull({ ...full, capacityExplicit: true }), []);
});

test('run length: no storage transfer, fewer than 20, and 20', () => {
  assert.deepEqual(codes({ ...SOUND, storageTransfers: 0, storageReadSamples: 0, storageWriteSamples: 0 }), ['no_storage_io']);
  assert.deepEqual(
    checkRunLength({ ...SOUND, storageTransfers: 19 }).map((f) => f.message),
    ['only 19 whole-entry storage transfers completed (at least 20 are needed for a bandwidth or a p95): raise --duration or --num-users'],
  );
  assert.deepEqual(checkRunLength({ ...SOUND, storageTransfers: 20 }), []);
});

test('trace mode: its own reason, and no storage check speaks about bytes or samples that were never real', () => {
  const { device: _d, ...noDevice } = SOUND;
  const trace: ValidityFacts = {
    ...noDevice,
    traceMode: true,
    ioMode: 'none (trace mode)',
    fileSystem: 'none',
    storageTransfers: 5,
    storageReadSamples: 3,
    storageWriteSamples: 2,
    storageEvictDeletes: 4,
  };
  assert.deepEqual(
    checkTraceMode(trace).map((f) => f.code),
    ['trace_mode'],
  );
  assert.deepEqual(checkTraceMode(SOUND), []);
  assert.deepEqual(codes(trace), ['trace_mode']);
});

test('several faults: every reason in check order, valid false', () => {
  const v = validityOf({ ...SOUND, failedOps: { gpu: 0, cpu: 0, storage: 1 }, storageTransfers: 3, requestsAborted: 500 });
  assert.equal(v.valid, false);
  assert.deepEqual(
    v.reasons.map((r) => r.code),
    ['failed_operations', 'requests_cut_short', 'run_too_short'],
  );
});

test('validityFactsOf reads the run: tool bytes with demotions, verdict histogram samples, tiers, setup', () => {
  const r = runResultFixture();
  assert.deepEqual(validityFactsOf(r), {
    traceMode: false,
    ioMode: 'direct',
    fileSystem: 'ext2/3/4',
    ramFileSystem: false,
    toolReadBytes: 4 * GiB,
    toolWriteBytes: 3 * GiB,
    device: { name: 'nvme9n1', readBytes: 4 * GiB, writeBytes: 3 * GiB },
    storageReadSamples: 10,
    storageWriteSamples: 5,
    storageTransfers: 15,
    failedOps: { gpu: 0, cpu: 0, storage: 0 },
    requestsCompleted: 4,
    requestsAborted: 1,
    eventLoopDelayP99Ms: 2,
    mainThreadBusy: 0.25,
    capacityExplicit: false,
    storageLimitBytes: 0,
    storageEvictDeletes: 0,
  });
});
