// End-to-end: what a run does at the edges of its storage. A killed run's entry files are reported
// by the next run in the same cache dir (never collided with), and removed only with
// --remove-stale-entries; a full file system ends the measurement as storage_full (exit 1); the
// default capacity (95 % of the free space) holds on disk. The file-system tests need root and
// mkfs.ext4 (a small loop-mounted ext4), as in CI; elsewhere they are skipped with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, statfsSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { readValidResults } from '../report/validate-results.js';
import { inTempDir, runCli, SMALL_USERS } from './run-cli.js';
import { allocatedUnder } from '../util/allocated.js';

const BASE = ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'];
const ENTRY = /^kvc-[0-9a-f]{8}-.+\.bin$/;

const entryFiles = (dir: string): string[] => readdirSync(dir).filter((f) => ENTRY.test(f));

test('a SIGKILLed run leaves its entry files; the next run does not collide, reports them, removes them only when asked', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const cache = join(dir, 'cache');
    await mkdir(cache);
    writeFileSync(join(cache, 'notes.txt'), 'not ours');
    const args = (out: string, ...more: string[]): string[] => [
      ...BASE,
      '--config',
      config,
      '--cache-dir',
      cache,
      '--output',
      join(dir, out),
      ...more,
    ];

    const killed = await runCli([...args('killed.json'), '--num-users', '4', '--duration', '60', '--seed', '7'], {
      onStart: (kill) => {
        const poll = setInterval(() => {
          if (entryFiles(cache).length >= 2) {
            clearInterval(poll);
            kill('SIGKILL');
          }
        }, 20);
        setTimeout(() => clearInterval(poll), 30_000).unref();
      },
    });
    assert.equal(killed.signal, 'SIGKILL');
    const left = entryFiles(cache);
    assert.ok(left.length >= 2, `the killed run left ${left.length} entry files`);
    const leftBytes = left.reduce((n, f) => n + lstatSync(join(cache, f)).blocks * 512, 0);

    // The same seed, so the same keys: the new run's files differ by their run id.
    const second = await runCli([...args('second.json'), '--num-users', '2', '--duration', '2', '--seed', '7']);
    assert.equal(second.code, 0, second.stderr);
    const j = await readValidResults(join(dir, 'second.json'));
    const add = j.kvcache_bench;
    assert.deepEqual(add.stale_entries, {
      count: left.length,
      bytes: add.stale_entries?.bytes ?? -1,
      allocated_bytes: leftBytes,
      removed: 0,
    });
    assert.ok(add.warnings.some((w) => w.includes(`${left.length} entry file(s) of earlier runs`) && w.includes('--remove-stale-entries')));
    assert.equal(j.summary.cache_stats.tier_storage_failed_ops, 0, 'no collision');
    assert.deepEqual(add.failed_operations, []);
    assert.deepEqual(entryFiles(cache).sort(), [...left].sort(), 'left in place, and the second run removed its own');

    const third = await runCli([...args('third.json'), '--num-users', '2', '--duration', '1', '--remove-stale-entries']);
    assert.equal(third.code, 0, third.stderr);
    const k = (await readValidResults(join(dir, 'third.json'))).kvcache_bench;
    assert.equal(k.stale_entries?.count, left.length);
    assert.equal(k.stale_entries?.removed, left.length);
    assert.deepEqual(readdirSync(cache), ['notes.txt'], 'stale entries gone, the foreign file untouched');
  });
});

/** Why a loop-mounted file system cannot be made here, or undefined when it can. */
function loopUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (loop mount)';
  try {
    execFileSync('sh', ['-c', 'command -v mkfs.ext4 && command -v mount && command -v losetup'], { stdio: 'ignore' });
  } catch {
    return 'needs mkfs.ext4, mount and losetup';
  }
  return undefined;
}

