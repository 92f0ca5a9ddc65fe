// The validity verdict: is this run a measurement of the storage under --cache-dir? Each check is a
// small pure function over plain figures of the run (ValidityFacts, taken from a RunResult by
// validityFactsOf) and returns what it found. A finding is either a reason (the run is NOT VALID) or a
// warning (worth knowing, does not invalidate). Codes are stable snake_case identifiers; messages say
// what happened and what to do. The results builder emits the verdict; the console prints it last.
import { TIER_NAMES } from '../tiers/backend.js';
import type { TierName } from '../tiers/backend.js';
import { GiB, MiB } from '../util/units.js';
import { STORAGE_VERDICT_HISTOGRAMS, samplesOf } from './cache-stats.js';
import { kvReadBytes, kvWriteBytes } from './recorder.js';
import type { RecorderSnapshot } from './recorder.js';
import type { FileIoStats, RunResult } from './result.js';
import { allowedBytesPerNewFile } from './result.js';
import { MIN_SAMPLES, MIN_STORAGE_TRANSFERS } from './sample-minimums.js';

export interface ValidityFinding {
  readonly code: string;
  readonly message: string;
}

export interface Validity {
  readonly valid: boolean;
  /** Why the run is not valid; empty when it is. */
  readonly reasons: readonly ValidityFinding[];
  /** Worth knowing, not invalidating. */
  readonly warnings: readonly ValidityFinding[];
}

/** The plain figures the checks read. */
export interface ValidityFacts {
  readonly traceMode: boolean;
  /** The I/O mode in effect ('direct', 'buffered'; anything else in trace mode). */
  readonly ioMode: string;
  readonly fileSystem: string;
  readonly ramFileSystem: boolean;
  /** The storage backend keeping its entries in RAM (--storage-backend memory), by name; absent for a storage device. */
  readonly ramBackend?: string;
  /** The storage tier is an object store at this endpoint host: no block device stands behind it here. */
  readonly objectStoreHost?: string;
  /** What the storage tier moved, demotions included (kvcache_bench.storage_bytes). */
  readonly toolReadBytes: number;
  readonly toolWriteBytes: number;
  /** The cache dir's block device over the window; undefined when it could not be resolved. */
  readonly device?: { readonly name: string; readonly readBytes: number; readonly writeBytes: number };
  /** Samples of the storage histograms the verdicts judge (STORAGE_VERDICT_HISTOGRAMS). */
  readonly storageReadSamples: number;
  readonly storageWriteSamples: number;
  /** Completed whole-entry storage transfers: every timed storage read, write and demotion. */
  readonly storageTransfers: number;
  readonly failedOps: Readonly<Record<TierName, number>>;
  readonly requestsCompleted: number;
  readonly requestsAborted: number;
  readonly eventLoopDelayP99Ms: number;
  /** 0–1. */
  readonly mainThreadBusy: number;
  /**
   * Share of the writes' time spent waiting for payload bytes (wait ÷ (wait + the CPU and storage
   * tiers' write times)), 0–1; absent when nothing was generated (trace mode).
   */
  readonly payloadWaitShare?: number;
  /**
   * The file tier (absent for other kinds): share of the window during which its fs calls queued for
   * a libuv thread, and share of the storage operations' time spent waiting for a staging buffer, 0–1.
   */
  readonly fileIo?: { readonly poolQueuedShare: number; readonly poolThreads: number; readonly stagingWaitShare: number };
  /**
   * A file-per-block layout's own file-system writes (engine/metadata-calibration.ts): the new files
   * made in the window and the bytes the file system wrote per new file when calibrated before it.
   */
  readonly metadataWrites?: {
    readonly newFiles: number;
    readonly bytesPerNewFile: number;
    /** Directories made in the window (fan-out levels) and what each adds; 0 for flat. */
    readonly newDirs: number;
    readonly bytesPerNewDir: number;
  };
  readonly capacityExplicit: boolean;
  readonly storageLimitBytes: number;
  readonly storageEvictDeletes: number;
}

