import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupLines, EntryFileTracker } from '../../src/cli/force-quit.js';
import type { SyncEntryFs } from '../../src/engine/entry-cleanup.js';
import { entryFileName } from '../../src/tiers/file-names.js';
import { ManualClock } from '../../src/util/clock.js';

test('force-quit: what was removed, and what was left with why and how to remove it', () => {
  assert.deepEqual(cleanupLines({ dir: '/c', removed: 4, left: [] }), ['removed 4 entry file(s) of this run from /c']);
  assert.deepEqual(
    cleanupLines({ dir: '/c', removed: 1, left: ['/c/a', '/c/b', '/c/c', '/c/d', '/c/e'], why: 'the 2 s allowed ran out' }),
    [
      'removed 1 entry file(s) of this run from /c',
      'left 5 entry file(s) (the 2 s allowed ran out): /c/a, /c/b, /c/c and 2 more; remove them by hand, or give the next run in /c --remove-stale-entries',
    ],
  );
});

test('force-quit: the tracker cleans every storage it heard of, says nothing of storages already torn down', () => {
  const dirs = new Map<string, Set<string>>([
    ['/t1', new Set<string>()], // an earlier trial's storage, already torn down
    ['/t2', new Set([entryFileName('00000002', 'k1'), entryFileName('00000002', 'k2'), entryFileName('00000001', 'k9')])],
  ]);
  const fs: SyncEntryFs = {
    readdir: (dir) => [...(dirs.get(dir) ?? [])],
    unlink: (path) => void dirs.get(path.slice(0, 3))?.delete(path.slice(4)),
    rmdir: () => undefined,
  };
  const tracker = new EntryFileTracker(new ManualClock(), 2000, fs);
  assert.deepEqual(tracker.removeAll(), ['no entry files had been written yet']);
  tracker.opened({ dir: '/t1', runId: '00000001', ownsDir: false });
  tracker.opened({ dir: '/t2', runId: '00000002', ownsDir: false });
  assert.deepEqual(tracker.removeAll(), ['removed 2 entry file(s) of this run from /t2']);
  assert.deepEqual([...(dirs.get('/t2') ?? [])], [entryFileName('00000001', 'k9')], "another run's file stays");
  assert.deepEqual(tracker.removeAll(), ['no entry files of this run were left to remove']);
});

test('force-quit during set-up: the temporary cache dir is heard of the moment it is made, and removed (issue 35)', async () => {
  const { FileBackend } = await import('../../src/tiers/file.js');
  const { existsSync } = await import('node:fs');
  const tracker = new EntryFileTracker();
  const heard: string[] = [];
  const backend = await FileBackend.create({
    ioMode: 'buffered',
    madeDir: (at) => {
      assert.ok(existsSync(at.dir), 'told once it exists');
      heard.push(at.dir);
      tracker.opened(at);
    },
  });
  assert.deepEqual(heard, [backend.dir]);
  // The force-quit came before the engine announced the storage: the tracker still knows the directory.
  assert.deepEqual(tracker.removeAll(), ['no entry files of this run were left to remove']);
  assert.equal(existsSync(backend.dir), false, 'the empty temporary directory is gone');
  await backend.close();
  const given = await FileBackend.create({ ioMode: 'buffered', dir: backend.dir, madeDir: () => heard.push('given') });
  assert.deepEqual(heard, [backend.dir], 'a --cache-dir is not a directory the run made');
  await given.close();
  const { rmSync } = await import('node:fs');
  rmSync(backend.dir, { recursive: true, force: true });
});

test('force-quit with an object store: its objects are named with what to do (DELETEs over HTTP cannot be waited for), not "no entry files"', () => {
  const tracker = new EntryFileTracker(new ManualClock(), 2000, { readdir: () => [], unlink: () => undefined, rmdir: () => undefined });
  const at = 's3://b/p/ (kvc-0000beef-*.bin: give the next run on this prefix --remove-stale-entries)';
  tracker.objects(at);
  assert.deepEqual(tracker.removeAll(), [`a force-quit cannot wait for DELETEs: this run's objects may be left in ${at}`]);
  tracker.opened({ dir: '/t', runId: '0000beef', ownsDir: false });
  assert.deepEqual(tracker.removeAll(), [
    'no entry files of this run were left to remove',
    `a force-quit cannot wait for DELETEs: this run's objects may be left in ${at}`,
  ]);
});
