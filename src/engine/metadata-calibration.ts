// What a new file costs the cache dir's file system in its own writes (issue 34, item 7;
// docs/storage-io.md#the-metadata-bill). A file-per-block layout makes every block a new file: the
// journal, inode, bitmap and directory blocks the file system writes for it reach the device beside
// the block's bytes, and on small blocks they are a large share (+37 % for 16 KiB blocks on ext4 here).
// The whole-device counters then show more than the tool wrote, and the verdict must tell that bill
// from another process's writes. So before the measured window the run makes a few hundred files as
// its layout makes them (create, write, fsync, close, rename on fanout; then unlink), one at a time,
// measures the device's written bytes meanwhile, and takes the least per-file excess of three rounds
// (a foreign writer only ever adds bytes, so the least round is the one it disturbed least).
//
// Each round syncs the file system (syncfs) after making its files and after removing them, and once
// before the first round, unmeasured: the inode-table, bitmap and directory blocks a commit journalled
// are written home later, by writeback or when a run wraps the journal, and a run of minutes pays for
// them too. Fan-out files are made at fan-out paths named as the
// run names blocks, their directories made when missing: their inodes and directory blocks are spread
// as a run's are, and that spread, not the directories, is most of their cost (16 KiB files on ext4 here:
// 36 KiB each flat at any count; fan-out 59 KiB at 128 files with syncfs, and 60 KiB per file at 16,384
// files in a grown tree with or without it; the calibration's files each in a directory of one shared
// parent, as before, gave 46 KiB and a run's bytes exceeded its bound by 20 %).
//
// One at a time is the most a new file can cost: each fsync commits the journal alone. Concurrent
// writers share commits (here, 16 KiB files on ext4: 8.1 KiB each one at a time, 5.4 at 4 in flight,
// 2.2 at 16), and how many a run's fsyncs overlap depends on the run, so the figure is an upper
// bound: the verdict allows `new files in the window × that` beside the tool's bytes
// (metrics/validity.ts), which names the metadata and still catches any writer larger than the bound.
import { spawn } from 'node:child_process';
import { constants as fsc, statfsSync } from 'node:fs';
import { mkdir, open, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AlignedSlab, DIRECT_ALIGN } from '../data/aligned.js';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import { calibrationFileName, calibrationScratchName, calibrationTag, newRunId } from '../tiers/file-names.js';
import type { StorageTarget } from './tier-stack.js';
import type { AfterWindowCalibration, MetadataCalibration } from '../metrics/result.js';
import type { BlockDevice, DiskCounters } from '../metrics/diskstats.js';
import { MiB, roundUp } from '../util/units.js';
import { messageOf } from '../util/errors.js';
import { FANOUT_DIR, poolBlockName, poolCalibrationName } from '../tiers/pool-names.js';
import { fileAllocatedBytes } from '../tiers/fs-info.js';

/** Files made per round: enough that a few MiB of journal commit settle into a per-file figure. */
export const CALIBRATION_FILES = 128;
export const CALIBRATION_ROUNDS = 3;
/**
 * More than this per file is not a file system's own writes but another writer's caught in every
 * round (a file's journal commit is a few 4 KiB blocks: inode, bitmaps, directory, descriptor, commit;
 * 8–60 KiB measured here on ext4): such a calibration is reported and not used by the verdict.
 */
export const MAX_PLAUSIBLE_BYTES_PER_FILE = 128 * 1024;
/** Largest data size a calibration file gets (its metadata, not its data, is measured). */
const MAX_CALIBRATION_FILE_BYTES = 64 * 1024;

/** A syncfs that takes longer than this is another writer's backlog: the calibration gives up. */
const SYNC_TIMEOUT_MS = 120_000;

