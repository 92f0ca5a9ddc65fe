// `kv-cache replay TRACE`: re-issues the writes, reads and deletes of an I/O trace (ours, or the
// reference's) against a cache directory, as fast as possible with N concurrent operations or paced
// by the trace's timestamps, and measures them like a run's storage tier.
// It stops like a run: at the end of the trace, at --duration, at the first SIGINT/SIGTERM (the
// in-flight operations are cut, partial results returned) or at a failure (ReplayFailedError carries
// the partial results). Nothing is created before the trace's header and first row have been read.
import type { ObjectStoreOptions } from '../tiers/storage-kind.js';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import type { DiskCounters, StorageDevice } from '../metrics/diskstats.js';
import { Recorder } from '../metrics/recorder.js';
import type { FillerKind } from '../data/fillers.js';
import type { IoMode } from '../tiers/io-mode.js';
import { DEFAULT_STORAGE_BACKEND } from '../tiers/registry.js';
import type { StorageBackendName } from '../tiers/registry.js';
import { readTrace } from '../trace/reader.js';
import type { TraceRow } from '../trace/format.js';
import type { Clock } from '../util/clock.js';
import { KeyedMutex } from '../util/lock.js';
import { FailedWithPartialResults } from '../util/errors.js';
import { IoAbortedError } from '../tiers/backend.js';
import { leftBehindLine } from './failure-warnings.js';
import { TraceFormatError, ZstdError } from '../trace/errors.js';
import { StopController } from './stop-control.js';
import { openStorage, recordingMetadata, slotCounts, tearDown } from './tier-stack.js';
import type { OpenStorage } from './tier-stack.js';
import type { EntryFilesAt } from './entry-cleanup.js';
import { captureMachine } from './machine.js';
import type { MachineContext } from '../metrics/result.js';
import type { ReplayCounts, ReplayResult, ReplayStopReason } from '../metrics/replay-result.js';

export interface ReplayOptions {
  readonly tracePath: string;
  /** The storage backend (the registry's row); default `file`. */
  readonly storageBackend?: StorageBackendName;
  /** The --s3-* flags, for an object-store backend. */
  readonly objectStore?: ObjectStoreOptions;
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  /** --payload-filler (default native). */
  readonly filler?: FillerKind;
  /** Operations in flight at once (as fast as possible mode). */
  readonly concurrency: number;
  /** Issue each row at its trace time offset instead of as fast as possible. */
  readonly paced: boolean;
  /** Replay rows of every tier onto storage; by default only the storage tier's (Tier-2) rows. */
  readonly allTiers: boolean;
  readonly seed: number;
  /** Stop after this many seconds of replay; undefined: at the end of the trace. */
  readonly durationSec?: number;
}

/** What a replay may be stopped by, from outside. */
export interface ReplayControl {
  readonly clock: Clock;
  /** Aborting it stops the replay as 'interrupted' (SIGINT/SIGTERM); the partial result is returned. */
  readonly interrupt?: AbortSignal;
  /** Told where the entry files are once the storage exists (a force-quit removes them). */
  readonly onEntryFiles?: (at: EntryFilesAt) => void;
  /** Hears where the replay's own objects go in an object store (RunEnvironment.onObjects). */
  readonly onObjects?: (where: string) => void;
  /**
   * Receives the result (or a failed replay's partial result) before the entry files are deleted,
   * which can take long: a force-quit during that deletion then still finds the results saved.
   */
  readonly onResult?: (result: ReplayResult) => void;
  /** Told, before a paced replay starts, how long it will take and how to shorten it (the engine never prints). */
  readonly notify?: (line: string) => void;
}

/** Largest object a row may name: no KV-cache entry is a TiB, and a bigger one would only fill the disk. */
export const MAX_REPLAY_OBJECT_BYTES = 2 ** 40;
const HASHED_KEY = /^#sha256:[0-9a-f]{64}$/;

/**
 * The key the replay stores a trace key under. A key the storage cannot hold as it is (`fits`; the
 * file kind: its file name would be too long) is replaced by `#sha256:<hex>` of it (fixed length,
 * safe characters). A trace key that already looks like that is hashed too, so two different trace
 * keys never share an entry.
 */
