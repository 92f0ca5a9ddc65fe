// The slab backend (--kv-layout slab) on a real directory: the pool laid out whole and not sparse,
// entries round-tripping through slots, no file created, renamed or removed per entry, oversized
// entries refused, a foreign file never taken over, a full file system during the lay-out, and the
// pool gone at close.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { payloadBytes } from '../../src/data/payload.js';
import { EntryNotFoundError, IoAbortedError } from '../../src/tiers/backend.js';
import { SlabBackend, slabFileName } from '../../src/tiers/slab.js';
import { BlockFiles } from '../../src/tiers/block-file.js';
import { StorageSetupError } from '../../src/tiers/storage-kind.js';
import { removeEntryFilesSync } from '../../src/engine/entry-cleanup.js';
import { findStaleEntries } from '../../src/tiers/file-names.js';
import { monotonicClock } from '../../src/util/clock.js';
import { MiB } from '../../src/util/units.js';
import { withTempDir } from '../util/temp-dir.js';

const RUN = '0badcafe';
const SLOT = 256 * 1024;

function sourceOf(bytes: Uint8Array, chunk = 64 * 1024): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      for (let off = 0; off < bytes.length; off += chunk) yield bytes.subarray(off, Math.min(off + chunk, bytes.length));
    },
  };
}

async function readAll(b: SlabBackend, key: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  const r = await b.read(key, (c) => void parts.push(Buffer.from(c)));
  assert.equal(r.bytes, b.sizeOf(key));
  return Buffer.concat(parts);
}

/** Names, inodes, sizes and allocated blocks of every file in `dir`. */
async function listing(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  return Promise.all(
    names.map(async (n) => {
      const st = await stat(join(dir, n));
      return `${n} ino=${st.ino} size=${st.size} blocks=${st.blocks}`;
    }),
  );
}

/** Native block-file jobs for the tests that run both ways (tiers/block-file.ts), or why there are none. */
const probe = BlockFiles.load(1);
const NATIVE_SKIP = typeof probe === 'string' ? probe : false;
const nativeJobs = { writeAt: 0, readAt: 0 };
if (typeof probe !== 'string') probe.close();

async function slabIn(dir: string, limit: number, fileBytes = 0, calls: 'fs' | 'native' = 'fs'): Promise<SlabBackend> {
  const real = calls === 'native' ? BlockFiles.load(2) : undefined;
  if (typeof real === 'string') throw new Error(real);
  // The backend sees a BlockFiles; this one counts the jobs it is given.
  const jobs =
    real === undefined
      ? undefined
      : ({
          writeAt: (...a: Parameters<BlockFiles['writeAt']>) => (nativeJobs.writeAt++, real.writeAt(...a)),
          readAt: (...a: Parameters<BlockFiles['readAt']>) => (nativeJobs.readAt++, real.readAt(...a)),
          close: () => real.close(),
        } as unknown as BlockFiles);
  const b = await SlabBackend.create({
    dir,
    runId: RUN,
    slotBytes: SLOT,
    fileBytes,
    chunkBytes: 64 * 1024, // a whole slot is 4 chunks: reads of 2 slots per readv; entries up to 64 KiB are one native job
    stagingSlots: 8,
    ...(jobs !== undefined ? { blockFiles: jobs } : {}),
  });
  assert.equal(b.blockFiles, jobs);
  assert.equal(b.plan(limit), Math.floor(limit / SLOT) * SLOT);
  return b;
}

