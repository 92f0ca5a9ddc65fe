// Results are never lost to the last step: outputs that cannot work are refused at start (exit 2),
// and when the output location fails during the run (here: its file system turns read-only), the
// results go to a fallback file whose path the message names (exit 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inTempDir, runCli, QUICK_RUN } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';

const RUN = QUICK_RUN;

test('run: an output that is an input, a device node, a directory path or under /proc is refused at start', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'c.yaml');
    await writeFile(config, 'decode:\n  batch_size: 32\n');
    const bad = async (args: string[], message: RegExp): Promise<void> => {
      const r = await runCli([...RUN, '--duration', '1', ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    };
    await bad(['--config', config, '--output', config], /--output .*c\.yaml is the same file as --config/);
    await bad(['--output', '/dev/null'], /--output \/dev\/null is a device node/);
    await bad(['--output', join(dir, 'o') + '/'], /ends in '\/'/);
    await bad(['--output', '/proc/r.json'], /\/proc is a pseudo file system/);
    await bad(['--output', join(dir, 'r.json'), '--xlsx-output', join(dir, 'r.json')], /--xlsx-output .* is the same file as --output/);
    assert.deepEqual(readdirSync(dir), ['c.yaml']);
  });
});

/** Makes `dir` unwritable mid-run: a loop-mounted ext4 remounted read-only (root), or its write permission removed (not root). */
interface Spoiler {
  readonly outDir: string;
  spoil(): void;
  cleanUp(): void;
}

function loopMountSpoiler(dir: string): Spoiler {
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  execFileSync('truncate', ['-s', '16M', img]);
  execFileSync('mkfs.ext4', ['-q', img]);
  execFileSync('mkdir', [mnt]);
  execFileSync('mount', ['-o', 'loop', img, mnt]);
  return {
    outDir: mnt,
    spoil: () => execFileSync('mount', ['-o', 'remount,ro', mnt]),
    cleanUp: () => execFileSync('umount', [mnt]),
  };
}

function canLoopMount(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  try {
    execFileSync('sh', ['-c', 'command -v mkfs.ext4 && command -v mount && command -v truncate'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'mkfs.ext4, mount or truncate is missing';
  }
}

test('run: the output location turning read-only mid-run sends the results to a named fallback file (exit 1)', async (t) => {
  const noLoop = canLoopMount();
  const root = process.getuid?.() === 0;
  if (noLoop !== undefined && root) {
    t.skip(`needs a loop mount (${noLoop}); as root a permission change cannot make a directory unwritable`);
    return;
  }
  await inTempDir(async (dir) => {
    let spoiler: Spoiler;
    if (noLoop === undefined) spoiler = loopMountSpoiler(dir);
    else {
      const outDir = join(dir, 'out');
      await mkdir(outDir);
      spoiler = { outDir, spoil: () => void chmod(outDir, 0o555), cleanUp: () => void chmod(outDir, 0o755) };
    }
    try {
      const cache = join(dir, 'cache');
      await mkdir(cache);
      const out = join(spoiler.outDir, 'r.json');
      let spoiled = false;
      const r = await runCli([...RUN, '--duration', '3', '--cache-dir', cache, '--output', out], {
        // Once the run is under way (its start-up checks passed): the storage of the results goes bad.
        onStdout: (soFar) => {
          if (spoiled || !soFar.includes('Status:')) return;
          spoiled = true;
          spoiler.spoil();
        },
      });
      assert.equal(spoiled, true, r.stdout);
      assert.equal(r.code, 1, r.stderr);
      const m = /results not written to (\S+) \((.+)\); saved to (\S+) instead/.exec(r.stderr);
      assert.ok(m !== null, r.stderr);
      assert.equal(m[1], out);
      assert.equal(
        m[3],
        join(dir, `kvcache-unsaved-${/kvcache-unsaved-(\d+)-/.exec(m[3] ?? '')?.[1] ?? ''}-r.json`),
        'next to the cache dir',
      );
      const doc = await readValidResults(m[3] ?? '');
      assert.equal(doc.kvcache_bench.stop_reason, 'duration');
      assert.equal(existsSync(out), false);
      assert.deepEqual(readdirSync(cache), []);
    } finally {
      spoiler.cleanUp();
    }
  });
});