type Severity = 'reason' | 'warning';
type Found = ValidityFinding & { readonly severity: Severity };
type Check = (v: ValidityFacts) => Found[];

const reason = (code: string, message: string): Found => ({ code, message, severity: 'reason' });
const warning = (code: string, message: string): Found => ({ code, message, severity: 'warning' });

/** Device and tool bytes may differ by this share before the difference is attributed to something. */
export const DEVICE_BYTES_TOLERANCE = 0.05;
/**
 * ...and by at least this many bytes: file creation and deletion metadata, the journal's commits and
 * the system's own background writes add a few MiB that the tool does not count (measured on this VM:
 * +0.5 MB over 14.8 GB written), which would otherwise flag every short run.
 */
export const DEVICE_BYTES_SLACK = 16 * MiB;
/** Event-loop delay p99 above which the harness, not the storage, sets the pace (ms). */
export const MAX_LOOP_DELAY_P99_MS = 20;
/** Share of the window the main thread may be busy before it is the bottleneck. */
export const MAX_MAIN_THREAD_BUSY = 0.9;
/**
 * Share of their time writes may wait for payload bytes before the generator, not the device, sets
 * the write figure (a write's own timing never includes the wait: the bandwidth over the window does).
 */
export const MAX_PAYLOAD_WAIT_SHARE = 0.1;
/** Share of the window the file tier's calls may queue for a libuv thread (their latencies include it). */
export const MAX_POOL_QUEUED_SHARE = 0.1;
/** Share of their time storage operations may wait for a staging buffer (untimed, but the bandwidth pays it). */
export const MAX_STAGING_WAIT_SHARE = 0.1;

const gib = (b: number): string => `${(b / GiB).toFixed(3)} GiB`;
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

/** Device bytes beyond the tolerance and slack from the tool's: 'above', 'below' or undefined. */
export function byteMismatch(device: number, tool: number): 'above' | 'below' | undefined {
  const diff = device - tool;
  if (Math.abs(diff) <= Math.max(DEVICE_BYTES_TOLERANCE * tool, DEVICE_BYTES_SLACK)) return undefined;
  return diff > 0 ? 'above' : 'below';
}

/**
 * Device writes beyond the tolerance that the file system's own writes for the new files account for:
 * `metadataBytes` is the most those may add (a run's calibrated bill, or a host's ranks' together).
 */
export function metadataExplainsWrites(device: number, tool: number, metadataBytes: number): boolean {
  return metadataBytes > 0 && byteMismatch(device, tool) === 'above' && byteMismatch(device, tool + metadataBytes) !== 'above';
}

function relative(device: number, tool: number): string {
  return tool > 0 ? `${device > tool ? '+' : ''}${pct((device - tool) / tool)}` : 'the tool moved none';
}

/** Trace mode moves no bytes: nothing in it is a storage measurement. */
export const checkTraceMode: Check = (v) =>
  v.traceMode
    ? [
        reason(
          'trace_mode',
          'trace mode (--io-trace-log): every tier was a null back-end that moved no bytes, so no figure here measures storage; ' +
            'replay the trace with `kv-cache replay` or run without --io-trace-log to measure a device',
        ),
      ]
    : [];

/**
 * Whole-device counters vs what the tool moved: more on the device means another process used it
 * (its load is in our latencies); fewer reads in buffered mode means the page cache served them
 * (checkPageCache); fewer in direct mode or fewer writes means the bytes went elsewhere.
 */
