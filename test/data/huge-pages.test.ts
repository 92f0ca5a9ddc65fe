import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AlignedSlab } from '../../src/data/aligned.js';
import { pageBacking, thpMode } from '../../src/data/huge-pages.js';
import { MiB } from '../../src/util/units.js';
import { withTempDir } from '../util/temp-dir.js';

/** This process's anonymous memory in transparent huge pages, bytes (Linux). */
function anonHugeBytes(): number {
  const m = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'));
  assert.ok(m !== null, 'smaps_rollup has AnonHugePages');
  return Number(m[1]) * 1024;
}

test('the THP mode is the bracketed word; a missing or odd file means no THP', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'enabled');
    for (const [text, mode] of [
      ['always [madvise] never\n', 'madvise'],
      ['[always] madvise never\n', 'always'],
      ['always madvise [never]\n', 'never'],
      ['always madvise never\n', undefined],
      ['[sometimes]\n', undefined],
    ] as const) {
      await writeFile(file, text);
      assert.equal(thpMode(file), mode, text);
    }
    assert.equal(thpMode(join(dir, 'absent')), undefined);
  });
});

test('with THP disabled or absent, buffers stay in 4 KiB pages and the description says why', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'enabled');
    await writeFile(file, 'always madvise [never]\n');
    const never = pageBacking(file);
    assert.equal(never.huge, false);
    assert.match(never.description, /^4 KiB pages \(.*never/);
    assert.equal(never.prepare(new SharedArrayBuffer(4 * MiB)), undefined);
    const absent = pageBacking(join(dir, 'absent'));
    assert.equal(absent.huge, false);
    assert.match(absent.description, /^4 KiB pages \(no transparent huge pages/);
  });
});

const mode = process.platform === 'linux' ? thpMode() : undefined;
const why =
  mode === undefined ? 'this kernel has no transparent huge pages' : mode === 'never' ? 'THP is disabled (enabled = never)' : undefined;
if (why !== undefined) console.log(`# skipping the huge-page slab test: ${why}`);

test('a slab of I/O buffers is backed by huge pages', { skip: why }, async () => {
  // The helper is built by `npm run build` (native/build.cjs); on Linux with THP it must be there.
  const backing = pageBacking();
  assert.equal(backing.huge, true, backing.description);
  assert.match(backing.description, /^2 MiB transparent huge pages/);
  const before = anonHugeBytes();
  await withTempDir(async (dir) => {
    const { slab } = AlignedSlab.create(64 * MiB, dir);
    slab.view(0, 64 * MiB).fill(1); // first touch
    const gained = anonHugeBytes() - before;
    // The kernel may fall back to small pages for a few regions under fragmentation; most must be huge.
    assert.ok(gained >= 32 * MiB, `only ${gained / MiB} MiB of the 64 MiB slab is in huge pages`);
  });
});
