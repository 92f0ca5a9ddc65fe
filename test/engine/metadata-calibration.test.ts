// The metadata calibration (issue 34, item 7): per-file bytes beyond the data, the least of three
// rounds, its scratch directories gone afterwards, and only for layouts that make a file per entry on
// a real device.
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { performance } from 'node:perf_hooks';
import {
  CALIBRATION_FILES,
  CALIBRATION_ROUNDS,
  MAX_PLAUSIBLE_BYTES_PER_FILE,
  calibrateForRun,
  calibrateAmongEntries,
  calibrateMetadataBytes,
  calibrationFileBytes,
  CalibrationBudgetError,
  CalibrationRoomError,
  SyncTimeoutError,
  syncFileSystem,
} from '../../src/engine/metadata-calibration.js';
import { metadataCalibrationJson } from '../../src/report/metadata-calibration-schema.js';
import { allowedBytesPerNewFile } from '../../src/metrics/result.js';
import type { StorageTarget } from '../../src/engine/tier-stack.js';
import { storageDeviceOf } from '../../src/metrics/diskstats.js';
import type { DiskCounters } from '../../src/metrics/diskstats.js';
import { findStaleEntries } from '../../src/tiers/file-names.js';
import { scanPool } from '../../src/tiers/pool-scan.js';
import { withTempDir } from '../util/temp-dir.js';

/** A tier with no limit, on a file system of 4 KiB blocks. */
const ROOMY = { roomBytes: Infinity, fsBlockBytes: 4096 } as const;

/** Device counters that grow, per round, by the round's data plus `extra[round]` bytes per file. */
function fakeDevice(fileBytes: number, extra: readonly number[]): () => Promise<DiskCounters> {
  let reads = 0;
  let written = 0;
  return () => {
    const round = Math.floor(reads / 2);
    if (reads % 2 === 1) written += CALIBRATION_FILES * (fileBytes + (extra[round] ?? 0));
    reads++;
    const zero = { readOps: 0, readMerges: 0, readBytes: 0, readMs: 0, writeOps: 0, writeMerges: 0, writeMs: 0, inFlight: 0, busyMs: 0 };
    return Promise.resolve({
      name: 'fake',
      major: 1,
      minor: 1,
      ...zero,
      writeBytes: written,
      weightedMs: 0,
      discardOps: 0,
      discardBytes: 0,
      flushOps: 0,
    });
  };
}

for (const layout of ['flat', 'fanout'] as const)
  test(`${layout}: bytes per new file are the least round's excess over the data; the scratch directories are gone`, async () => {
    await withTempDir(async (dir) => {
      const flushed: string[] = [];
      const scanned: number[] = [];
      const c = await calibrateMetadataBytes({
        dir,
        runId: '0000aaaa',
        layout,
        direct: false,
        entryBytes: 16 * 1024 + 1,
        counters: fakeDevice(20 * 1024, [9000, 6000, 7000]),
        buffer: new Uint8Array(64 * 1024),
        ...ROOMY,
        flush: async (d) => {
          // With a round's files made, a later run's scan would take them for a killed calibration's leftovers.
          if (flushed.push(d) % 2 === 0) scanned.push((await findStaleEntries(dir, 'ffffffff')).calibrationFiles);
        },
      });
      assert.equal(c.fileBytes, 20 * 1024, 'the block size rounded up to 4 KiB');
      assert.deepEqual(c.roundsBytesPerFile, [9000, 6000, 7000]);
      assert.equal(c.bytesPerNewFile, 6000);
      assert.equal(c.disturbed, false);
      // Fanout files are made at fan-out paths, their directories in the figure: no separate directory rounds.
      assert.equal(c.roundsBytesPerFileInNewDir, null);
      assert.equal(c.bytesPerNewDir, null);
      // The file system is synced once before the first round (not counted), and twice in each: after
      // the files are made and after they are removed.
      assert.deepEqual(flushed, Array(2 * CALIBRATION_ROUNDS + 1).fill(dir));
      assert.deepEqual(scanned, Array(CALIBRATION_ROUNDS).fill(CALIBRATION_FILES));
      assert.equal(c.filesPerRound, CALIBRATION_FILES);
      assert.equal(c.roundsBytesPerFile.length, CALIBRATION_ROUNDS);
      assert.equal(c.layout, layout);
      assert.deepEqual(readdirSync(dir), []);
    });
  });

