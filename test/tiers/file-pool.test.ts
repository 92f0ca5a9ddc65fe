// A shared pool on files (issue 32, docs/shared-pool.md): any backend reads what another published,
// publishing is atomic (a temporary name, then link) and never replaces another writer's block, a
// reader never sees part of a block (racing readers; a writer killed mid-block), a block gone
// between lookup and read is EntryNotFoundError, and what is planted in the pool (a FIFO, a link, a
// linked fan-out directory) is never read through, written through or waited on.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { AlreadyPublishedError, EntryNotFoundError } from '../../src/tiers/backend.js';
import type { PoolAccess } from '../../src/tiers/backend.js';
import { BlockFiles } from '../../src/tiers/block-file.js';
import { FileBackend } from '../../src/tiers/file.js';
import { FanoutDirsMade, POOL_TEMP_FILE, poolBlockName, poolNamespace } from '../../src/tiers/pool-names.js';
import { removePoolTemps, scanPool } from '../../src/tiers/pool-scan.js';
import { MiB } from '../../src/util/units.js';
import { withTempDir } from '../util/temp-dir.js';

const NS = poolNamespace({ model: 'tiny-1b', blockTokens: 16, bytesPerToken: 24576 });

/** Bytes that name their key and position, so a read shows exactly which block and which part it got. */
function blockBytes(key: string, size: number): Buffer {
  const b = Buffer.alloc(size);
  const tag = Buffer.from(`${key}|`);
  for (let i = 0; i < size; i++) b[i] = (tag[i % tag.length] ?? 0) ^ ((i >>> 12) & 0xff);
  return b;
}

function sourceOf(bytes: Buffer, chunk = MiB): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      for (let off = 0; off < bytes.length; off += chunk) yield bytes.subarray(off, Math.min(off + chunk, bytes.length));
    },
  };
}

async function readPublished(pool: PoolAccess, key: string, size: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  const r = await pool.readPublished(key, size, (c) => {
    parts.push(Buffer.from(c));
  });
  const out = Buffer.concat(parts);
  assert.equal(r.bytes, out.length);
  return out;
}

/**
 * The two ways a pool backend makes its calls, each test run both ways: Node's fs (buffered I/O), and
 * the native jobs (direct I/O: lookups, links, fan-out directories and one-chunk blocks as C jobs).
 */
interface Calls {
  readonly name: string;
  readonly skip: string | false;
  /** Options of a pool backend on `dir` making its calls this way. */
  readonly options: (dir: string) => { dir: string; ioMode: 'buffered' | 'direct'; blockFiles?: BlockFiles };
}
const nativeJobs = BlockFiles.load(2);
if (typeof nativeJobs !== 'string') nativeJobs.close();
const FS_CALLS: Calls = { name: 'fs', skip: false, options: (dir) => ({ dir, ioMode: 'buffered' }) };
const CALLS: readonly Calls[] = [
  FS_CALLS,
  {
    name: 'native jobs',
    skip: typeof nativeJobs === 'string' ? `the native helper is not available: ${nativeJobs}` : false,
    options: (dir) => {
      const blockFiles = BlockFiles.load(2);
      if (typeof blockFiles === 'string') throw new Error(blockFiles);
      return { dir, ioMode: 'direct', blockFiles };
    },
  },
];

/** A pool backend on `dir` making its calls as `calls` says (direct I/O must hold: the temp dir takes O_DIRECT). */
async function openWith(
  calls: Calls,
  dir: string,
  keep = false,
  link?: (existing: string, name: string) => Promise<void>,
): Promise<FileBackend> {
  const b = await FileBackend.create({ ...calls.options(dir), pool: { namespace: NS, keep, ...(link !== undefined ? { link } : {}) } });
  assert.equal(b.effectiveIoMode, calls.name === 'fs' ? 'buffered' : 'direct', 'the temp dir must take O_DIRECT for the native jobs');
  return b;
}