export interface CalibrationTarget {
  /** A directory on the cache dir's file system where a scratch directory may be made (the cache dir). */
  readonly dir: string;
  readonly runId: string;
  readonly layout: 'flat' | 'fanout';
  readonly direct: boolean;
  /** The run's block or entry size: files get min(this, 64 KiB), rounded up to 4 KiB. */
  readonly entryBytes: number;
  /** Reads the device's counters (DiskWatch.snapshot). */
  readonly counters: () => Promise<DiskCounters>;
  /** An aligned buffer of at least 64 KiB (O_DIRECT needs it). */
  readonly buffer: Uint8Array;
  /**
   * What the storage tier has left under its limit on the medium (bytes; Infinity when unlimited): a
   * round's files take their room in the cache dir as entries do, so they are made smaller, down to one
   * 4 KiB page, to fit, and the calibration is refused (CalibrationRoomError) when even that does not.
   */
  readonly roomBytes: number;
  /** The file system's block size (statfs f_bsize): what a file's data and metadata are counted in. */
  readonly fsBlockBytes: number;
  /** Writes the file system's dirty blocks home within `timeoutMs` (syncFileSystem). */
  readonly flush: (dir: string, timeoutMs: number) => Promise<void>;
  /**
   * How long the whole calibration may take (ms) before it gives up (CalibrationBudgetError); absent:
   * each sync's own 120 s bounds it. Several ranks take turns, and a host's ranks wait for the one
   * calibrating at a barrier, so there it must end well within --barrier-timeout.
   */
  readonly budgetMs?: number;
}

/** The tier has no room under its limit for a round's files: the calibration is not made. */
export class CalibrationRoomError extends Error {
  constructor(needBytes: number, roomBytes: number) {
    super(
      `its ${CALIBRATION_FILES} files need ${(needBytes / MiB).toFixed(2)} MiB on the medium and the storage tier has ${(Math.max(0, roomBytes) / MiB).toFixed(2)} MiB left under its limit`,
    );
    this.name = 'CalibrationRoomError';
  }
}

/** The calibration ran past its budget (CalibrationTarget.budgetMs): it is not made. */
export class CalibrationBudgetError extends Error {
  constructor(budgetMs: number) {
    super(
      `it was still running after ${budgetMs / 1000} s, half of --barrier-timeout (this host's other ranks wait for their turn at a barrier)`,
    );
    this.name = 'CalibrationBudgetError';
  }
}

/** When a calibration started and must be over (performance.now() ms; Infinity without a budget). */
interface Deadline {
  readonly at: number;
  readonly budgetMs: number;
}

function deadlineOf(t: Pick<CalibrationTarget, 'budgetMs'>, startMs: number): Deadline {
  return { at: t.budgetMs === undefined ? Infinity : startMs + t.budgetMs, budgetMs: t.budgetMs ?? Infinity };
}

/** Throws CalibrationBudgetError once the deadline has passed. */
function checkDeadline(d: Deadline): void {
  if (performance.now() > d.at) throw new CalibrationBudgetError(d.budgetMs);
}

/** t.flush, given what is left of the deadline (at most SYNC_TIMEOUT_MS); past it, CalibrationBudgetError. */
async function flushWithin(t: CalibrationTarget, d: Deadline): Promise<void> {
  checkDeadline(d);
  const left = d.at - performance.now();
  if (left >= SYNC_TIMEOUT_MS) return t.flush(t.dir, SYNC_TIMEOUT_MS);
  await t.flush(t.dir, Math.max(1, left)).catch((e: unknown) => {
    throw e instanceof SyncTimeoutError ? new CalibrationBudgetError(d.budgetMs) : e;
  });
}

/**
 * What a round's file of `fileBytes` may take on the medium at most: its data in whole blocks and its
 * extent metadata (fileAllocatedBytes), and the directory blocks it may add (a block for the leaf
 * it lands in, and on fanout one for each fan-out directory it may open).
 */
function footprintPerFile(fileBytes: number, t: Pick<CalibrationTarget, 'fsBlockBytes' | 'layout'>): number {
  return fileAllocatedBytes(fileBytes, t.fsBlockBytes) + t.fsBlockBytes * (1 + (t.layout === 'fanout' ? FANOUT_DIR.length : 0));
}

/**
 * Data bytes of each calibration file: the run's block or entry size, at most 64 KiB, rounded up to a
 * page, then made smaller (whole pages) until a round's files fit the tier's room. Throws
 * CalibrationRoomError when one page each does not fit.
 */