test('more than a file system writes for a file in every round: disturbed, and the results allow nothing for it', async () => {
  await withTempDir(async (dir) => {
    const c = await calibrateMetadataBytes({
      dir,
      runId: '0000aaac',
      layout: 'flat',
      direct: false,
      entryBytes: 4096,
      counters: fakeDevice(4096, [900_000, 200_000, MAX_PLAUSIBLE_BYTES_PER_FILE + 1]),
      buffer: new Uint8Array(64 * 1024),
      ...ROOMY,
      flush: () => Promise.resolve(),
    });
    assert.equal(c.bytesPerNewFile, MAX_PLAUSIBLE_BYTES_PER_FILE + 1);
    assert.equal(c.disturbed, true);
    const json = metadataCalibrationJson(c, { files: 1000, dirs: 0 });
    assert.equal(json.new_files_in_window, 1000);
    assert.equal(json.expected_write_bytes, null);
    const quiet = { ...c, bytesPerNewFile: 8192, disturbed: false };
    assert.equal(metadataCalibrationJson(quiet, { files: 1000, dirs: 0 }).expected_write_bytes, 8192 * 1000);
    assert.equal(metadataCalibrationJson(quiet, undefined).expected_write_bytes, null);
    const withDirs = metadataCalibrationJson({ ...quiet, bytesPerNewDir: 4096 }, { files: 1000, dirs: 10 });
    assert.equal(withDirs.expected_write_bytes, 8192 * 1000 + 4096 * 10);
    // After the window, among the run's entries: the larger figure is allowed; a disturbed one is not.
    const after = {
      fileBytes: 16_384,
      roundsBytesPerFile: [12_000, 12_288, 12_500],
      bytesPerNewFile: 12_000,
      disturbed: false,
      seconds: 0.4,
    };
    const grown = metadataCalibrationJson({ ...quiet, afterWindow: after }, { files: 1000, dirs: 0 });
    assert.equal(grown.allowed_bytes_per_new_file, 12_000);
    assert.equal(grown.expected_write_bytes, 12_000 * 1000);
    assert.deepEqual(grown.after_window, {
      file_bytes: 16_384,
      rounds_bytes_per_file: [12_000, 12_288, 12_500],
      bytes_per_new_file: 12_000,
      disturbed: false,
      seconds: 0.4,
    });
    const smaller = metadataCalibrationJson({ ...quiet, afterWindow: { ...after, bytesPerNewFile: 4000 } }, { files: 1000, dirs: 0 });
    assert.equal(smaller.allowed_bytes_per_new_file, 8192);
    const busyAfter = metadataCalibrationJson(
      { ...quiet, afterWindow: { ...after, bytesPerNewFile: 200_000, disturbed: true } },
      { files: 1000, dirs: 0 },
    );
    assert.equal(busyAfter.allowed_bytes_per_new_file, 8192);
    assert.equal(metadataCalibrationJson(quiet, { files: 1000, dirs: 0 }).after_window, null);
    assert.equal(allowedBytesPerNewFile({ ...c, afterWindow: after }), 0, 'disturbed before the window: nothing allowed');
    assert.equal(withDirs.new_dirs_in_window, 10);
  });
});

test('device counters failing mid-calibration: an error, and no scratch directory is left', async () => {
  await withTempDir(async (dir) => {
    let reads = 0;
    const failing = (): Promise<DiskCounters> =>
      ++reads === 2 ? Promise.reject(new Error('diskstats vanished')) : fakeDevice(4096, [0, 0, 0])();
    await assert.rejects(
      calibrateMetadataBytes({
        dir,
        runId: '0000aaad',
        layout: 'fanout',
        direct: false,
        entryBytes: 4096,
        counters: failing,
        buffer: new Uint8Array(64 * 1024),
        ...ROOMY,
        flush: () => Promise.resolve(),
      }),
      /diskstats vanished/,
    );
    assert.deepEqual(readdirSync(dir), []);
  });
});