function poolOf(b: FileBackend): PoolAccess {
  assert.ok(b.pool !== undefined, 'a pool backend has PoolAccess');
  return b.pool;
}

for (const calls of CALLS)
  test(
    `${calls.name}: one backend reads what another published; the names are the same for both; a second publish is not rewritten`,
    { skip: calls.skip },
    async () => {
      await withTempDir(async (dir) => {
        const a = await openWith(calls, dir);
        const b = await openWith(calls, dir);
        try {
          const bytes = blockBytes('k1', 3 * MiB + 5);
          await a.write('k1', sourceOf(bytes));
          assert.equal(a.pathFor('k1'), b.pathFor('k1'));
          assert.equal(a.pathFor('k1'), join(dir, poolBlockName(NS, 'k1')));
          assert.match(a.pathFor('k1'), /kvpool-[0-9a-f]{16}\/[0-9a-f]{3}\/[0-9a-f]{2}\/[0-9a-f]{40}\.bin$/);
          const probe = await poolOf(b).lookup('k1');
          assert.equal(probe.found, true);
          assert.equal(probe.size, bytes.length);
          assert.ok(probe.publishedAtMs >= poolOf(b).openedAtMs - 1000, 'published after b opened the pool (same run)');
          assert.ok((await readPublished(poolOf(b), 'k1', bytes.length)).equals(bytes));
          // b publishing the same block: it is a's, kept as a wrote it.
          const other = blockBytes('other', bytes.length);
          await assert.rejects(
            b.write('k1', sourceOf(other)),
            (e: unknown) => e instanceof AlreadyPublishedError && e.bytes === bytes.length,
          );
          assert.ok((await readFile(a.pathFor('k1'))).equals(bytes));
          assert.deepEqual([...b.keys()], []);
          assert.deepEqual(readdirSync(dirname(a.pathFor('k1'))), [a.pathFor('k1').split('/').pop()], 'no temporary file is left');
          // Not there: a miss, not an error.
          assert.equal((await poolOf(b).lookup('nothing')).found, false);
          await assert.rejects(poolOf(b).readPublished('nothing', 10), EntryNotFoundError);
          // Its publisher evicts it: gone for the reader too.
          await a.delete('k1');
          assert.equal((await poolOf(b).lookup('k1')).found, false);
          await assert.rejects(poolOf(b).readPublished('k1', bytes.length), EntryNotFoundError);
          // b's delete of a block it does not own touches nothing.
          await a.write('k2', sourceOf(blockBytes('k2', 100)));
          await b.delete('k2');
          assert.equal((await poolOf(b).lookup('k2')).found, true);
        } finally {
          await a.close();
          await b.close();
        }
        assert.equal(existsSync(join(dir, poolBlockName(NS, 'k2'))), false, 'the publisher removes what it published when it closes');
      });
    },
  );

for (const calls of CALLS)
  test(
    `${calls.name}: --keep-pool leaves what was published; a later backend finds it published before it opened (an earlier run)`,
    { skip: calls.skip },
    async () => {
      await withTempDir(async (dir) => {
        const a = await openWith(calls, dir, true);
        await a.write('warm', sourceOf(blockBytes('warm', 4096)));
        await a.close();
        await new Promise((r) => setTimeout(r, 20)); // the next open's clock is later than the block's mtime
        const b = await openWith(calls, dir);
        try {
          const probe = await poolOf(b).lookup('warm');
          assert.equal(probe.found, true);
          assert.ok(probe.publishedAtMs < poolOf(b).openedAtMs, 'published before this backend opened the pool');
          const contents = await scanPool(join(dir, NS), b.runId);
          assert.deepEqual(
            { blocks: contents.blocks, bytes: contents.blockBytes, temps: contents.tempPaths.length },
            { blocks: 1, bytes: 4096, temps: 0 },
          );
        } finally {
          await b.close();
        }
      });
    },
  );