for (const calls of ['fs', 'native'] as const)
  test(
    `${calls} calls: the lay-out writes every pool file whole (not sparse), then entries round-trip through slots without a file created or removed`,
    { skip: calls === 'native' && NATIVE_SKIP },
    () =>
      withTempDir(async (root) => {
        const dir = join(root, 'cache');
        await mkdir(dir);
        const b = await slabIn(dir, 10 * SLOT + 1000, 4 * SLOT, calls); // 10 slots: files of 4, 4 and 2 slots
        try {
          await b.layOut();
          const names = (await readdir(dir)).filter((n) => n.startsWith('kvc-')).sort();
          assert.deepEqual(
            names,
            [0, 1, 2].map((n) => slabFileName(RUN, n)),
          );
          const sizes = await Promise.all(names.map((n) => stat(join(dir, n))));
          assert.deepEqual(
            sizes.map((s) => s.size),
            [4 * SLOT, 4 * SLOT, 2 * SLOT],
          );
          for (const s of sizes) assert.ok(s.blocks * 512 >= s.size, 'laid out, not sparse');
          const before = await listing(dir);

          // Entries of a whole slot, an unaligned size and one byte, written, read, rewritten, deleted, 50 times over.
          const sizesOf = [SLOT, 5000, 1, 3 * 4096 + 17];
          for (let round = 0; round < 50; round++) {
            for (const [i, size] of sizesOf.entries()) {
              const key = `k${round}-${i}`;
              const bytes = payloadBytes(7, key, size);
              await b.write(key, sourceOf(bytes));
              assert.deepEqual(await readAll(b, key), Buffer.from(bytes));
            }
            for (const [i] of sizesOf.entries()) await b.delete(`k${round}-${i}`);
          }
          // Entries of one 64 KiB chunk (3 of the 4 sizes) are one native job each way; a whole slot is not.
          if (calls === 'native') assert.deepEqual(nativeJobs, { writeAt: 150, readAt: 150 });
          const r = b.report();
          assert.equal(r.fileCreates, 3, 'every create was part of the lay-out: 0 per entry');
          assert.equal(r.fileUnlinks, 0);
          assert.equal(r.slotsFreed, 200);
          assert.equal(r.slotsUsedPeak, 4);
          assert.equal(r.layOutBytes, 10 * SLOT);
          assert.deepEqual(await listing(dir), before, 'same files, inodes, sizes and blocks after 200 entries');
        } finally {
          await b.close();
        }
        assert.deepEqual(await readdir(dir), [], 'the pool is removed at close');
        assert.equal(b.report().fileUnlinks, 3);
      }),
  );

for (const calls of ['fs', 'native'] as const)
  test(
    `${calls} calls: a missing key is not found; a rewrite keeps its slot; a delete frees it for the next key`,
    { skip: calls === 'native' && NATIVE_SKIP },
    () =>
      withTempDir(async (dir) => {
        const b = await slabIn(dir, 2 * SLOT, 0, calls);
        try {
          await b.layOut();
          await assert.rejects(b.read('nope'), EntryNotFoundError);
          await b.delete('nope'); // not an error
          await b.write('a', sourceOf(payloadBytes(1, 'a', 1000)));
          await b.write('b', sourceOf(payloadBytes(1, 'b', 2000)));
          await assert.rejects(b.write('c', sourceOf(payloadBytes(1, 'c', 10))), /no free slot/);
          await b.write('a', sourceOf(payloadBytes(2, 'a', 3000))); // rewrite in place
          assert.deepEqual(await readAll(b, 'a'), Buffer.from(payloadBytes(2, 'a', 3000)));
          await b.delete('b');
          await b.write('c', sourceOf(payloadBytes(1, 'c', 10)));
          assert.deepEqual([...b.keys()].sort(), ['a', 'c']);
        } finally {
          await b.close();
        }
      }),
  );

test(
  'native calls: a write still waiting for its bytes when close() begins never starts its job (the pool file descriptor is being closed)',
  { skip: NATIVE_SKIP },
  () =>
    withTempDir(async (dir) => {
      const b = await slabIn(dir, 2 * SLOT, 0, 'native');
      await b.layOut();
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      const bytes = payloadBytes(3, 'late', 5000);
      const late: ChunkSource = {
        size: bytes.length,
        async *chunks() {
          await held; // the payload is slow: close() starts meanwhile
          yield bytes;
        },
      };
      const jobsBefore = nativeJobs.writeAt;
      const writing = b.write('late', late);
      const closing = b.close();
      release();
      await assert.rejects(writing, IoAbortedError);
      await closing;
      assert.equal(nativeJobs.writeAt, jobsBefore, 'no job was submitted on a closed descriptor');
      assert.deepEqual(await readdir(dir), [], 'the pool is removed at close');
    }),
);