export const checkDeviceBytes: Check = (v) => {
  if (v.traceMode) return [];
  const d = v.device;
  if (d === undefined && v.objectStoreHost !== undefined)
    return [
      warning(
        'object_store_no_device',
        `the storage tier is an object store (${v.objectStoreHost}): no device counters stand behind it, so the tool's bytes could not be checked against a device's; compare them with the server's own counts (e.g. radosgw-admin bucket stats)`,
      ),
    ];
  if (d === undefined)
    return v.ramFileSystem || v.ramBackend !== undefined
      ? []
      : [
          warning(
            'device_unknown',
            `the cache dir's block device could not be resolved (${v.fileSystem}): device bytes could not be checked against the tool's`,
          ),
        ];
  const out: Found[] = [];
  for (const [dir, device, tool] of [
    ['read', d.readBytes, v.toolReadBytes],
    ['write', d.writeBytes, v.toolWriteBytes],
  ] as const) {
    const m = byteMismatch(device, tool);
    const figures = `${d.name} ${dir === 'read' ? 'read' : 'wrote'} ${gib(device)}, the tool ${dir === 'read' ? 'read' : 'wrote'} ${gib(tool)} (${relative(device, tool)})`;
    const metadata = dir === 'write' && m === 'above' ? metadataBill(v.metadataWrites) : undefined;
    if (metadata !== undefined && metadataExplainsWrites(device, tool, metadata.bytes))
      out.push(
        warning(
          'device_writes_metadata',
          `${figures}: the file system's own writes for ${metadata.what} account for the difference (file-per-block layouts pay them; --kv-layout slab does not)`,
        ),
      );
    else if (m === 'above')
      out.push(
        reason(
          `device_${dir}s_exceed_tool`,
          metadata !== undefined && LAZY_HOME_WRITES.has(v.fileSystem)
            ? `${figures}, more than the file system's own writes for ${metadata.what} explain: ${v.fileSystem} writes inodes and directory blocks home lazily, which the calibration cannot see, so the excess is its own metadata or another process's writes, not told apart; --kv-layout slab (no file per block) gives a verdict on the device's bytes`
            : `${figures}${metadata !== undefined ? `, more than the file system's own writes for ${metadata.what} explain` : ''}: another process ${dir === 'read' ? 'read from' : 'wrote to'} the device during the run, and its load is in these latencies and device figures; rerun with the device otherwise idle`,
        ),
      );
    else if (m === 'below' && (dir === 'write' || v.ioMode !== 'buffered'))
      out.push(
        reason(
          `device_${dir}s_below_tool`,
          `${figures}: bytes the tool counted did not reach this device (a cache or another device below the file system served them); point --cache-dir at a plain file system on the device under test`,
        ),
      );
  }
  return out;
};

/**
 * File systems whose metadata goes home long after the commit that logged it (XFS: from its AIL, when the
 * log fills; syncfs forces the log only), so the calibration sees their log alone
 * (docs/storage-io.md#what-the-device-writes-besides-the-blocks).
 */
const LAZY_HOME_WRITES: ReadonlySet<string> = new Set(['xfs']);

/** The metadata bytes a run's new files are expected to cost, and their words; undefined when there are none. */
function metadataBill(m: ValidityFacts['metadataWrites']): { bytes: number; what: string } | undefined {
  if (m === undefined || m.newFiles <= 0 || m.bytesPerNewFile <= 0) return undefined;
  const bytes = m.newFiles * m.bytesPerNewFile + m.newDirs * m.bytesPerNewDir;
  const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB`;
  const dirs =
    m.newDirs > 0 && m.bytesPerNewDir > 0
      ? ` and ${m.newDirs.toLocaleString('en-US')} directories (at most ${kib(m.bytesPerNewDir)} each)`
      : '';
  return {
    bytes,
    what: `the ${m.newFiles.toLocaleString('en-US')} files created in the window (at most ${kib(m.bytesPerNewFile)} each)${dirs}, as calibrated on its file system: up to ${gib(bytes)}`,
  };
}

/** Buffered reads the device never saw came from the page cache: RAM, not storage. */
export const checkPageCache: Check = (v) => {
  if (v.traceMode || v.ioMode !== 'buffered') return [];
  const found: Found[] = [
    warning('buffered_io', 'buffered I/O (--io-mode buffered or O_DIRECT refused): reads may be served from the page cache'),
  ];
  const d = v.device;
  if (d !== undefined && byteMismatch(d.readBytes, v.toolReadBytes) === 'below')
    found.push(
      reason(
        'reads_from_page_cache',
        `${d.name} read ${gib(d.readBytes)} while the tool read ${gib(v.toolReadBytes)} with buffered I/O: ${pct(1 - d.readBytes / v.toolReadBytes)} of the reads came from the page cache (RAM); use --io-mode direct`,
      ),
    );
  return found;
};

export const checkRamFileSystem: Check = (v) =>
  !v.traceMode && v.ramFileSystem
    ? [
        reason(
          'ram_file_system',
          `the cache dir is on ${v.fileSystem}, a RAM file system: this measured memory; point --cache-dir at the device under test`,
        ),
      ]
    : [];

/** A backend that keeps the storage tier in RAM tests the harness: no figure is a storage measurement. */
export const checkRamBackend: Check = (v) =>
  !v.traceMode && v.ramBackend !== undefined
    ? [
        reason(
          'ram_storage_backend',
          `--storage-backend ${v.ramBackend} keeps the storage tier's entries in RAM: this measured memory and the harness, not a storage device; use --storage-backend file with --cache-dir on the device under test`,
        ),
      ]
    : [];

