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
import { execFile } from 'node:child_process';
import { constants as fsc } from 'node:fs';
import { mkdir, open, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { AlignedSlab, DIRECT_ALIGN } from '../data/aligned.js';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import { newRunId } from '../tiers/file-names.js';
import type { StorageTarget } from './tier-stack.js';
import type { MetadataCalibration } from '../metrics/result.js';
import type { DiskCounters } from '../metrics/diskstats.js';
import { roundUp } from '../util/units.js';
import { messageOf } from '../util/errors.js';
import { poolBlockName } from '../tiers/pool-names.js';

const execFileAsync = promisify(execFile);

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
  /** Writes the file system's dirty blocks home (syncFileSystem). */
  readonly flush: (dir: string) => Promise<void>;
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

/** Writes the file system's dirty blocks home (syncfs(2), through coreutils' `sync -f`). */
export async function syncFileSystem(dir: string): Promise<void> {
  try {
    await execFileAsync('sync', ['-f', dir], { timeout: SYNC_TIMEOUT_MS });
  } catch (e) {
    throw new Error(`sync -f ${dir} failed: ${messageOf(e)}`, { cause: e });
  }
}

/** A syncfs that takes longer than this is another writer's backlog: the calibration gives up. */
const SYNC_TIMEOUT_MS = 120_000;

/**
 * One round: the files made, the file system synced so the blocks it journalled are written home, the
 * files removed, the directory synced so the journal commits the removals too, and the file system
 * synced again. Flat: the files side by side in one directory. Fanout: each at a fan-out path named as
 * the run names blocks, its directories made when missing (removed with the files).
 */
async function round(t: CalibrationTarget, dir: string, bytes: Uint8Array): Promise<number> {
  const before = await t.counters();
  await mkdir(dir);
  const made: string[] = [];
  try {
    for (let i = 0; i < CALIBRATION_FILES; i++) {
      if (t.layout === 'flat') {
        made.push(join(dir, `f${i}.bin`));
      } else {
        const final = join(dir, poolBlockName(CALIBRATION_NAMESPACE, `${dir}\n${i}`));
        await mkdir(dirname(final), { recursive: true });
        made.push(final);
      }
      await makeFile(made[made.length - 1] ?? '', t, bytes);
    }
    // Home before the removals: blocks freed before they were written home would never be.
    await t.flush(t.dir);
    for (const f of made.splice(0)) {
      await unlink(f);
      // The fan-out levels, deepest first, once empty (another of this round's files may share them).
      if (t.layout === 'fanout')
        for (const d of [dirname(f), dirname(dirname(f)), dirname(dirname(dirname(f)))]) await rmdir(d).catch(() => undefined);
    }
    const dh = await open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    await dh.sync().finally(() => dh.close());
    await t.flush(t.dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const written = diskDelta(before, await t.counters()).writeBytes;
  return Math.max(0, (written - CALIBRATION_FILES * bytes.length) / CALIBRATION_FILES);
}

/** Calibrates the file system's bytes per new file in a scratch directory of the cache dir, removed afterwards. */
export async function calibrateMetadataBytes(t: CalibrationTarget): Promise<MetadataCalibration> {
  const fileBytes = roundUp(Math.max(1, Math.min(t.entryBytes, MAX_CALIBRATION_FILE_BYTES)), DIRECT_ALIGN);
  if (t.buffer.length < fileBytes) throw new RangeError(`the calibration buffer holds ${t.buffer.length} bytes; ${fileBytes} are needed`);
  const bytes = t.buffer.subarray(0, fileBytes);
  const t0 = performance.now();
  // What others left dirty is written before the first round, not counted in it.
  await t.flush(t.dir);
  const files: number[] = [];
  for (let r = 0; r < CALIBRATION_ROUNDS; r++) files.push(await round(t, join(t.dir, `.kvc-calibrate-${t.runId}-${r}`), bytes));
  const bytesPerNewFile = Math.min(...files);
  return {
    layout: t.layout,
    filesPerRound: CALIBRATION_FILES,
    fileBytes,
    roundsBytesPerFile: files,
    bytesPerNewFile,
    roundsBytesPerFileInNewDir: null,
    bytesPerNewDir: null,
    disturbed: bytesPerNewFile > MAX_PLAUSIBLE_BYTES_PER_FILE,
    seconds: (performance.now() - t0) / 1000,
  };
}

/** What the run knows when it decides whether to calibrate (a RunSetup's storage and the run's block size). */
export interface CalibrationContext {
  readonly storage: StorageTarget;
  readonly runId?: string;
  /** The run's KV block bytes, or undefined in whole-request mode (files then get the 64 KiB cap). */
  readonly blockBytes?: number;
  readonly traceMode: boolean;
}

/**
 * Calibrates when the run writes a file per entry (flat or fanout) on a resolved device that is not
 * RAM; otherwise undefined: slab makes no file per block, an object store has no device counters.
 */
export async function calibrateForRun(c: CalibrationContext): Promise<MetadataCalibration | undefined> {
  const s = c.storage;
  if (c.traceMode || s.kind !== 'file' || s.dir === undefined || s.inRam !== undefined) return undefined;
  if (s.layout !== 'flat' && s.layout !== 'fanout') return undefined;
  if (s.device.kind !== 'device') return undefined;
  const watch = DiskWatch.forDevice(s.device.device);
  const { slab, direct } = AlignedSlab.create(MAX_CALIBRATION_FILE_BYTES, s.dir);
  const buffer = slab.view(0, MAX_CALIBRATION_FILE_BYTES);
  buffer.fill(0x5a); // not zeros: a device that compresses or dedups zeros must still see the bytes
  return calibrateMetadataBytes({
    dir: s.dir,
    runId: c.runId ?? newRunId(),
    layout: s.layout,
    direct: direct && s.ioMode === 'direct',
    entryBytes: c.blockBytes ?? MAX_CALIBRATION_FILE_BYTES,
    counters: () => watch.snapshot(),
    buffer,
    flush: syncFileSystem,
  });
}