export function calibrationFileBytes(t: Pick<CalibrationTarget, 'entryBytes' | 'roomBytes' | 'fsBlockBytes' | 'layout'>): number {
  const wanted = wantedFileBytes(t.entryBytes);
  for (let bytes = wanted; bytes >= DIRECT_ALIGN; bytes -= DIRECT_ALIGN)
    if (CALIBRATION_FILES * footprintPerFile(bytes, t) <= t.roomBytes) return bytes;
  throw new CalibrationRoomError(CALIBRATION_FILES * footprintPerFile(DIRECT_ALIGN, t), t.roomBytes);
}

/** A calibration file's data bytes before any room is considered: the entry size, at most 64 KiB, in whole pages. */
function wantedFileBytes(entryBytes: number): number {
  return roundUp(Math.max(1, Math.min(entryBytes, MAX_CALIBRATION_FILE_BYTES)), DIRECT_ALIGN);
}

/** The namespace the fan-out rounds name their files in (any: only the spread of the names matters). */
const CALIBRATION_NAMESPACE = 'calibration';

/** One file made as the layout makes a block: a create, its bytes, fsync, close (and a rename on fanout). */
async function makeFile(final: string, t: CalibrationTarget, bytes: Uint8Array): Promise<void> {
  const first = t.layout === 'fanout' ? `${final}.tmp` : final;
  const fh = await open(first, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW | (t.direct ? fsc.O_DIRECT : 0), 0o644);
  try {
    await fh.write(bytes, 0, bytes.length, 0);
    await fh.sync();
  } finally {
    await fh.close();
  }
  if (first !== final) await rename(first, final);
}

/** A sync that did not end in time; its child is left to finish on its own. */
export class SyncTimeoutError extends Error {
  constructor(dir: string, timeoutMs: number) {
    super(`sync -f ${dir} was still running after ${(timeoutMs / 1000).toFixed(1)} s`);
    this.name = 'SyncTimeoutError';
  }
}

/**
 * Writes the file system's dirty blocks home (syncfs(2), through coreutils' `sync -f`), or rejects
 * with SyncTimeoutError after `timeoutMs`. syncfs cannot be interrupted, so the child is then not
 * waited for (nor does it keep the process alive): it ends when the kernel is done.
 */