/** Runs `fn` on a fresh ext4 of `mib` MiB, loop-mounted; unmounted and removed afterwards. */
async function withSmallFs(mib: number, fn: (mnt: string) => Promise<void>): Promise<void> {
  await inTempDir(async (dir) => {
    const img = join(dir, 'fs.img');
    const mnt = join(dir, 'mnt');
    await mkdir(mnt);
    execFileSync('truncate', ['-s', `${mib}M`, img]);
    execFileSync('mkfs.ext4', ['-q', '-F', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
    try {
      await fn(mnt);
    } finally {
      execFileSync('umount', [mnt]);
      await rm(img, { force: true });
    }
  });
}

const skipLoop = loopUnavailable();
/** The file system of the default-capacity test (MiB). */
const DEFAULT_CAPACITY_FS_MIB = 96;
if (skipLoop !== undefined) console.log(`# storage-limits: file-system tests skipped: ${skipLoop}`);

test(
  'a full file system ends the measurement: storage_full, exit 1, failures named, written bytes within the file system',
  { skip: skipLoop },
  async () => {
    await withSmallFs(48, async (mnt) => {
      const config = join(mnt, 'small.yaml');
      await writeFile(config, SMALL_USERS);
      const cache = join(mnt, 'cache');
      await mkdir(cache);
      const out = join(mnt, 'full.json');
      // A capacity far over the file system's size: only the file system can stop the writes.
      const r = await runCli([
        ...BASE,
        '--config',
        config,
        '--cache-dir',
        cache,
        '--output',
        out,
        '--num-users',
        '8',
        '--duration',
        '30',
        '--storage-capacity-gb',
        '4',
      ]);
      assert.equal(r.code, 1, r.stderr);
      const j = await readValidResults(out);
      const add = j.kvcache_bench;
      assert.equal(add.stop_reason, 'storage_full');
      assert.ok(add.measured_window_sec < 30);
      assert.ok(
        add.warnings.some((w) => w.startsWith(`storage full: a write to ${cache} (ext2/3/4) failed with ENOSPC`)),
        add.warnings.join('\n'),
      );
      assert.ok(add.warnings.some((w) => /^\d+ storage (write|writes|demotion writes?) failed with ENOSPC/.test(w)));
      const enospc = add.failed_operations.filter((f) => f.tier === 'storage' && f.error === 'ENOSPC');
      assert.ok(enospc.length > 0 && enospc.every((f) => f.operation === 'placement_write'));
      assert.equal(
        add.failed_operations.reduce((n, f) => n + f.count, 0),
        j.summary.cache_stats.tier_storage_failed_ops,
      );
      const fsBytes = statfsSync(mnt).blocks * statfsSync(mnt).bsize;
      assert.ok(
        j.summary.cache_stats.total_write_bytes <= fsBytes,
        `${j.summary.cache_stats.total_write_bytes} written on a ${fsBytes}-byte file system`,
      );
      assert.match(r.stdout, /FAILED OPERATIONS/);
      assert.deepEqual(entryFiles(cache), [], 'entry files removed');
    });
  },
);

test(
  'the default capacity (95 % of the free space) holds on disk: sampled every 50 ms, the peak stays under it',
  { skip: skipLoop },
  async () => {
    // 96 MiB, not 48: at the limit the run evicts ~150 entries of up to 3.5 MiB a second, and ext4
    // reuses an unlinked file's blocks only after its journal commits; on 48 MiB the 5 % left over was
    // ~2 MiB, and under CI's load a write once met ENOSPC with the frees still pending.
    await withSmallFs(DEFAULT_CAPACITY_FS_MIB, async (mnt) => {
      const config = join(mnt, 'small.yaml');
      await writeFile(config, SMALL_USERS);
      const cache = join(mnt, 'cache');
      await mkdir(cache);
      const out = join(mnt, 'default.json');
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, allocatedUnder(cache))), 50);
      let r;
      try {
        r = await runCli([...BASE, '--config', config, '--cache-dir', cache, '--output', out, '--num-users', '8', '--duration', '5']);
      } finally {
        clearInterval(sampler);
      }
      const add = (await readValidResults(out)).kvcache_bench;
      assert.equal(r.code, 0, `${r.stderr}\n${add.warnings.join('\n')}`);
      assert.equal(add.stop_reason, 'duration');
      assert.deepEqual(add.failed_operations, []);
      const limit = add.storage_capacity?.limit_bytes ?? 0;
      assert.ok(limit > 0 && limit < DEFAULT_CAPACITY_FS_MIB * 1024 * 1024);
      assert.ok(peak <= limit, `peak ${peak} on disk > limit ${limit}`);
      assert.ok((add.storage_capacity?.peak_allocated_bytes ?? Infinity) <= limit);
      assert.ok(peak > limit / 2, `the run should fill the tier (peak ${peak} of ${limit})`);
      // The calibration among the entries after the window was made, within the limit (least recently used entries made room).
      const cal = add.metadata_calibration;
      if (cal !== undefined && !cal.disturbed) assert.equal(cal.after_window?.file_bytes, cal.file_bytes);
      assert.ok(existsSync(out));
    });
  },
);