test('a large entry calibrates with 64 KiB files; a device that wrote less than the data gives 0, never a negative bill', async () => {
  await withTempDir(async (dir) => {
    const c = await calibrateMetadataBytes({
      dir,
      runId: '0000aaab',
      layout: 'flat',
      direct: false,
      entryBytes: 48 << 20,
      counters: fakeDevice(0, [0, 0, 0]),
      buffer: new Uint8Array(64 * 1024),
      ...ROOMY,
      flush: () => Promise.resolve(),
    });
    assert.equal(c.fileBytes, 64 * 1024);
    assert.equal(c.bytesPerNewFile, 0);
  });
});

test('only a file-per-entry layout on a resolved block device is calibrated', async () => {
  await withTempDir(async (dir) => {
    const base: StorageTarget = {
      kind: 'file',
      location: dir,
      dir,
      ioMode: 'buffered',
      fileSystem: 'ext2/3/4',
      layout: 'flat',
      device: { kind: 'unresolved', path: dir },
    };
    assert.equal(
      await calibrateForRun({ storage: base, traceMode: false, roomBytes: Infinity }),
      undefined,
      'no device: nothing to measure',
    );
    const device: StorageTarget['device'] = { kind: 'device', device: { name: 'vda', major: 253, minor: 0, chain: ['vda'] }, model: null };
    for (const storage of [
      { ...base, device, layout: 'slab' as const },
      { ...base, device, inRam: 'file system' as const },
      { ...base, device, kind: 's3' },
    ])
      assert.equal(await calibrateForRun({ storage, traceMode: false, roomBytes: Infinity }), undefined);
    assert.equal(await calibrateForRun({ storage: { ...base, device }, traceMode: true, roomBytes: Infinity }), undefined);
  });
});

test("on the temp directory's own device: three rounds measured, the least taken, nothing left", async () => {
  await withTempDir(async (dir) => {
    const device = await storageDeviceOf(dir);
    if (device.kind !== 'device') {
      process.stdout.write(`# skipped: ${dir} is on no single block device (${device.kind})\n`);
      return;
    }
    const storage: StorageTarget = { kind: 'file', location: dir, dir, ioMode: 'direct', fileSystem: 'any', layout: 'fanout', device };
    const c = await calibrateForRun({ storage, blockBytes: 16 * 1024, traceMode: false, roomBytes: Infinity });
    assert.ok(c !== undefined);
    assert.equal(c.layout, 'fanout');
    assert.equal(c.fileBytes, 16 * 1024);
    assert.equal(c.roundsBytesPerFile.length, 3);
    assert.equal(c.bytesPerNewFile, Math.min(...c.roundsBytesPerFile));
    assert.equal(c.roundsBytesPerFileInNewDir, null);
    assert.ok(c.seconds > 0);
    assert.deepEqual(readdirSync(dir), []);
  });
});

test('a syncfs that fails ends the calibration with its cause, and no scratch directory is left', async () => {
  await withTempDir(async (dir) => {
    let calls = 0;
    await assert.rejects(
      calibrateMetadataBytes({
        dir,
        runId: '0000aaae',
        layout: 'fanout',
        direct: false,
        entryBytes: 4096,
        counters: fakeDevice(4096, [0, 0, 0]),
        buffer: new Uint8Array(64 * 1024),
        ...ROOMY,
        flush: () => (++calls === 2 ? Promise.reject(new Error('sync -f: I/O error')) : Promise.resolve()),
      }),
      /sync -f: I\/O error/,
    );
    assert.deepEqual(readdirSync(dir), []);
    await syncFileSystem(dir);
    await assert.rejects(syncFileSystem(`${dir}/missing`), (e: Error) => e.message.startsWith(`sync -f ${dir}/missing failed: `));
  });
});

