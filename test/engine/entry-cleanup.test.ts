import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryFilePrefix, removeEntryFilesSync } from '../../src/engine/entry-cleanup.js';
import type { SyncEntryFs } from '../../src/engine/entry-cleanup.js';
import { entryFileName } from '../../src/tiers/file-names.js';
import { ManualClock } from '../../src/util/clock.js';
import { withTempDir } from '../util/temp-dir.js';

const RUN = '0a1b2c3d';
const OTHER = 'ffff0000';

test('entry-cleanup: the prefix is the one entry files are named with (tiers/file.ts)', () => {
  for (const key of ['k1', 'user_3_turn_2', 'sys/prompt:7', '#sha256:ab'])
    assert.ok(entryFileName(RUN, key).startsWith(entryFilePrefix(RUN)), key);
});

test("entry-cleanup: removes this run's entry files only; other runs' files and other names stay", async () => {
  await withTempDir(async (dir) => {
    const ours = ['k1', 'k2', 'sys/p'].map((k) => entryFileName(RUN, k));
    const kept = [entryFileName(OTHER, 'k1'), 'notes.txt', `kvc-${RUN}-k1.tmp`];
    for (const name of [...ours, ...kept]) writeFileSync(join(dir, name), 'x');
    const r = removeEntryFilesSync({ dir, runId: RUN, ownsDir: false }, new ManualClock());
    assert.deepEqual(r, { dir, removed: 3, left: [] });
    assert.deepEqual(readdirSync(dir).sort(), [...kept].sort());
  });
});

test('entry-cleanup: a temporary directory the run made is removed once empty; a gone directory is nothing to do', async () => {
  await withTempDir(async (root) => {
    const dir = join(root, 'kv_cache_x');
    mkdirSync(dir);
    writeFileSync(join(dir, entryFileName(RUN, 'k')), 'x');
    assert.deepEqual(removeEntryFilesSync({ dir, runId: RUN, ownsDir: true }, new ManualClock()), { dir, removed: 1, left: [] });
    assert.equal(existsSync(dir), false);
    assert.deepEqual(removeEntryFilesSync({ dir, runId: RUN, ownsDir: true }, new ManualClock()), { dir, removed: 0, left: [] });
  });
});

/** A directory in memory whose unlink takes `unlinkMs` of `clock` and fails for the names in `refuse`. */
function slowFs(names: string[], clock: ManualClock, unlinkMs: number, refuse = new Set<string>()): SyncEntryFs & { files: Set<string> } {
  const files = new Set(names);
  return {
    files,
    readdir: () => [...files],
    unlink: (path) => {
      clock.advance(unlinkMs);
      const name = path.slice(path.lastIndexOf('/') + 1);
      if (refuse.has(name)) throw Object.assign(new Error(`EACCES: permission denied, unlink '${path}'`), { code: 'EACCES' });
      files.delete(name);
    },
    rmdir: () => undefined,
  };
}

test('entry-cleanup: bounded in time: what the budget does not cover is named as left, with why', () => {
  const clock = new ManualClock();
  const names = [0, 1, 2, 3, 4].map((i) => entryFileName(RUN, `k${i}`));
  const fs = slowFs(names, clock, 400);
  const r = removeEntryFilesSync({ dir: '/c', runId: RUN, ownsDir: false }, clock, 1000, fs);
  // Unlinks start at 0, 400 and 800 ms; at 1200 ms the budget is spent.
  assert.equal(r.removed, 3);
  assert.deepEqual(r.left, [`/c/${names[3]}`, `/c/${names[4]}`]);
  assert.equal(r.why, 'the 1 s allowed ran out');
});

test('entry-cleanup: a file that cannot be removed is left and named with the error; the rest go', () => {
  const clock = new ManualClock();
  const names = [0, 1, 2].map((i) => entryFileName(RUN, `k${i}`));
  const fs = slowFs(names, clock, 1, new Set([names[1]]));
  const r = removeEntryFilesSync({ dir: '/c', runId: RUN, ownsDir: false }, clock, 1000, fs);
  assert.equal(r.removed, 2);
  assert.deepEqual(r.left, [`/c/${names[1]}`]);
  assert.equal(r.why, `EACCES: permission denied, unlink '/c/${names[1]}'`);
});

test('entry-cleanup: a file created while the first pass ran (a write already queued) is found by the next pass', () => {
  const first = entryFileName(RUN, 'a');
  const late = entryFileName(RUN, 'late');
  const files = new Set([first]);
  const fs: SyncEntryFs = {
    readdir: () => [...files],
    unlink: (path) => {
      const name = path.slice(path.lastIndexOf('/') + 1);
      files.delete(name);
      if (name === first) files.add(late); // appears after the listing
    },
    rmdir: () => undefined,
  };
  const r = removeEntryFilesSync({ dir: '/c', runId: RUN, ownsDir: false }, new ManualClock(), 1000, fs);
  assert.deepEqual([r.removed, r.left], [2, []]);
});