export function syncFileSystem(dir: string, timeoutMs = SYNC_TIMEOUT_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sync', ['-f', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.unref();
      child.stderr.destroy();
      reject(new SyncTimeoutError(dir, timeoutMs));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`sync -f ${dir} failed: ${messageOf(e)}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`sync -f ${dir} failed: ${stderr.trim() || (code !== null ? `exit status ${code}` : `signal ${signal}`)}`));
    });
  });
}

/** Where a round's files go: a scratch directory of their own, or among the run's own entries. */
interface Place {
  /** The path of the round's `i`-th file (its directories made when missing). */
  readonly pathOf: (i: number) => string;
  /** Before the first file: a scratch directory is made. */
  readonly open: () => Promise<void>;
  /** After the files are removed: a scratch directory removed, and the removals committed. */
  readonly settle: () => Promise<void>;
  /** Whatever happens: nothing of the round is left. */
  readonly cleanUp: () => Promise<void>;
}

/** A scratch directory of the cache dir, removed with the round: flat files side by side, or at fan-out paths. */
function scratchPlace(t: CalibrationTarget, dir: string): Place {
  return {
    pathOf: (i) => (t.layout === 'flat' ? join(dir, `f${i}.bin`) : join(dir, poolBlockName(CALIBRATION_NAMESPACE, `${dir}\n${i}`))),
    open: () => mkdir(dir).then(() => undefined),
    // The directory goes in the round (fan-out levels and all), its removal committed before the sync.
    settle: async () => {
      await rm(dir, { recursive: true, force: true });
      const dh = await open(t.dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
      await dh.sync().finally(() => dh.close());
    },
    cleanUp: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Among the run's own entries, after its window (`entryDir`: the cache dir for flat, the namespace
 * directory for fanout): the files meet the directory sizes and spread the run left. Their names are
 * none of the run's shapes (`.kvc-cal-…`, a fan-out leaf's `<40 hex>.bin.kvc-cal-…`), so no scan takes
 * them for entries (a later run's counts a killed calibration's as stale); fan-out directories made
 * for them stay (a shared pool's writers may be using them).
 */
function inPlace(t: CalibrationTarget, entryDir: string, round: number): Place {
  const tag = calibrationTag(t.runId, round);
  const made: string[] = [];
  return {
    pathOf: (i) => {
      const path =
        t.layout === 'flat'
          ? join(entryDir, calibrationFileName(t.runId, round, i))
          : join(dirname(entryDir), poolCalibrationName(basename(entryDir), tag, i));
      made.push(path);
      return path;
    },
    open: () => Promise.resolve(),
    settle: () => Promise.resolve(),
    cleanUp: async () => {
      for (const f of made.splice(0)) await rm(f, { force: true });
    },
  };
}

/**
 * One round: the files made, the file system synced so the blocks it journalled are written home, the
 * files removed, the removals committed, and the file system synced again. Returns the device's
 * written bytes beyond the files' data, per file.
 */
async function round(t: CalibrationTarget, place: Place, bytes: Uint8Array, d: Deadline): Promise<number> {
  const before = await t.counters();
  await place.open();
  const made: string[] = [];
  try {
    for (let i = 0; i < CALIBRATION_FILES; i++) {
      checkDeadline(d);
      const file = place.pathOf(i);
      if (t.layout === 'fanout') await mkdir(dirname(file), { recursive: true });
      made.push(file);
      await makeFile(file, t, bytes);
    }
    // Home before the removals: blocks freed before they were written home would never be.
    await flushWithin(t, d);
    for (const f of made.splice(0)) await unlink(f);
    await place.settle();
    await flushWithin(t, d);
  } finally {
    await place.cleanUp();
  }
  const written = diskDelta(before, await t.counters()).writeBytes;
  return Math.max(0, (written - CALIBRATION_FILES * bytes.length) / CALIBRATION_FILES);
}

/**
 * The rounds, each in the place `placeOf` gives it, after one sync that is not counted (what others
 * left dirty is written before the first round): per-round and least bytes per file, and the time.
 */
async function calibrateIn(t: CalibrationTarget, placeOf: (round: number) => Place): Promise<AfterWindowCalibration> {
  const fileBytes = calibrationFileBytes(t);
  if (t.buffer.length < fileBytes) throw new RangeError(`the calibration buffer holds ${t.buffer.length} bytes; ${fileBytes} are needed`);
  const bytes = t.buffer.subarray(0, fileBytes);
  const t0 = performance.now();
  const d = deadlineOf(t, t0);
  await flushWithin(t, d);
  const rounds: number[] = [];
  for (let r = 0; r < CALIBRATION_ROUNDS; r++) rounds.push(await round(t, placeOf(r), bytes, d));
  const bytesPerNewFile = Math.min(...rounds);
  return {
    fileBytes,
    roundsBytesPerFile: rounds,
    bytesPerNewFile,
    disturbed: bytesPerNewFile > MAX_PLAUSIBLE_BYTES_PER_FILE,
    seconds: (performance.now() - t0) / 1000,
  };
}

/**
 * The same rounds among the run's own entries after its window (`entryDir`: the cache dir for flat, the
 * namespace directory for fanout). A grown directory costs a new file more than the empty one the
 * calibration before the window met (ext4 on the virtio disk here: 8.6 KiB per 16 KiB file in an empty
 * directory, 12.0 among 20,000 entries, 12.3 among 60,000), so the verdict allows the larger.
 */
export function calibrateAmongEntries(t: CalibrationTarget, entryDir: string): Promise<AfterWindowCalibration> {
  return calibrateIn(t, (r) => inPlace(t, entryDir, r));
}

/** Calibrates the file system's bytes per new file in a scratch directory of the cache dir, removed afterwards. */
export async function calibrateMetadataBytes(t: CalibrationTarget): Promise<MetadataCalibration> {
  const found = await calibrateIn(t, (r) => scratchPlace(t, join(t.dir, calibrationScratchName(t.runId, r))));
  return {
    layout: t.layout,
    filesPerRound: CALIBRATION_FILES,
    fileBytes: found.fileBytes,
    roundsBytesPerFile: found.roundsBytesPerFile,
    bytesPerNewFile: found.bytesPerNewFile,
    roundsBytesPerFileInNewDir: null,
    bytesPerNewDir: null,
    disturbed: found.disturbed,
    seconds: found.seconds,
  };
}

/** What the run knows when it decides whether to calibrate (a RunSetup's storage and the run's block size). */
export interface CalibrationContext {
  readonly storage: StorageTarget;
  readonly runId?: string;
  /** The run's KV block bytes, or undefined in whole-request mode (files then get the 64 KiB cap). */
  readonly blockBytes?: number;
  readonly traceMode: boolean;
  /** What the storage tier has left under its limit now (bytes; Infinity when unlimited): see CalibrationTarget.roomBytes. */
  readonly roomBytes: number;
  /** How long the calibration may take (ms): see CalibrationTarget.budgetMs. */
  readonly budgetMs?: number;
}

/** The device counters and aligned buffer of a calibration on `s`'s cache dir. */
function targetOf(
  s: StorageTarget & { readonly dir: string; readonly layout: 'flat' | 'fanout' },
  device: BlockDevice,
  c: CalibrationContext,
): CalibrationTarget {
  const watch = DiskWatch.forDevice(device);
  const { slab, direct } = AlignedSlab.create(MAX_CALIBRATION_FILE_BYTES, s.dir);
  const buffer = slab.view(0, MAX_CALIBRATION_FILE_BYTES);
  buffer.fill(0x5a); // not zeros: a device that compresses or dedups zeros must still see the bytes
  return {
    dir: s.dir,
    runId: c.runId ?? newRunId(),
    layout: s.layout,
    direct: direct && s.ioMode === 'direct',
    entryBytes: c.blockBytes ?? MAX_CALIBRATION_FILE_BYTES,
    counters: () => watch.snapshot(),
    buffer,
    flush: syncFileSystem,
    roomBytes: c.roomBytes,
    fsBlockBytes: statfsSync(s.dir).bsize,
    ...(c.budgetMs !== undefined ? { budgetMs: c.budgetMs } : {}),
  };
}

/**
 * Whether a run of these flags may calibrate: a file per entry (flat or fanout) on the file tier, not
 * in trace mode. Whether it does also depends on its host's device (calibrated); ranks of one run
 * agree on this much, so they take their turns together (RankSession.inTurns).
 */
export function mayCalibrate(c: Pick<CalibrationContext, 'storage' | 'traceMode'>): boolean {
  return !c.traceMode && c.storage.kind === 'file' && (c.storage.layout === 'flat' || c.storage.layout === 'fanout');
}

/** The storage, when a run on it calibrates: a file per entry (flat or fanout) on a resolved device that is not RAM. */
function calibrated(
  c: CalibrationContext,
): { s: StorageTarget & { dir: string; layout: 'flat' | 'fanout' }; device: BlockDevice } | undefined {
  const s = c.storage;
  if (!mayCalibrate(c) || s.dir === undefined || s.inRam !== undefined || s.device.kind !== 'device') return undefined;
  if (s.layout !== 'flat' && s.layout !== 'fanout') return undefined;
  return { s: { ...s, dir: s.dir, layout: s.layout }, device: s.device.device };
}

/**
 * Calibrates when the run writes a file per entry (flat or fanout) on a resolved device that is not
 * RAM; otherwise undefined: slab makes no file per block, an object store has no device counters.
 */
export async function calibrateForRun(c: CalibrationContext): Promise<MetadataCalibration | undefined> {
  const on = calibrated(c);
  return on === undefined ? undefined : calibrateMetadataBytes(targetOf(on.s, on.device, c));
}

/**
 * The same among the run's own entries after its window (calibrateAmongEntries); undefined where
 * calibrateForRun is. `makeRoom`, when given, is asked for the room a round's full-size files take
 * under the tier's limit and returns the room there is then (c.roomBytes is not used).
 */
export async function calibrateAfterRun(
  c: CalibrationContext,
  makeRoom?: (bytes: number) => Promise<number>,
): Promise<AfterWindowCalibration | undefined> {
  const on = calibrated(c);
  if (on === undefined) return undefined;
  const t = targetOf(on.s, on.device, c);
  const roomBytes =
    makeRoom === undefined ? t.roomBytes : await makeRoom(CALIBRATION_FILES * footprintPerFile(wantedFileBytes(t.entryBytes), t));
  return calibrateAmongEntries({ ...t, roomBytes }, on.s.entryDir ?? on.s.dir);
}
