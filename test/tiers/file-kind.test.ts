// The `file` storage backend as the registry opens it: its description (the directory, its file
// system, the I/O mode granted), earlier runs' entry files found and removed only when asked, the
// capacity it defaults to, what "full" means, and the RAM file system warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statfsSync } from 'node:fs';
import { lstat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectSlabs } from '../../src/data/aligned.js';
import { FILE_STORAGE } from '../../src/tiers/file-kind.js';
import { BlockFiles } from '../../src/tiers/block-file.js';
import { MiB } from '../../src/util/units.js';
import { withTempDir } from '../util/temp-dir.js';

const OPTIONS = { ioMode: 'buffered', chunkBytes: MiB, stagingSlots: 2, directSlabs: new DirectSlabs() } as const;

test('describes its directory; the limit is the capacity given, else 95 % of the free space', async () => {
  await withTempDir(async (dir) => {
    const f = await FILE_STORAGE.open({ ...OPTIONS, dir });
    try {
      const fs = f.description.fileSystem;
      assert.deepEqual(f.description, {
        kind: 'file',
        location: dir,
        dir,
        ioMode: 'buffered',
        fileSystem: fs,
        layout: 'flat',
        fileCalls: "fs: Node's fs, one threadpool job per call (buffered I/O)",
        entryDir: dir,
        ...(f.description.inRam !== undefined ? { inRam: 'file system' } : {}),
      });
      assert.equal(f.probeDir, dir);
      assert.equal(await f.limitBytes(123 * MiB), 123 * MiB);
      const before = statfsSync(dir);
      const limit = await f.limitBytes(0);
      const after = statfsSync(dir);
      const share = (s: { bavail: number; bsize: number }): number => Math.floor(s.bavail * s.bsize * 0.95);
      assert.ok(limit <= Math.max(share(before), share(after)) && limit >= Math.min(share(before), share(after)), `${limit}`);
      assert.equal(f.fullness.where, `${dir} (${fs})`);
      assert.deepEqual(
        ['ENOSPC', 'EDQUOT', 'EIO', 'EEXIST', 'other'].map((c) => f.fullness.isFullError(c)),
        [true, true, false, false, false],
      );
      assert.equal(f.keyFits?.('a'.repeat(196)), true, '196 + .bin = 200 characters: stored as it is');
      assert.equal(f.keyFits?.('a'.repeat(197)), false);
      assert.equal(f.keyFits?.('é'.repeat(39)), true, 'escaped: 39 × %00E9 + .bin = 199');
      assert.equal(f.keyFits?.('é'.repeat(40)), false);
      const space = await f.fullness.space();
      assert.ok(space !== undefined && space.sizeBytes > 0 && space.freeBytes <= space.sizeBytes);
    } finally {
      await f.backend.close();
    }
  });
});

test('direct I/O: one-chunk entries as native jobs when the helper is built, fs calls with --file-calls fs; the description says which', async () => {
  await withTempDir(async (dir) => {
    const native = await FILE_STORAGE.open({ ...OPTIONS, ioMode: 'direct', dir });
    const fs = await FILE_STORAGE.open({ ...OPTIONS, ioMode: 'direct', dir, fileCalls: 'fs' });
    try {
      assert.equal(native.description.ioMode, 'direct', 'this test needs O_DIRECT under the temp dir');
      const probe = BlockFiles.load(1);
      const built = typeof probe !== 'string';
      if (typeof probe !== 'string') probe.close();
      assert.match(
        native.description.fileCalls ?? '',
        built
          ? /^native (io_uring|threads): one job of the C helper per entry of one chunk/
          : /^fs: .*\(native block-file helper not built/,
      );
      assert.equal(fs.description.fileCalls, "fs: Node's fs, one threadpool job per call (--file-calls fs)");
    } finally {
      await native.backend.close();
      await fs.backend.close();
    }
  });
});

test("earlier runs' entry files: reported and left, then removed when asked; other files never touched", async () => {
  await withTempDir(async (dir) => {
    const stale = join(dir, 'kvc-0000abcd-old.bin');
    await writeFile(stale, Buffer.alloc(5000));
    await writeFile(join(dir, 'notes.txt'), 'not ours');
    const allocated = (await lstat(stale)).blocks * 512;
    const f = await FILE_STORAGE.open({ ...OPTIONS, dir });
    try {
      const gib = (allocated / 2 ** 30).toFixed(3);
      const what = `${dir} held 1 entry file(s) of earlier runs (kvc-<run id>-*.bin, ${gib} GiB on disk), e.g. from a killed run`;
      assert.deepEqual(await f.leftovers(false), {
        found: { count: 1, bytes: 5000, allocatedBytes: allocated, removed: 0 },
        warnings: [`${what}; left in place, taking that space from this run: remove them with --remove-stale-entries`],
      });
      assert.equal(existsSync(stale), true);
      assert.deepEqual(await f.leftovers(true), {
        found: { count: 1, bytes: 5000, allocatedBytes: allocated, removed: 1 },
        warnings: [`${what}; 1 removed (--remove-stale-entries)`],
      });
      assert.equal(existsSync(stale), false);
      assert.equal(existsSync(join(dir, 'notes.txt')), true);
      assert.deepEqual(await f.leftovers(true), { found: { count: 0, bytes: 0, allocatedBytes: 0, removed: 0 }, warnings: [] });
    } finally {
      await f.backend.close();
    }
  });
});

test('a directory on tmpfs is described as RAM and warned about', async (t) => {
  if (!existsSync('/dev/shm') || statfsSync('/dev/shm').type !== 0x01021994) {
    t.skip('no tmpfs at /dev/shm');
    return;
  }
  const dir = await mkdtemp('/dev/shm/kvcache-test-');
  try {
    const f = await FILE_STORAGE.open({ ...OPTIONS, dir });
    try {
      assert.equal(f.description.fileSystem, 'tmpfs');
      assert.equal(f.description.inRam, 'file system');
      assert.ok(f.warnings.includes(`${dir} is on tmpfs: this measures RAM, not a storage device`), f.warnings.join('\n'));
    } finally {
      await f.backend.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