test('names are stable across versions: a pool kept by an earlier build is found under the same names', () => {
  // Pinned: a change here strands every pool kept with --keep-pool (bump POOL_LAYOUT instead).
  assert.equal(NS, 'kvpool-3c08ca592020b797');
  assert.equal(poolBlockName(NS, 'k1'), 'kvpool-3c08ca592020b797/774/23/77423441d246224de31da0dfb4261f04bb327110.bin');
});

test('fan-out directories made are kept as bits: each level-2 directory its own number, its level 1 shared by its 256', () => {
  const made = new FanoutDirsMade();
  const leafOf = (key: string): number => FanoutDirsMade.leafOf(dirname(join('/pool', poolBlockName(NS, key))));
  assert.equal(FanoutDirsMade.leafOf('/x/kvpool-1/000/00'), 0);
  assert.equal(FanoutDirsMade.leafOf('/x/kvpool-1/fff/ff'), 2 ** 20 - 1);
  assert.equal(FanoutDirsMade.leafOf('/x/kvpool-1/abc/de'), 0xabcde);
  for (const bad of ['/x/kvpool-1/abc', '/x/kvpool-1/abc/d', '/x/kvpool-1/abg/de', '/x/kvpool-1/abc/de/'])
    assert.throws(() => FanoutDirsMade.leafOf(bad), RangeError, bad);
  const seen = new Map<number, string>();
  for (let i = 0; i < 2000; i++) {
    const key = `k${i}`;
    const leaf = leafOf(key);
    const dir = dirname(poolBlockName(NS, key));
    const before = seen.get(leaf);
    assert.ok(before === undefined || before === dir, 'one number, one directory');
    seen.set(leaf, dir);
  }
  made.addLeaf(0xabcde);
  assert.deepEqual(
    [made.hasLeaf(0xabcde), made.hasLeaf(0xabcdf), made.hasLeaf(0xabcdd), made.hasUpper(0xabcde)],
    [true, false, false, false],
  );
  made.addUpper(0xabc00);
  assert.deepEqual([made.hasUpper(0xabcff), made.hasUpper(0xabd00), made.hasUpper(0xabbff)], [true, false, false]);
});

test('another namespace (model, block size, bytes per token) never sees the blocks', async () => {
  await withTempDir(async (dir) => {
    const a = await openWith(FS_CALLS, dir);
    const other = await FileBackend.create({
      dir,
      ioMode: 'buffered',
      pool: { namespace: poolNamespace({ model: 'tiny-1b', blockTokens: 32, bytesPerToken: 24576 }), keep: false },
    });
    try {
      await a.write('same-key', sourceOf(blockBytes('x', 512)));
      assert.equal((await poolOf(other).lookup('same-key')).found, false);
      assert.notEqual(
        poolNamespace({ model: 'a', blockTokens: 16, bytesPerToken: 2 }),
        poolNamespace({ model: 'a', blockTokens: 16, bytesPerToken: 4 }),
      );
      assert.notEqual(
        poolNamespace({ model: 'a', blockTokens: 16, bytesPerToken: 2 }),
        poolNamespace({ model: 'b', blockTokens: 16, bytesPerToken: 2 }),
      );
    } finally {
      await a.close();
      await other.close();
    }
  });
});