/** A p95 on too few samples is the largest sample; p99 and p99.9 only warn (the console prints n/a). */
export const checkSamples: Check = (v) => {
  if (v.traceMode) return [];
  const counts = [
    ['read', v.storageReadSamples],
    ['write', v.storageWriteSamples],
  ] as const;
  const list = (pred: (n: number) => boolean): string[] => counts.filter(([, n]) => n > 0 && pred(n)).map(([dir, n]) => `${dir} ${n}`);
  const out: Found[] = [];
  const short = list((n) => n < MIN_SAMPLES.p95);
  if (short.length > 0)
    out.push(
      reason(
        'too_few_samples',
        `storage latency samples (${short.join(', ')}) are under the ${MIN_SAMPLES.p95} a p95 needs: the reported p95 is just the slowest sample; run longer or with more users`,
      ),
    );
  const tails = (
    [
      ['p99', MIN_SAMPLES.p99],
      ['p99.9', MIN_SAMPLES.p999],
    ] as const
  )
    .map(([p, min]) => [p, min, list((n) => n >= MIN_SAMPLES.p95 && n < min)] as const)
    .filter(([, , dirs]) => dirs.length > 0)
    .map(([p, min, dirs]) => `a ${p} needs ${min.toLocaleString('en-US')} (${dirs.join(', ')})`);
  if (tails.length > 0)
    out.push(
      warning(
        'few_samples_for_tail',
        `too few storage latency samples for the tail percentiles: ${tails.join('; ')}; those fields are the slowest samples, not percentiles`,
      ),
    );
  return out;
};

export const checkFailedOps: Check = (v) => {
  const tiers = (Object.entries(v.failedOps) as Array<[TierName, number]>).filter(([, n]) => n > 0);
  if (tiers.length === 0) return [];
  const total = tiers.reduce((s, [, n]) => s + n, 0);
  return [
    reason(
      'failed_operations',
      `${total} tier operations failed (${tiers.map(([t, n]) => `${t} ${n}`).join(', ')}): what they were to move was not stored or read, so the run measured a partly failing system; see the run's warnings and fix the cause (full disk, permissions, I/O errors)`,
    ),
  ];
};

export const checkCutShort: Check = (v) =>
  v.requestsAborted > v.requestsCompleted
    ? [
        reason(
          'requests_cut_short',
          `more requests were cut short at the stop (${v.requestsAborted}) than completed (${v.requestsCompleted}): a request outlasts the run, so the figures cover beginnings of requests; raise --duration or lower --num-users`,
        ),
      ]
    : [];