test('a calibration past its budget gives up (between files, or a sync cut short) and leaves nothing behind', async () => {
  await withTempDir(async (dir) => {
    const target = {
      dir,
      runId: '0000aab0',
      layout: 'fanout' as const,
      direct: false,
      entryBytes: 4096,
      counters: fakeDevice(4096, [0, 0, 0]),
      buffer: new Uint8Array(64 * 1024),
      ...ROOMY,
    };
    // Files slow to make: the budget runs out between them, in the first round.
    let made = 0;
    const slowFiles = calibrateMetadataBytes({
      ...target,
      budgetMs: 150,
      flush: async (_dir, timeoutMs) => {
        made++;
        assert.ok(timeoutMs <= 150, `the sync is given what is left of the budget, not ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 200)); // the first sync alone outlasts it
      },
    });
    await assert.rejects(
      slowFiles,
      (e: Error) => e instanceof CalibrationBudgetError && /after 0.15 s, half of --barrier-timeout/.test(e.message),
    );
    assert.equal(made, 1, 'no round started after the budget ran out');
    assert.deepEqual(readdirSync(dir), []);
    // A sync that does not end in what is left: cut short as the budget, the round's files removed.
    let flushes = 0;
    await assert.rejects(
      calibrateMetadataBytes({
        ...target, // no budget: each sync its own 120 s
        flush: (d, timeoutMs) => (++flushes === 2 ? Promise.reject(new SyncTimeoutError(d, timeoutMs)) : Promise.resolve()),
      }),
      SyncTimeoutError,
      'without a budget, a sync that times out is its own error',
    );
    assert.deepEqual(readdirSync(dir), []);
    flushes = 0;
    await assert.rejects(
      calibrateMetadataBytes({
        ...target,
        budgetMs: 5_000,
        flush: (d, timeoutMs) => (++flushes === 2 ? Promise.reject(new SyncTimeoutError(d, timeoutMs)) : Promise.resolve()),
      }),
      CalibrationBudgetError,
    );
    assert.deepEqual(readdirSync(dir), []);
  });
});

test(
  'a sync -f that hangs is given up after its timeout, and does not keep the caller waiting',
  { skip: process.platform !== 'linux' },
  async () => {
    await withTempDir(async (dir) => {
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'sync'), '#!/bin/sh\nexec sleep 10\n', { mode: 0o755 });
      const path = process.env.PATH;
      process.env.PATH = `${bin}:${path ?? ''}`;
      try {
        const t0 = performance.now();
        await assert.rejects(
          syncFileSystem(dir, 200),
          (e: Error) => e instanceof SyncTimeoutError && e.message === `sync -f ${dir} was still running after 0.2 s`,
        );
        assert.ok(performance.now() - t0 < 5_000);
      } finally {
        process.env.PATH = path;
      }
    });
  },
);

for (const layout of ['flat', 'fanout'] as const)
  test(`${layout}, after the window: the rounds among the run's own entries, which are left as they were; nothing of the rounds is left`, async () => {
    await withTempDir(async (dir) => {
      const entryDir = layout === 'flat' ? dir : join(dir, 'kvfan-0000aaaf');
      const entry = layout === 'flat' ? join(dir, 'kvc-0000aaaf-x.bin') : join(entryDir, 'abc', 'de', `${'a'.repeat(40)}.bin`);
      mkdirSync(dirname(entry), { recursive: true });
      writeFileSync(entry, 'entry');
      const seen: string[] = [];
      const scanned: number[] = [];
      let flushes = 0;
      const after = await calibrateAmongEntries(
        {
          dir,
          runId: '0000aaaf',
          layout,
          direct: false,
          entryBytes: 16 * 1024,
          counters: fakeDevice(16 * 1024, [12_000, 12_500, 13_000]),
          buffer: new Uint8Array(64 * 1024),
          ...ROOMY,
          flush: async () => {
            // After a round's files are made (every other flush but the first): where they are, and
            // that a later run's scan would take them for a killed calibration's leftovers.
            if (++flushes % 2 === 0) {
              seen.push(...listFiles(entryDir).filter((f) => f.includes('kvc-cal-')));
              scanned.push(
                layout === 'flat'
                  ? (await findStaleEntries(entryDir, 'ffffffff')).calibrationFiles
                  : (await scanPool(entryDir, 'ffffffff')).tempPaths.length,
              );
            }
          },
        },
        entryDir,
      );
      assert.deepEqual(after.roundsBytesPerFile, [12_000, 12_500, 13_000]);
      assert.equal(after.bytesPerNewFile, 12_000);
      assert.equal(after.disturbed, false);
      assert.equal(flushes, 2 * CALIBRATION_ROUNDS + 1);
      assert.equal(seen.length, CALIBRATION_ROUNDS * CALIBRATION_FILES);
      assert.deepEqual(scanned, Array(CALIBRATION_ROUNDS).fill(CALIBRATION_FILES));
      const shape =
        layout === 'flat'
          ? /^\.kvc-cal-0000aaaf-[0-2]-\d+\.bin$/
          : /^[0-9a-f]{3}\/[0-9a-f]{2}\/[0-9a-f]{40}\.bin\.kvc-cal-0000aaaf-[0-2]-\d+$/;
      for (const f of seen) assert.match(f, shape);
      // The run's entry is untouched; no calibration file is left (fan-out directories made for them may stay).
      assert.equal(readFileSync(entry, 'utf8'), 'entry');
      assert.deepEqual(
        listFiles(entryDir).filter((f) => !f.endsWith('.bin') || f.includes('kvc-cal-')),
        [],
      );
      assert.equal(listFiles(entryDir).length, 1);
    });
  });

/** Regular files under `dir`, as paths relative to it. */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)));
}

test("a round's files fit the room the tier has left under its limit: smaller files, or no calibration", () => {
  const KiB = 1024;
  const at = (layout: 'flat' | 'fanout', roomBytes: number, entryBytes = 64 * KiB) =>
    calibrationFileBytes({ layout, roomBytes, entryBytes, fsBlockBytes: 4096 });
  assert.equal(at('flat', Infinity), 64 * KiB);
  assert.equal(at('flat', Infinity, 10 * KiB), 12 * KiB, 'the block size rounded up to a page');
  // A 64 KiB file takes 64 KiB of data, an extent block and a directory block: 72 KiB; 128 of them 9 MiB.
  assert.equal(at('flat', 9 * 1024 * KiB), 64 * KiB);
  assert.equal(at('flat', 9 * 1024 * KiB - 1), 60 * KiB);
  // 2 MiB of room: 16 KiB per file, 8 of them data beside an extent block and a directory block.
  assert.equal(at('flat', 2048 * KiB), 8 * KiB);
  // Fanout may open two directories per file: a block each beyond flat's.
  assert.equal(at('fanout', 128 * 20 * KiB), 4 * KiB);
  assert.equal(at('flat', 128 * 20 * KiB), 12 * KiB);
  for (const room of [128 * 12 * KiB - 1, 0, -5 * KiB])
    assert.throws(
      () => at('flat', room),
      (e: unknown) =>
        e instanceof CalibrationRoomError &&
        e.message ===
          `its 128 files need 1.50 MiB on the medium and the storage tier has ${(Math.max(0, room) / 1048576).toFixed(2)} MiB left under its limit`,
    );
});

for (const layout of ['flat', 'fanout'] as const)
  test(`${layout}: with little room left under the tier's limit, what a round's files take on the file system stays within it`, async () => {
    await withTempDir(async (dir) => {
      const roomBytes = 128 * 24 * 1024;
      const entryDir = layout === 'flat' ? dir : join(dir, 'kvfan-0000aab0');
      mkdirSync(entryDir, { recursive: true });
      let flushes = 0;
      let most = 0;
      const after = await calibrateAmongEntries(
        {
          dir,
          runId: '0000aab0',
          layout,
          direct: false,
          entryBytes: 64 * 1024,
          counters: fakeDevice(layout === 'flat' ? 16 * 1024 : 8 * 1024, [9000, 9000, 9000]),
          buffer: new Uint8Array(64 * 1024),
          flush: () => {
            if (++flushes % 2 === 0)
              most = Math.max(
                most,
                listFiles(entryDir).reduce((n, f) => n + lstatSync(join(entryDir, f)).blocks * 512, 0),
              );
            return Promise.resolve();
          },
          roomBytes,
          fsBlockBytes: 4096,
        },
        entryDir,
      );
      assert.equal(after.fileBytes, layout === 'flat' ? 16 * 1024 : 8 * 1024);
      assert.equal(after.bytesPerNewFile, 9000);
      assert.ok(most > 0 && most <= roomBytes, `the files took ${most} bytes of ${roomBytes}`);
    });
  });
