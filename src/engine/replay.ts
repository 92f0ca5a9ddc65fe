// `kv-cache replay TRACE`: re-issues the writes, reads and deletes of an I/O trace (ours, or the
// reference's) against a cache directory, as fast as possible with N concurrent operations or paced
// by the trace's timestamps, and measures them like a run's storage tier.
import { setTimeout as sleep } from 'node:timers/promises';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import type { DiskCounters, DiskDelta } from '../metrics/diskstats.js';
import { Recorder } from '../metrics/recorder.js';
import type { RecorderSnapshot } from '../metrics/recorder.js';
import type { IoMode } from '../settings/choices.js';
import { readTrace } from '../trace/reader.js';
import type { TraceRow } from '../trace/format.js';
import type { Clock } from '../util/clock.js';
import { KeyedMutex } from '../util/lock.js';
import { openFileStorage, slotCounts, tearDown } from './tier-stack.js';
import type { FileStorage } from './tier-stack.js';
import { captureMachine } from './machine.js';
import type { MachineContext } from '../metrics/result.js';

export interface ReplayOptions {
  readonly tracePath: string;
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  /** Operations in flight at once (as fast as possible mode). */
  readonly concurrency: number;
  /** Issue each row at its trace time offset instead of as fast as possible. */
  readonly paced: boolean;
  /** Replay rows of every tier onto storage; by default only the storage tier's (Tier-2) rows. */
  readonly allTiers: boolean;
  readonly seed: number;
}

export interface ReplayCounts {
  rows: number;
  writes: number;
  reads: number;
  deletes: number;
  writeBytes: number;
  readBytes: number;
  /** Rows of other tiers, not replayed (see allTiers). */
  skippedOtherTiers: number;
  /** Reads or deletes of a key the replay never wrote (a trace that starts mid-run). */
  missingKeys: number;
}

export interface ReplayResult {
  readonly counts: ReplayCounts;
  /** The storage tier's operations, as a run's recorder holds them. */
  readonly recorded: RecorderSnapshot;
  readonly elapsedSec: number;
  readonly storage: { readonly dir: string; readonly ioMode: string; readonly fileSystem: string };
  readonly device?: { readonly name: string; readonly delta: DiskDelta };
  readonly machine: MachineContext;
}

export async function replayTrace(o: ReplayOptions, clock: Clock): Promise<ReplayResult> {
  const files = await openReplayStorage(o);
  try {
    const issuer = new OperationIssuer(files, o.allTiers);
    const measurement = await Measurement.start(files.file.dir, clock);
    const pacing = new Pacing(o.paced, clock, measurement.startMs);
    await issueInTraceOrder(readTrace(o.tracePath), Math.max(1, o.concurrency), issuer, pacing);
    const measured = await measurement.stop();
    return assembleResult(issuer, measured, files, await captureMachine(files.file));
  } finally {
    await tearDown({ payload: files.payload, tiers: files.file });
  }
}

/** The cache directory's file tier and the payload generator, with slots for `concurrency` operations. */
function openReplayStorage(o: ReplayOptions): Promise<FileStorage> {
  return openFileStorage({
    ...(o.cacheDir !== undefined ? { cacheDir: o.cacheDir } : {}),
    ioMode: o.ioMode,
    seed: o.seed,
    slots: slotCounts(o.concurrency),
  });
}

/**
 * Rows are pulled in trace order by `lanes` concurrent loops and each takes its key's lock at once,
 * so operations on one key keep their order while different keys overlap.
 */
async function issueInTraceOrder(trace: AsyncIterable<TraceRow>, lanes: number, issuer: OperationIssuer, pacing: Pacing): Promise<void> {
  const rows = trace[Symbol.asyncIterator]();
  const locks = new KeyedMutex();
  const lane = async (): Promise<void> => {
    for (let it = await rows.next(); it.done !== true; it = await rows.next()) {
      const row = it.value;
      if (!issuer.admits(row)) continue;
      const lock = locks.lock(row.key);
      const wait = pacing.delayMs(row);
      if (wait > 0) await sleep(wait);
      await lock;
      try {
        await issuer.issue(row);
      } finally {
        locks.unlock(row.key);
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
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
  };
  readonly recorder = new Recorder();
  /** Keys written and not deleted since: what a read or delete can find. */
  private readonly written = new Set<string>();

  constructor(
    private readonly files: FileStorage,
    private readonly allTiers: boolean,
  ) {}

  /** Counts a row pulled from the trace; false if its tier is not replayed. */
  admits(row: TraceRow): boolean {
    this.counts.rows++;
    if (this.allTiers || row.tier === 'storage') return true;
    this.counts.skippedOtherTiers++;
    return false;
  }

  async issue(row: TraceRow): Promise<void> {
    if (row.op === 'Write') await this.write(row);
    else if (!this.written.has(row.key)) this.counts.missingKeys++;
    else if (row.op === 'Read') await this.read(row);
    else await this.delete(row);
  }

  private async write(row: TraceRow): Promise<void> {
    const t = await this.files.file.write(row.key, this.files.payload.source(row.key, row.size));
    this.written.add(row.key);
    this.recorder.recordIo('storage', 'write', t);
    this.counts.writes++;
    this.counts.writeBytes += row.size;
    this.recorder.traffic.storage.writeOps++;
    this.recorder.traffic.storage.writeBytes += row.size;
  }

  private async read(row: TraceRow): Promise<void> {
    const r = await this.files.file.read(row.key);
    this.recorder.recordIo('storage', 'read', r.timing);
    this.counts.reads++;
    this.counts.readBytes += r.bytes;
    this.recorder.traffic.storage.readOps++;
    this.recorder.traffic.storage.readBytes += r.bytes;
  }

  private async delete(row: TraceRow): Promise<void> {
    await this.files.file.delete(row.key);
    this.written.delete(row.key);
    this.counts.deletes++;
  }
}

interface Measured {
  readonly elapsedSec: number;
  readonly device?: ReplayResult['device'];
}

/** The replay's wall time and, where the cache directory's device is known, its disk counters. */
class Measurement {
  private constructor(
    private readonly clock: Clock,
    private readonly watch: DiskWatch | undefined,
    private readonly before: DiskCounters | undefined,
    readonly startMs: number,
  ) {}

  static async start(dir: string, clock: Clock): Promise<Measurement> {
    const watch = await DiskWatch.forPath(dir).catch(() => undefined);
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

function assembleResult(issuer: OperationIssuer, measured: Measured, files: FileStorage, machine: MachineContext): ReplayResult {
  return {
    counts: issuer.counts,
    recorded: issuer.recorder.snapshot(),
    elapsedSec: measured.elapsedSec,
    storage: files.info,
    ...(measured.device !== undefined ? { device: measured.device } : {}),
    machine,
  };
}