for (const calls of CALLS)
  test(`${calls.name}: readers racing a writer see a whole block or none, never part of one`, { skip: calls.skip }, async () => {
    await withTempDir(async (dir) => {
      const writer = await openWith(calls, dir);
      const reader = await openWith(calls, dir);
      try {
        const size = 6 * MiB + 333;
        const keys = Array.from({ length: 6 }, (_, i) => `race${i}`);
        let writing = true;
        const outcomes = { whole: 0, missing: 0 };
        const readers = Array.from({ length: 4 }, async () => {
          while (writing) {
            for (const key of keys) {
              const probe = await poolOf(reader).lookup(key);
              if (!probe.found) {
                outcomes.missing++;
                continue;
              }
              assert.equal(probe.size, size, 'a published block has its whole size');
              const got = await readPublished(poolOf(reader), key, size);
              assert.ok(got.equals(blockBytes(key, size)), `${key}: the whole block, byte for byte`);
              outcomes.whole++;
            }
          }
        });
        // Chunks handed over slowly: each block is a temporary file for a while before it is linked.
        for (const key of keys) {
          const bytes = blockBytes(key, size);
          await writer.write(key, {
            size,
            async *chunks() {
              for (let off = 0; off < size; off += MiB) {
                await new Promise((r) => setTimeout(r, 2));
                yield bytes.subarray(off, Math.min(off + MiB, size));
              }
            },
          });
        }
        writing = false;
        await Promise.all(readers);
        assert.ok(
          outcomes.missing > 0 && outcomes.whole > 0,
          `readers saw blocks both before and after they were published (${JSON.stringify(outcomes)})`,
        );
      } finally {
        await writer.close();
        await reader.close();
      }
    });
  });

test('a writer killed with SIGKILL mid-block leaves a temporary file no reader sees; the scan reports it and removes it on request', async () => {
  await withTempDir(async (dir) => {
    const fileJs = fileURLToPath(new URL('../../src/tiers/file.js', import.meta.url));
    // A child publishing a 64 MiB block whose source stops after the first 8 MiB, then waits to be killed.
    const script = `
      const { FileBackend } = await import(${JSON.stringify(fileJs)});
      const b = await FileBackend.create({ dir: ${JSON.stringify(dir)}, ioMode: 'buffered', pool: { namespace: ${JSON.stringify(NS)}, keep: false } });
      const chunk = Buffer.alloc(1 << 20, 7);
      b.write('killed', { size: 64 << 20, async *chunks() {
        for (let i = 0; i < 8; i++) yield chunk;
        process.stdout.write('midway\\n');
        await new Promise(() => {});
      } });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('midway')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the writer exited early (${code})`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    const reader = await openWith(FS_CALLS, dir);
    try {
      assert.equal((await poolOf(reader).lookup('killed')).found, false, 'nothing was published');
      await assert.rejects(poolOf(reader).readPublished('killed', 64 << 20), EntryNotFoundError);
      const leaf = dirname(reader.pathFor('killed'));
      const temps = readdirSync(leaf).filter((n) => POOL_TEMP_FILE.test(n));
      assert.equal(temps.length, 1, 'the killed writer left its temporary file');
      const contents = await scanPool(join(dir, NS), reader.runId);
      assert.deepEqual(
        { blocks: contents.blocks, temps: contents.tempPaths.length, bytes: contents.tempBytes },
        { blocks: 0, temps: 1, bytes: 8 << 20 },
      );
      assert.equal(await removePoolTemps(contents.tempPaths), 1);
      assert.deepEqual(readdirSync(leaf), []);
      // And the block can still be published whole afterwards.
      await reader.write('killed', sourceOf(blockBytes('killed', MiB)));
      assert.equal((await poolOf(reader).lookup('killed')).size, MiB);
    } finally {
      await reader.close();
    }
  });
});

for (const calls of CALLS)
  test(
    `${calls.name}: a file system without hard links: the publish looks, then renames; a block there already is not replaced`,
    { skip: calls.skip },
    async () => {
      await withTempDir(async (dir) => {
        const noLinks = async (): Promise<void> => {
          throw Object.assign(new Error('link: operation not permitted'), { code: 'EPERM' });
        };
        const a = await openWith(calls, dir, false, noLinks);
        const b = await openWith(calls, dir, false, noLinks);
        try {
          const bytes = blockBytes('k', 5000);
          await a.write('k', sourceOf(bytes));
          assert.ok((await readFile(a.pathFor('k'))).equals(bytes));
          await assert.rejects(b.write('k', sourceOf(blockBytes('other', 5000))), AlreadyPublishedError);
          assert.ok((await readFile(a.pathFor('k'))).equals(bytes), "the first writer's block stays");
          assert.deepEqual(readdirSync(dirname(a.pathFor('k'))).length, 1, 'no temporary file left');
        } finally {
          await a.close();
          await b.close();
        }
      });
    },
  );