export function storageKeyFor(key: string, fits: (key: string) => boolean = () => true): string {
  if (!HASHED_KEY.test(key) && fits(key)) return key;
  return `#sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/** A row the replay cannot carry out (a size no entry can have). Bad input: exit 2, like a malformed row. */
export class ReplayRowError extends Error {
  constructor(
    readonly file: string,
    /** 1-based index among the data rows (the header not counted). */
    readonly dataRow: number,
    readonly reason: string,
  ) {
    super(`${file}: data row ${dataRow}: ${reason}`);
    this.name = 'ReplayRowError';
  }
}

/** Bad trace input found while replaying (a malformed row, a failed decompression): exit 2, no results. */
export function isTraceInputError(e: unknown): e is TraceFormatError | ZstdError | ReplayRowError {
  return e instanceof TraceFormatError || e instanceof ZstdError || e instanceof ReplayRowError;
}

/** A failure mid-replay (a write refused by the disk, …), carrying the results gathered until then. */
export class ReplayFailedError extends FailedWithPartialResults<ReplayResult> {
  constructor(partial: ReplayResult, cause: unknown) {
    super('replay', partial, cause);
    this.name = 'ReplayFailedError';
  }
}

export async function replayTrace(o: ReplayOptions, control: ReplayControl): Promise<ReplayResult> {
  // The trace first: a missing header, a malformed first row or a file zstd cannot decode fails
  // here, before the cache directory or any thread exists.
  const trace = await openedTrace(o.tracePath);
  if (o.paced && control.notify !== undefined) {
    // A paced replay lasts as long as the trace spans (an 11-day gap is 11 days of silence): say so up front.
    const span = await traceSpanSec(o.tracePath, control.interrupt);
    if (span !== undefined) control.notify(pacedReplayNotice(span, o.durationSec));
  }
  const recorder = new Recorder();
  let files: OpenStorage;
  try {
    files = await openReplayStorage(o, control.onEntryFiles, recorder);
  } catch (e) {
    await trace.close();
    throw e;
  }
  if (files.opened.entryFiles !== undefined) control.onEntryFiles?.(files.opened.entryFiles);
  if (files.opened.objectsAt !== undefined) control.onObjects?.(files.opened.objectsAt);
  try {
    const stop = new StopController(() => files.opened.backend.stopInFlight?.());
    const unfollow = stop.follow(control.interrupt);
    const issuer = new OperationIssuer(files, o.allTiers, o.tracePath, recorder);
    recorder.metadata.reset(); // what opening the storage made (its directory) is not the replay's
    const measurement = await Measurement.start(files.target.device, control.clock);
    const timer = o.durationSec !== undefined ? setTimeout(() => stop.stopWith('duration'), o.durationSec * 1000) : undefined;
    try {
      const pacing = new Pacing(o.paced, control.clock, measurement.startMs);
      await issueInTraceOrder(trace.rows, Math.max(1, o.concurrency), issuer, pacing, stop);
    } finally {
      clearTimeout(timer);
      unfollow();
      await trace.close(); // ends a zstd child still decoding
    }
    const measured = await measurement.stop();
    if (isTraceInputError(stop.failure)) throw stop.failure;
    const reason = stop.reason('workload_complete') as ReplayStopReason;
    const result = assembleResult(issuer, measured, files, captureMachine(files.target), reason, o.durationSec);
    control.onResult?.(result);
    if (stop.failure !== undefined) throw new ReplayFailedError(result, stop.failure);
    return result;
  } finally {
    await tearDown({ payload: files.payload, tiers: files.opened.backend });
    const left = files.opened.backend.leftBehind?.();
    if (left !== undefined) control.notify?.(leftBehindLine(left));
  }
}

interface OpenedTrace {
  readonly rows: AsyncIterator<TraceRow>;
  /** Releases the reader (and its zstd process) wherever it is. */
  close(): Promise<void>;
}

/** The trace's rows, its header and first row already read (and checked): they fail before anything is made. */
async function openedTrace(path: string): Promise<OpenedTrace> {
  const reader = readTrace(path);
  const close = async (): Promise<void> => {
    await reader.return(undefined);
  };
  let pending: IteratorResult<TraceRow> | undefined = await reader.next().catch(async (e: unknown) => {
    await close();
    throw e;
  });
  const rows: AsyncIterator<TraceRow> = {
    next: () => {
      const first = pending;
      pending = undefined;
      return first !== undefined ? Promise.resolve(first) : reader.next();
    },
  };
  return { rows, close };
}

/** Seconds from the trace's earliest row to its latest (one pass over it), or undefined when interrupted or unreadable. */
async function traceSpanSec(path: string, interrupt: AbortSignal | undefined): Promise<number | undefined> {
  let lo = Infinity;
  let hi = -Infinity;
  try {
    for await (const row of readTrace(path)) {
      if (interrupt?.aborted === true) return undefined;
      lo = Math.min(lo, row.timestamp);
      hi = Math.max(hi, row.timestamp);
    }
  } catch {
    return undefined; // the replay itself reports the trace's problem where it meets it
  }
  return hi >= lo ? hi - lo : 0;
}

/** A span in the unit a person would use. */
function spanText(sec: number): string {
  if (sec < 120) return `${sec.toFixed(1)} s`;
  if (sec < 2 * 3600) return `${(sec / 60).toFixed(1)} minutes`;
  if (sec < 2 * 86400) return `${(sec / 3600).toFixed(1)} hours`;
  return `${(sec / 86400).toFixed(1)} days`;
}

/** What a paced replay will take, and how to make it shorter. */
export function pacedReplayNotice(spanSec: number, durationSec: number | undefined): string {
  const spans = `the trace spans ${spanText(spanSec)} from its first row to its last`;
  if (durationSec !== undefined && durationSec < spanSec)
    return `paced replay: ${spans}; --duration stops it after ${spanText(durationSec)}`;
  return `paced replay: ${spans}, so at trace pace it takes about that long; to shorten it give --duration SECONDS (it stops there and reports what was replayed), or leave out --paced to issue the rows as fast as possible`;
}

/**
 * The storage backend (the cache directory's file tier by default) and the payload generator, with slots
 * for `concurrency` operations; its metadata calls go to `recorder` (a replay measures from its start).
 */
function openReplayStorage(o: ReplayOptions, madeDir: ((at: EntryFilesAt) => void) | undefined, recorder: Recorder): Promise<OpenStorage> {
  return openStorage({
    backend: o.storageBackend ?? DEFAULT_STORAGE_BACKEND,
    ...(o.cacheDir !== undefined ? { cacheDir: o.cacheDir } : {}),
    ioMode: o.ioMode,
    ...(o.filler !== undefined ? { filler: o.filler } : {}),
    seed: o.seed,
    slots: slotCounts(o.concurrency),
    ...(o.objectStore !== undefined ? { objectStore: o.objectStore } : {}),
    ...(madeDir !== undefined ? { madeDir } : {}),
    metadataOps: recordingMetadata(recorder),
  });
}

/**
 * Rows are pulled in trace order by `lanes` concurrent loops and each takes its key's lock at once,
 * so operations on one key keep their order while different keys overlap.
 */
async function issueInTraceOrder(
  rows: AsyncIterator<TraceRow>,
  lanes: number,
  issuer: OperationIssuer,
  pacing: Pacing,
  stop: StopController,
): Promise<void> {
  const locks = new KeyedMutex();
  const lane = async (): Promise<void> => {
    while (!stop.stopped) {
      const it = await rows.next();
      if (it.done === true) return;
      const row = issuer.admit(it.value);
      if (row === undefined) continue;
      const lock = locks.lock(row.key);
      await sleepUntilDue(pacing, row, stop.signal);
      await lock;
      try {
        if (!stop.stopped) await issuer.issue(row);
      } finally {
        locks.unlock(row.key);
      }
    }
  };
  // A lane's error stops every lane (the first is kept); the others finish or abort what they issued.
  await Promise.all(Array.from({ length: lanes }, () => lane().catch((e: unknown) => stop.fail(e))));
}

/** Longest single timer: Node fires a longer one after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits until `row` is due (paced), or until the stop; a gap of days is waited in timer-sized steps. */
async function sleepUntilDue(pacing: Pacing, row: TraceRow, signal: AbortSignal): Promise<void> {
  for (let wait = pacing.delayMs(row); wait > 0 && !signal.aborted; wait = pacing.delayMs(row)) {
    await sleep(Math.min(wait, MAX_TIMER_MS), undefined, { signal }).catch(() => undefined);
  }
}

/** When a row is due: at once, or (paced) at its trace time offset from the first replayed row. */
class Pacing {
  private firstTs: number | undefined;

  constructor(
    private readonly paced: boolean,
    private readonly clock: Clock,
    private readonly startMs: number,
  ) {}

  /** Milliseconds until `row` is due (≤ 0: now). The first row asked about sets the trace's origin. */
  delayMs(row: TraceRow): number {
    this.firstTs ??= row.timestamp;
    return this.paced ? this.startMs + (row.timestamp - this.firstTs) * 1000 - this.clock.now() : 0;
  }
}

/** Issues rows as storage operations and keeps the replay's counts and the storage tier's recorder. */
class OperationIssuer {
  readonly counts: ReplayCounts = {
    rows: 0,
    writes: 0,
    reads: 0,
    deletes: 0,
    writeBytes: 0,
    readBytes: 0,
    skippedOtherTiers: 0,
    missingKeys: 0,
    abortedAtStop: 0,
    hashedKeys: 0,
  };
  /** Keys written and not deleted since: what a read or delete can find. */
  private readonly written = new Set<string>();
  /** Trace keys already stored under a hashed name (counted once each). */
  private readonly hashed = new Set<string>();
  /** Whether the storage holds a key under its own name (absent: every key). */
  private readonly keyFits: (key: string) => boolean;

  constructor(
    private readonly files: OpenStorage,
    private readonly allTiers: boolean,
    private readonly tracePath: string,
    /** The storage tier's figures, its backend's metadata calls among them. */
    readonly recorder: Recorder,
  ) {
    this.keyFits = files.opened.keyFits ?? (() => true);
  }

  /**
   * Counts a row pulled from the trace: undefined if its tier is not replayed, else the row with the
   * key it is stored under. Throws ReplayRowError for a size no entry can have.
   */
  admit(row: TraceRow): TraceRow | undefined {
    const n = ++this.counts.rows;
    if (!this.allTiers && row.tier !== 'storage') {
      this.counts.skippedOtherTiers++;
      return undefined;
    }
    if (row.size > MAX_REPLAY_OBJECT_BYTES)
      throw new ReplayRowError(this.tracePath, n, `Object_Size_Bytes ${row.size} is larger than the 1 TiB (2^40 bytes) an entry may have`);
    const key = storageKeyFor(row.key, this.keyFits);
    if (key !== row.key && !this.hashed.has(row.key)) {
      this.hashed.add(row.key);
      this.counts.hashedKeys++;
    }
    return key === row.key ? row : { ...row, key };
  }

  async issue(row: TraceRow): Promise<void> {
    try {
      if (row.op === 'Write') await this.write(row);
      else if (!this.written.has(row.key)) this.counts.missingKeys++;
      else if (row.op === 'Read') await this.read(row);
      else await this.delete(row);
    } catch (e) {
      if (!(e instanceof IoAbortedError)) throw e;
      this.counts.abortedAtStop++; // cut by the stop: moved no complete entry, counted as nothing else
    }
  }

  private async write(row: TraceRow): Promise<void> {
    const t = await this.files.opened.backend.write(row.key, this.files.payload.source(row.key, row.size));
    this.written.add(row.key);
    this.recorder.recordIo('storage', 'write', t);
    this.counts.writes++;
    this.counts.writeBytes += row.size;
    this.recorder.traffic.storage.writeOps++;
    this.recorder.traffic.storage.writeBytes += row.size;
  }

  private async read(row: TraceRow): Promise<void> {
    const size = this.files.opened.backend.sizeOf(row.key);
    const r = await this.files.opened.backend.read(row.key);
    if (size !== undefined && r.bytes < size) throw new IoAbortedError(r.bytes); // cut by the stop
    this.recorder.recordIo('storage', 'read', r.timing);
    this.counts.reads++;
    this.counts.readBytes += r.bytes;
    this.recorder.traffic.storage.readOps++;
    this.recorder.traffic.storage.readBytes += r.bytes;
  }

  private async delete(row: TraceRow): Promise<void> {
    await this.files.opened.backend.delete(row.key);
    this.written.delete(row.key);
    this.counts.deletes++;
  }
}

interface Measured {
  readonly elapsedSec: number;
  readonly device?: ReplayResult['device'];
}

/** The replay's wall time and, where the storage's device was resolved, its disk counters. */
class Measurement {
  private constructor(
    private readonly clock: Clock,
    private readonly watch: DiskWatch | undefined,
    private readonly before: DiskCounters | undefined,
    readonly startMs: number,
  ) {}

  static async start(device: StorageDevice, clock: Clock): Promise<Measurement> {
    const watch = device.kind === 'device' ? DiskWatch.forDevice(device.device) : undefined;
    const before = await watch?.snapshot().catch(() => undefined);
    return new Measurement(clock, watch, before, clock.now());
  }

  async stop(): Promise<Measured> {
    const elapsedSec = (this.clock.now() - this.startMs) / 1000;
    const { watch, before } = this;
    const after = before === undefined ? undefined : await watch?.snapshot().catch(() => undefined);
    return watch !== undefined && before !== undefined && after !== undefined
      ? { elapsedSec, device: { name: watch.device.name, delta: diskDelta(before, after) } }
      : { elapsedSec };
  }
}

function assembleResult(
  issuer: OperationIssuer,
  measured: Measured,
  files: OpenStorage,
  machine: MachineContext,
  stopReason: ReplayStopReason,
  durationLimitSec: number | undefined,
): ReplayResult {
  return {
    stopReason,
    ...(durationLimitSec !== undefined ? { durationLimitSec } : {}),
    counts: issuer.counts,
    recorded: issuer.recorder.snapshot(),
    metadataOps: issuer.recorder.metadata.snapshot(),
    elapsedSec: measured.elapsedSec,
    storage: { dir: files.target.location, ioMode: files.target.ioMode, fileSystem: files.target.fileSystem },
    ...(measured.device !== undefined ? { device: measured.device } : {}),
    machine,
    // The S3 tier's requests, retries, failures and time to first byte, as a run reports them (issue 35).
    ...(files.opened.objectStore !== undefined ? { objectStore: files.opened.objectStore() } : {}),
  };
}