export const checkHarness: Check = (v) => {
  const over: string[] = [];
  if (v.eventLoopDelayP99Ms > MAX_LOOP_DELAY_P99_MS)
    over.push(`event-loop delay p99 ${v.eventLoopDelayP99Ms.toFixed(1)} ms (limit ${MAX_LOOP_DELAY_P99_MS} ms)`);
  if (v.mainThreadBusy > MAX_MAIN_THREAD_BUSY)
    over.push(`main thread busy ${pct(v.mainThreadBusy)} of the window (limit ${pct(MAX_MAIN_THREAD_BUSY)})`);
  if (v.payloadWaitShare !== undefined && v.payloadWaitShare > MAX_PAYLOAD_WAIT_SHARE)
    over.push(
      `writes waited for payload bytes ${pct(v.payloadWaitShare)} of their time (limit ${pct(MAX_PAYLOAD_WAIT_SHARE)}): payload generation, not the device, set the write figure`,
    );
  const f = v.fileIo;
  if (f !== undefined && f.poolQueuedShare > MAX_POOL_QUEUED_SHARE)
    over.push(
      `file calls queued for ${f.poolThreads === 1 ? "libuv's only thread" : `one of libuv's ${f.poolThreads} threads`} ${pct(f.poolQueuedShare)} of the window (limit ${pct(MAX_POOL_QUEUED_SHARE)}; UV_THREADPOOL_SIZE): the queueing is inside the latencies`,
    );
  if (f !== undefined && f.stagingWaitShare > MAX_STAGING_WAIT_SHARE)
    over.push(
      `storage operations waited for a staging buffer ${pct(f.stagingWaitShare)} of their time (limit ${pct(MAX_STAGING_WAIT_SHARE)})`,
    );
  if (over.length === 0) return [];
  return [
    reason(
      'harness_saturated',
      `the benchmark itself was a bottleneck: ${over.join('; ')}: latencies include time waiting for the harness; use fewer users or an otherwise idle host`,
    ),
  ];
};

/** With the default capacity (95 % of the free space) storage evictions mean the disk filled up. */
export const checkDiskFull: Check = (v) =>
  !v.traceMode && !v.capacityExplicit && v.storageEvictDeletes > 0
    ? [
        reason(
          'storage_capacity_reached',
          `the storage tier filled its default capacity (95 % of the free space, ${gib(v.storageLimitBytes)}) and deleted ${v.storageEvictDeletes} entries to make room: the file system ran nearly full, which the workload did not ask for; free space, or set --storage-capacity-gb to make eviction part of the workload`,
        ),
      ]
    : [];

export const checkRunLength: Check = (v) => {
  if (v.traceMode) return [];
  if (v.storageTransfers === 0)
    return [
      reason(
        'no_storage_io',
        'no entry was written to or read from the storage tier: everything fit in the faster tiers; lower --gpu-mem-gb / --cpu-mem-gb (0 for storage only) or raise --num-users / --duration',
      ),
    ];
  if (v.storageTransfers < MIN_STORAGE_TRANSFERS)
    return [
      reason(
        'run_too_short',
        `only ${v.storageTransfers} whole-entry storage transfers completed (at least ${MIN_STORAGE_TRANSFERS} are needed for a bandwidth or a p95): raise --duration or --num-users`,
      ),
    ];
  return [];
};

/** Every check, in the order their findings are listed. */
export const CHECKS: readonly Check[] = [
  checkTraceMode,
  checkRamFileSystem,
  checkRamBackend,
  checkDeviceBytes,
  checkPageCache,
  checkFailedOps,
  checkDiskFull,
  checkHarness,
  checkCutShort,
  checkRunLength,
  checkSamples,
];

export function validityOf(v: ValidityFacts, checks: readonly Check[] = CHECKS): Validity {
  const found = checks.flatMap((c) => c(v));
  const strip = ({ code, message }: Found): ValidityFinding => ({ code, message });
  const reasons = found.filter((f) => f.severity === 'reason').map(strip);
  return { valid: reasons.length === 0, reasons, warnings: found.filter((f) => f.severity === 'warning').map(strip) };
}

/** Histograms of the writes that take payload bytes (placements and demotions into the CPU and storage tiers). */
const PAYLOAD_WRITES = ['cpu_write', 'storage_write', 'cpu_demote_write', 'storage_demote_write'] as const;