for (const calls of CALLS)
  test(
    `${calls.name}: planted in the pool: a FIFO or a link at a block name is no block (never opened, never waited on); a linked fan-out directory is never written through`,
    { skip: calls.skip },
    async () => {
      await withTempDir(async (dir) => {
        const b = await openWith(calls, dir);
        const outside = join(dir, 'outside');
        mkdirSync(outside);
        try {
          const fifoPath = b.pathFor('fifo');
          mkdirSync(dirname(fifoPath), { recursive: true });
          execFileSync('mkfifo', [fifoPath]);
          assert.equal((await poolOf(b).lookup('fifo')).found, false);
          await assert.rejects(poolOf(b).readPublished('fifo', 4096), EntryNotFoundError);
          // Writing it: the name is taken (not by a block of ours): counted as published by another, nothing replaced.
          await assert.rejects(b.write('fifo', sourceOf(blockBytes('fifo', 100))), AlreadyPublishedError);

          writeFileSync(join(outside, 'target.bin'), 'secret');
          const linkPath = b.pathFor('link');
          mkdirSync(dirname(linkPath), { recursive: true });
          symlinkSync(join(outside, 'target.bin'), linkPath);
          assert.equal((await poolOf(b).lookup('link')).found, false);
          await assert.rejects(poolOf(b).readPublished('link', 6), EntryNotFoundError);

          // A fan-out directory replaced by a link to elsewhere: the write fails and nothing lands there.
          const victim = b.pathFor('redirected');
          const level2 = dirname(victim);
          mkdirSync(dirname(level2), { recursive: true });
          if (existsSync(level2)) await unlink(level2).catch(() => undefined);
          symlinkSync(outside, level2);
          await assert.rejects(b.write('redirected', sourceOf(blockBytes('r', 100))), /not a directory/);
          assert.deepEqual(readdirSync(outside).sort(), ['target.bin']);

          // A first level replaced by a link: refused before anything is made below it (not in the link's target either).
          let key = 'upper';
          while (dirname(dirname(b.pathFor(key))) === dirname(level2)) key += '+';
          const level1 = dirname(dirname(b.pathFor(key)));
          symlinkSync(outside, level1);
          await assert.rejects(b.write(key, sourceOf(blockBytes('u', 100))), /not a directory/);
          assert.deepEqual(readdirSync(outside).sort(), ['target.bin']);
        } finally {
          await b.close();
        }
      });
    },
  );

test("a killed run's metadata calibration files in a pool are counted as stale temporary files, never as blocks, and removed on request", () =>
  withTempDir(async (dir) => {
    const block = join(dir, poolBlockName(NS, 'k1'));
    mkdirSync(dirname(block), { recursive: true });
    writeFileSync(block, new Uint8Array(4096));
    const made = `${join(dir, poolBlockName(NS, 'kvc-cal-0000beef-0\n3'))}.kvc-cal-0000beef-0-3`; // as the calibration names them
    const renaming = `${join(dir, poolBlockName(NS, 'kvc-cal-0000beef-0\n4'))}.kvc-cal-0000beef-0-4.tmp`; // killed before its rename
    for (const f of [made, renaming]) {
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(f, new Uint8Array(8192));
    }
    const contents = await scanPool(join(dir, NS), '0123abcd');
    assert.deepEqual(
      { blocks: contents.blocks, temps: [...contents.tempPaths].sort(), bytes: contents.tempBytes },
      { blocks: 1, temps: [made, renaming].sort(), bytes: 2 * 8192 },
    );
    assert.equal(await removePoolTemps(contents.tempPaths), 2);
    assert.equal(existsSync(block), true);
  }));