test('an entry larger than a slot takes no room the cache could give (refused), and the largest is remembered', () =>
  withTempDir(async (dir) => {
    const b = await slabIn(dir, 4 * SLOT);
    try {
      assert.equal(b.allocatedBytes(1), SLOT);
      assert.equal(b.allocatedBytes(SLOT), SLOT);
      assert.equal(b.report().largestRefusedBytes, null);
      assert.equal(b.allocatedBytes(SLOT + 1), Infinity);
      assert.equal(b.allocatedBytes(3 * MiB), Infinity);
      assert.equal(b.allocatedBytes(SLOT + 5), Infinity);
      assert.equal(b.report().largestRefusedBytes, 3 * MiB);
    } finally {
      await b.close();
    }
  }));

test('a pool file that already exists is never taken over: the lay-out stops, removes what it made, leaves the file as it was', () =>
  withTempDir(async (dir) => {
    const foreign = join(dir, slabFileName(RUN, 1));
    await writeFile(foreign, 'not yours');
    const b = await slabIn(dir, 8 * SLOT, 4 * SLOT);
    try {
      await assert.rejects(
        b.layOut(),
        (e: unknown) =>
          e instanceof StorageSetupError &&
          /refusing to use '.*kvc-0badcafe-slab-0001\.bin' as a pool file: it already exists/.test(e.message),
      );
      assert.deepEqual(await readdir(dir), [slabFileName(RUN, 1)]);
      assert.equal(await readFile(foreign, 'utf8'), 'not yours');
    } finally {
      await b.close();
    }
    assert.equal(await readFile(foreign, 'utf8'), 'not yours', 'close leaves it too');
  }));

test("pool files are this run's entry files to a force-quit, and another run's leftovers to the next run", () =>
  withTempDir(async (dir) => {
    const b = await slabIn(dir, 4 * SLOT);
    try {
      await b.layOut();
      const pool = (await readdir(dir)).filter((n) => n.startsWith('kvc-')).sort();
      assert.equal(pool.length, 4);
      const stale = await findStaleEntries(dir, 'feedf00d'); // a later run with another id
      assert.deepEqual(stale.paths.map((p) => p.slice(dir.length + 1)).sort(), pool);
      assert.equal(stale.bytes, 4 * SLOT);
      // A force-quit removes them synchronously, by this run's id.
      const c = removeEntryFilesSync({ dir, runId: RUN, ownsDir: false }, monotonicClock);
      assert.equal(c.removed, 4);
      assert.deepEqual(c.left, []);
    } finally {
      await b.close(); // the files are gone already: nothing to fail on
    }
    assert.deepEqual(await readdir(dir), []);
  }));

const isRoot = process.getuid?.() === 0;

test(
  'a file system that fills up during the lay-out: a setup error naming the flag, nothing left behind',
  { skip: !isRoot && 'needs root (mounts a 1 MiB tmpfs)' },
  () =>
    withTempDir(async (dir) => {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
      try {
        const b = await slabIn(dir, 16 * SLOT); // 4 MiB of pool on 1 MiB
        try {
          await assert.rejects(
            b.layOut(),
            (e: unknown) =>
              e instanceof StorageSetupError &&
              /the pool \(0\.00 GiB in 4 files\) does not fit in .*: the file system was full \(ENOSPC\) .*--storage-capacity-gb/.test(
                e.message,
              ),
          );
          assert.deepEqual(await readdir(dir), []);
        } finally {
          await b.close();
        }
      } finally {
        spawnSync('umount', [dir]);
      }
    }),
);