/** waitMs ÷ (waitMs + the total time of the writes that waited), 0 when neither happened. */
export function payloadWaitShare(waitMs: number, rec: RecorderSnapshot): number {
  return waitShare(waitMs, rec, PAYLOAD_WRITES);
}

/** waitMs ÷ (waitMs + the total time of the `ops` that waited), 0 when neither happened. */
function waitShare(waitMs: number, rec: RecorderSnapshot, ops: readonly string[]): number {
  const opMs = ops.reduce((sum, name) => {
    const h = rec.latencies[name];
    return sum + (h === undefined ? 0 : h.count * h.mean);
  }, 0);
  return waitMs + opMs > 0 ? waitMs / (waitMs + opMs) : 0;
}

/** The file tier's harness figures as the verdict judges them. */
export function fileIoShares(f: FileIoStats, rec: RecorderSnapshot, elapsedSec: number): NonNullable<ValidityFacts['fileIo']> {
  return {
    poolThreads: f.poolThreads,
    poolQueuedShare: elapsedSec > 0 ? Math.min(1, f.queuedMs / (elapsedSec * 1000)) : 0,
    stagingWaitShare: waitShare(f.stagingWaitMs, rec, [...STORAGE_VERDICT_HISTOGRAMS.read, ...STORAGE_VERDICT_HISTOGRAMS.write]),
  };
}

/** The facts of a run, from its result. */
export function validityFactsOf(r: RunResult): ValidityFacts {
  const rec = r.recorded;
  const st = rec.traffic.storage;
  const limit = r.occupancy.storage?.limitBytes ?? 0;
  return {
    traceMode: r.storageSetup.traceMode,
    ioMode: r.storage.ioMode,
    fileSystem: r.storage.fileSystem,
    ramFileSystem: r.storageSetup.ramFileSystem,
    ...(r.storageSetup.ramBackend !== undefined ? { ramBackend: r.storageSetup.ramBackend } : {}),
    ...(r.objectStore !== undefined ? { objectStoreHost: r.objectStore.endpointHost } : {}),
    toolReadBytes: kvReadBytes(st),
    toolWriteBytes: kvWriteBytes(st),
    ...(r.device !== undefined
      ? { device: { name: r.device.name, readBytes: r.device.delta.readBytes, writeBytes: r.device.delta.writeBytes } }
      : {}),
    storageReadSamples: samplesOf(rec, STORAGE_VERDICT_HISTOGRAMS.read),
    storageWriteSamples: samplesOf(rec, STORAGE_VERDICT_HISTOGRAMS.write),
    storageTransfers: samplesOf(rec, [...STORAGE_VERDICT_HISTOGRAMS.read, ...STORAGE_VERDICT_HISTOGRAMS.write, 'storage_demote_read']),
    failedOps: Object.fromEntries(TIER_NAMES.map((t) => [t, rec.traffic[t].failedOps])) as Record<TierName, number>,
    requestsCompleted: r.requests.requestsCompleted,
    requestsAborted: r.requests.requestsAborted,
    eventLoopDelayP99Ms: r.eventLoopDelayMs.p99,
    mainThreadBusy: r.mainThreadBusy,
    ...(r.payload !== undefined ? { payloadWaitShare: payloadWaitShare(r.payload.consumerWaitMs, rec) } : {}),
    ...(r.fileIo !== undefined ? { fileIo: fileIoShares(r.fileIo, rec, r.elapsedSec) } : {}),
    ...(r.metadataCalibration !== undefined && !r.metadataCalibration.disturbed && r.metadataOps !== undefined
      ? {
          metadataWrites: {
            newFiles: r.metadataOps.create.count,
            bytesPerNewFile: allowedBytesPerNewFile(r.metadataCalibration),
            newDirs: r.metadataOps.mkdir.count,
            bytesPerNewDir: r.metadataCalibration.bytesPerNewDir ?? 0,
          },
        }
      : {}),
    capacityExplicit: r.storageSetup.capacityExplicit,
    storageLimitBytes: Number.isFinite(limit) ? limit : 0,
    storageEvictDeletes: st.evictDeleteOps,
  };
}
