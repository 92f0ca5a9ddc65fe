// File tier: round trips in both I/O modes, the staging and zero-copy write paths, timing invariants,
// and that it never touches files it did not create (docs/reference-compat.md#rc-4, #rc-17).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import { DirectSlabs } from '../../src/data/aligned.js';
import { SlotPool } from '../../src/data/slots.js';
import { payloadBytes } from '../../src/data/payload.js';
import { slotPayloadSource } from '../../src/data/inline-payload.js';
import { EntryNotFoundError } from '../../src/tiers/backend.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { FileBackend, ForeignFileError } from '../../src/tiers/file.js';
import type { FileBackendOptions } from '../../src/tiers/file.js';
import {
  RUN_ID,
  calibrationFileName,
  calibrationScratchName,
  fileNameForKey,
  findStaleEntries,
  newRunId,
  removeStaleEntries,
} from '../../src/tiers/file-names.js';
import { fileAllocatedBytes } from '../../src/tiers/fs-info.js';
import type { IoMode } from '../../src/tiers/io-mode.js';
import { MiB } from '../../src/util/units.js';
import { BlockFiles } from '../../src/tiers/block-file.js';

const SEED = 7;
const SIZES = [0, 1, 4095, 4096, 4097, 10 * MiB + 123];

/** Chunks cut from an ordinary (unaligned) Buffer, at an odd chunk size. */
function plainSource(bytes: Uint8Array, chunk = MiB + 7): ChunkSource {
  const buf = Buffer.from(bytes); // pooled or heap memory: never O_DIRECT-aligned
  return {
    size: buf.length,
    async *chunks() {
      for (let off = 0; off < buf.length; off += chunk) {
        yield buf.subarray(off, Math.min(off + chunk, buf.length));
      }
    },
  };
}

/** Byte equality without dumping megabytes into the failure message. */
function assertBytes(actual: Uint8Array, expected: Uint8Array, what = ''): void {
  assert.equal(actual.length, expected.length, `length ${what}`);
  const same = Buffer.from(actual.buffer, actual.byteOffset, actual.length).equals(expected);
  assert.ok(same, `bytes differ ${what}`);
}

async function readAll(backend: FileBackend, key: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const { bytes } = await backend.read(key, (c) => {
    parts.push(c.slice());
  });
  const out = Buffer.concat(parts);
  assert.equal(bytes, out.length);
  return out;
}

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'kvfile-test-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** How the direct-mode tests make their calls: Node's fs, and the native jobs for one-chunk entries (tiers/block-file.ts). */
type Calls = 'fs' | 'native';
const nativeJobs = BlockFiles.load(4);
const NATIVE_SKIP = typeof nativeJobs === 'string' ? nativeJobs : false;
if (typeof nativeJobs !== 'string') nativeJobs.close(); // only a probe: each backend gets its own
let calls: Calls = 'fs';

/** A backend closed (files and own temp dir removed) when the test ends, even if it fails; with the native jobs when `calls` says so. */
async function backendFor(t: TestContext, options: FileBackendOptions = {}): Promise<FileBackend> {
  const jobs = calls === 'native' ? BlockFiles.load(4) : undefined;
  if (typeof jobs === 'string') throw new Error(jobs);
  const backend = await FileBackend.create({ ...options, ...(jobs !== undefined ? { blockFiles: jobs } : {}) });
  if (jobs !== undefined) assert.equal(backend.blockFiles, jobs);
  t.after(() => backend.close());
  return backend;
}

async function freshDir(name: string): Promise<string> {
  return mkdtemp(join(root, `${name}-`));
}

const MODES: ReadonlyArray<[IoMode, Calls]> = [
  ['direct', 'fs'],
  ['direct', 'native'],
  ['buffered', 'fs'],
];
for (const [ioMode, modeCalls] of MODES) {
  describe(`file tier, ${ioMode} mode, ${modeCalls} calls`, { skip: modeCalls === 'native' && NATIVE_SKIP }, () => {
    before(() => (calls = modeCalls));
    after(() => (calls = 'fs'));
    test('round trip, exact file size, timing split, delete removes the file', async (t) => {
      const dir = await freshDir(ioMode);
      const backend = await backendFor(t, { dir, ioMode, chunkBytes: 4 * MiB, stagingSlots: 2 });
      assert.equal(backend.effectiveIoMode, ioMode, `this machine's ${tmpdir()} should accept O_DIRECT`);
      for (const size of SIZES) {
        const key = `entry_${size}`;
        const data = payloadBytes(SEED, key, size);
        const t = await backend.write(key, plainSource(data));
        assert.ok(t.totalMs > 0 && t.hostMs >= 0 && t.deviceMs >= 0, JSON.stringify(t));
        assert.ok(Math.abs(t.totalMs - (t.hostMs + t.deviceMs)) < 1e-9);
        const file = backend.pathFor(key);
        assert.equal(file, join(dir, `kvc-${backend.runId}-${key}.bin`));
        assert.equal(statSync(file).size, size);
        assertBytes(await readAll(backend, key), data, `size ${size}`);
        const r = await backend.read(key);
        assert.equal(r.bytes, size);
        assert.ok(r.timing.totalMs > 0 && r.timing.deviceMs >= 0 && r.timing.hostMs >= 0);
        await backend.delete(key);
        assert.equal(existsSync(file), false);
        await assert.rejects(backend.read(key), EntryNotFoundError);
      }
      await backend.close();
      assert.deepEqual(readdirSync(dir), [], 'no probe or entry files left behind');
    });

    test('a read keeps the next chunk in flight while the sink holds one: chunks in order, bytes exact, device time once', async (t) => {
      const dir = await freshDir(`${ioMode}-ahead`);
      const chunk = 64 * 1024;
      const backend = await backendFor(t, { dir, ioMode, chunkBytes: chunk, stagingSlots: 4 });
      const size = 10 * chunk + 12_345;
      const data = payloadBytes(SEED, 'ahead', size);
      await backend.write('ahead', plainSource(data));
      const parts: Uint8Array[] = [];
      const slowSink = async (c: Uint8Array): Promise<void> => {
        parts.push(c.slice());
        await new Promise((r) => setTimeout(r, 5)); // the next chunk's read runs meanwhile
      };
      const started = performance.now();
      const r = await backend.read('ahead', slowSink);
      const wallMs = performance.now() - started;
      assert.deepEqual(
        parts.map((p) => p.length),
        [...Array.from({ length: 10 }, () => chunk), 12_345],
      );
      assertBytes(Buffer.concat(parts), data);
      assert.equal(r.bytes, size);
      assert.ok(r.timing.deviceMs <= wallMs, `overlapping reads counted once: device ${r.timing.deviceMs} ms ≤ wall ${wallMs} ms`);
      await backend.close();
    });

    test('aligned slot chunks round-trip and overwrite a smaller entry', async (t) => {
      const dir = await freshDir(`${ioMode}-slots`);
      const directSlabs = new DirectSlabs();
      const backend = await backendFor(t, { dir, ioMode, chunkBytes: MiB, directSlabs });
      const pool = new SlotPool(1, 256 * 1024, dir, directSlabs);
      const key = 'conv_user_0012_turn_3';
      const size = 3 * MiB + 4097;
      await backend.write(key, slotPayloadSource(pool, SEED, key, 5));
      await backend.write(key, slotPayloadSource(pool, SEED, key, size));
      assert.equal(statSync(backend.pathFor(key)).size, size);
      assertBytes(await readAll(backend, key), payloadBytes(SEED, key, size));
      if (ioMode === 'direct') {
        assert.ok(backend.counters.zeroCopyBytes >= 3 * MiB, JSON.stringify(backend.counters));
        assert.equal(backend.counters.stagedBytes, 0, 'a padded aligned tail needs no staging');
      } else {
        assert.deepEqual(backend.counters, { zeroCopyBytes: 0, stagedBytes: 0 });
      }
      await backend.close();
    });

    test('aligned slots the backend was not given are staged like any chunk', async (t) => {
      const dir = await freshDir(`${ioMode}-foreign-slots`);
      const backend = await backendFor(t, { dir, ioMode, chunkBytes: MiB, directSlabs: new DirectSlabs() });
      const pool = new SlotPool(1, 256 * 1024, dir, new DirectSlabs());
      const size = MiB + 100;
      await backend.write('k', slotPayloadSource(pool, SEED, 'k', size));
      assertBytes(await readAll(backend, 'k'), payloadBytes(SEED, 'k', size));
      const expected = ioMode === 'direct' ? { zeroCopyBytes: 0, stagedBytes: size } : { zeroCopyBytes: 0, stagedBytes: 0 };
      assert.deepEqual(backend.counters, expected);
      await backend.close();
    });
  });
}

for (const modeCalls of ['fs', 'native'] as Calls[])
  describe(`file tier, direct write paths and safety, ${modeCalls} calls`, { skip: modeCalls === 'native' && NATIVE_SKIP }, () => {
    before(() => (calls = modeCalls));
    after(() => (calls = 'fs'));
    test('plain unaligned Buffer chunks go through staging', async (t) => {
      const dir = await freshDir('staging');
      const backend = await backendFor(t, { dir, chunkBytes: 64 * 1024, stagingSlots: 1 });
      const size = 300 * 1024 + 5;
      const data = payloadBytes(SEED, 'staged', size);
      await backend.write('staged', plainSource(data, 10_000));
      assert.deepEqual(backend.counters, { zeroCopyBytes: 0, stagedBytes: size });
      const lengths: number[] = [];
      await backend.read('staged', (c) => {
        lengths.push(c.length);
      });
      assert.ok(lengths.every((n) => n <= 64 * 1024));
      assert.equal(
        lengths.reduce((a, b) => a + b, 0),
        size,
      );
      assertBytes(await readAll(backend, 'staged'), data);
      await backend.close();
    });

    test("a one-chunk entry is written from the source's chunk before its memory is reused (the next chunk asked for)", async (t) => {
      const dir = await freshDir(`${modeCalls}-reused-slot`);
      const directSlabs = new DirectSlabs();
      const backend = await backendFor(t, { dir, ioMode: 'direct', chunkBytes: MiB, directSlabs });
      const pool = new SlotPool(1, 64 * 1024, dir, directSlabs);
      // As a payload slot: handed to the next entry, which rewrites it, once this one asks for more.
      const reusedSlot = (key: string, size: number): ChunkSource => ({
        size,
        async *chunks() {
          const slot = await pool.acquire();
          try {
            slot.set(payloadBytes(SEED, key, size));
            yield slot.subarray(0, size);
          } finally {
            slot.fill(0xee);
            pool.release(slot);
          }
        },
      });
      const sizes = [16 * 1024, 16 * 1024 + 100, 40_000];
      await Promise.all(sizes.map((size, i) => backend.write(`block_${i}`, reusedSlot(`block_${i}`, size))));
      for (const [i, size] of sizes.entries()) assertBytes(await readAll(backend, `block_${i}`), payloadBytes(SEED, `block_${i}`, size));
      assert.ok(backend.counters.zeroCopyBytes > 0, `written from the slot itself, not a copy: ${JSON.stringify(backend.counters)}`);
      await backend.close();
    });

    test('a one-chunk entry offered whole: native jobs write its chunk itself and release it once, after the write', async (t) => {
      const dir = await freshDir(`${modeCalls}-whole`);
      const directSlabs = new DirectSlabs();
      const backend = await backendFor(t, { dir, ioMode: 'direct', chunkBytes: MiB, directSlabs });
      const pool = new SlotPool(2, 64 * 1024, dir, directSlabs);
      const events: string[] = [];
      const offeredWhole = (key: string, size: number): ChunkSource => ({
        size,
        async *chunks() {
          events.push(`${key} iterated`);
          yield payloadBytes(SEED, key, size);
        },
        whole: async () => {
          const slot = await pool.acquire();
          slot.set(payloadBytes(SEED, key, size));
          events.push(`${key} taken`);
          return {
            bytes: slot.subarray(0, size),
            release: () => {
              events.push(`${key} released`);
              slot.fill(0xee); // reused at once, as a payload slot is
              pool.release(slot);
            },
          };
        },
      });
      const sizes = [16 * 1024, 16 * 1024 + 100, 40_000];
      await Promise.all(sizes.map((size, i) => backend.write(`w_${i}`, offeredWhole(`w_${i}`, size))));
      for (const [i, size] of sizes.entries()) assertBytes(await readAll(backend, `w_${i}`), payloadBytes(SEED, `w_${i}`, size));
      assert.equal(pool.available, 2, 'every slot given back');
      for (const i of sizes.keys()) {
        const mine = events.filter((e) => e.startsWith(`w_${i} `));
        // Native jobs take the chunk whole; Node's fs calls iterate the source as before.
        assert.deepEqual(mine, modeCalls === 'native' ? [`w_${i} taken`, `w_${i} released`] : [`w_${i} iterated`]);
      }
      if (modeCalls === 'native')
        assert.ok(backend.counters.zeroCopyBytes > 0, `written from the slot itself: ${JSON.stringify(backend.counters)}`);
      await backend.close();
    });

    test('16 concurrent writes and reads with 2 staging slots', async (t) => {
      const backend = await backendFor(t, { chunkBytes: 64 * 1024, stagingSlots: 2 });
      const keys = Array.from({ length: 16 }, (_, i) => `user_${i}_req_${i * 3}`);
      const sizeOf = (i: number): number => 50_000 + i * 12_345;
      const sources = keys.map((k, i) => plainSource(payloadBytes(SEED, k, sizeOf(i)), 9_999));
      await Promise.all(keys.map((k, i) => backend.write(k, sources[i] ?? plainSource(new Uint8Array(0)))));
      const back = await Promise.all(keys.map((k) => readAll(backend, k)));
      back.forEach((b, i) => assertBytes(b, payloadBytes(SEED, keys[i] ?? '', sizeOf(i)), keys[i]));
      assert.deepEqual([...backend.keys()].sort(), [...keys].sort());
      await backend.close();
    });

    test('temp dir: created with kv_cache_ prefix, removed on close', async (t) => {
      const backend = await backendFor(t);
      assert.match(backend.dir, /kv_cache_/);
      assert.ok(existsSync(backend.dir));
      await backend.write('a', plainSource(payloadBytes(SEED, 'a', 10)));
      await backend.close();
      assert.equal(existsSync(backend.dir), false);
    });

    test('user dir: foreign files survive start, clear, delete and close; no overwrite', async (t) => {
      const dir = await freshDir('foreign');
      // Not ours: another program's files, an old-style name, another run's entry, and a file that
      // bears this run's id without having been written by it.
      const foreign = ['other.npy', 'notes.txt', 'prepop_1.bin', 'kvc-bbbbbbbb-prepop_0.bin', 'kvc-aaaaaaaa-prepop_1.bin'];
      for (const f of foreign) writeFileSync(join(dir, f), 'keep me');
      const backend = await backendFor(t, { dir, runId: 'aaaaaaaa' });
      await backend.write('prepop_0', plainSource(payloadBytes(SEED, 'prepop_0', 5000)));
      await assert.rejects(
        backend.write('prepop_1', plainSource(new Uint8Array(3))),
        (e: unknown) => e instanceof ForeignFileError && e.code === 'EEXIST',
      );
      await backend.delete('prepop_1');
      await assert.rejects(backend.read('prepop_1'), EntryNotFoundError);
      assert.deepEqual(readdirSync(dir).sort(), [...foreign, 'kvc-aaaaaaaa-prepop_0.bin'].sort());
      await backend.clear();
      assert.deepEqual([...backend.keys()], []);
      assert.deepEqual(readdirSync(dir).sort(), [...foreign].sort());
      await backend.write('again', plainSource(new Uint8Array(1)));
      await backend.close();
      assert.deepEqual(readdirSync(dir).sort(), [...foreign].sort());
    });

    test('a source that lies about its size fails and leaves no file', async (t) => {
      const backend = await backendFor(t);
      const short = plainSource(new Uint8Array(9_000));
      const bad: ChunkSource = { size: 10_000, chunks: () => short.chunks() };
      await assert.rejects(backend.write('bad', bad), RangeError);
      assert.equal(existsSync(backend.pathFor('bad')), false);
      assert.deepEqual([...backend.keys()], []);
      await backend.delete('never-written');
      await backend.close();
    });

    test('key to file name mapping is safe and injective', () => {
      const plain = 'conv_user_0012_1740553426194_turn_3';
      assert.equal(fileNameForKey(plain), `${plain}.bin`);
      const keys = ['a/b', 'a%2Fb', 'a%002Fb', '../x', 'é', 'e\u0301', '', ' ', '%'];
      const names = keys.map(fileNameForKey);
      assert.equal(new Set(names).size, keys.length);
      for (const n of names) assert.match(n, /^[A-Za-z0-9._%-]*\.bin$/);
    });

    test("entry files carry the run id; other runs' files are found as stale, and removed only on request", async (t) => {
      const dir = await freshDir('stale');
      const mine = await backendFor(t, { dir, runId: '0123abcd' });
      assert.equal(mine.runId, '0123abcd');
      await mine.write('k/1', plainSource(new Uint8Array(5000)));
      assert.equal(basename(mine.pathFor('k/1')), 'kvc-0123abcd-k%002F1.bin');
      writeFileSync(join(dir, 'kvc-ffff0000-a.bin'), new Uint8Array(10_000)); // a killed run's entry
      writeFileSync(join(dir, 'kvc-ffff0000-b.bin'), new Uint8Array(1));
      for (const f of ['kvc-FFFF0000-c.bin', 'kvc-ffff000-d.bin', 'kvc-ffff0000-e.npy', 'notes.txt']) writeFileSync(join(dir, f), 'x'); // not our naming
      mkdirSync(join(dir, 'kvc-ffff0000-dir.bin')); // not a regular file
      const stale = await findStaleEntries(dir, mine.runId);
      assert.deepEqual(stale.paths.map((p) => basename(p)).sort(), ['kvc-ffff0000-a.bin', 'kvc-ffff0000-b.bin']);
      assert.equal(stale.bytes, 10_001);
      const blocks = (name: string): number => statSync(join(dir, name)).blocks * 512;
      assert.equal(stale.allocatedBytes, blocks('kvc-ffff0000-a.bin') + blocks('kvc-ffff0000-b.bin'));
      assert.equal(await removeStaleEntries(stale), 2);
      assert.equal(await removeStaleEntries(stale), 0, 'already gone is fine');
      assert.deepEqual(readdirSync(dir).sort(), [
        'kvc-0123abcd-k%002F1.bin',
        'kvc-FFFF0000-c.bin',
        'kvc-ffff000-d.bin',
        'kvc-ffff0000-dir.bin',
        'kvc-ffff0000-e.npy',
        'notes.txt',
      ]);
      await mine.close();
      await assert.rejects(FileBackend.create({ dir, runId: 'xyz' }), RangeError);
      assert.match(newRunId(), RUN_ID);
    });

    test("a killed run's metadata calibration files are stale entries too: counted, named in the warning's count, removed on request with their scratch directories", async () => {
      const dir = await freshDir('stale-cal');
      writeFileSync(join(dir, calibrationFileName('0000beef', 1, 7)), new Uint8Array(16_384)); // among the entries, after a window
      const scratch = join(dir, calibrationScratchName('0000beef', 0)); // before a window: flat files, or a fan-out tree
      mkdirSync(join(scratch, 'abc', 'de'), { recursive: true });
      writeFileSync(join(scratch, 'f3.bin'), new Uint8Array(4096));
      writeFileSync(join(scratch, 'abc', 'de', `${'a'.repeat(40)}.bin`), new Uint8Array(4096));
      for (const f of ['.kvc-cal-0000beef-1.bin', '.kvc-cal-0000BEEF-1-7.bin', 'kvc-cal-0000beef-1-7.bin'])
        writeFileSync(join(dir, f), 'x'); // not the shape
      mkdirSync(join(dir, '.kvc-calibrate-0000beef')); // not the shape either
      symlinkSync(join(dir, 'notes'), join(dir, calibrationFileName('0000beef', 2, 0))); // a link is never taken
      const stale = await findStaleEntries(dir, '0123abcd');
      assert.deepEqual(stale.paths.map((p) => relative(dir, p)).sort(), [
        calibrationFileName('0000beef', 1, 7),
        join(calibrationScratchName('0000beef', 0), 'abc', 'de', `${'a'.repeat(40)}.bin`),
        join(calibrationScratchName('0000beef', 0), 'f3.bin'),
      ]);
      assert.equal(stale.calibrationFiles, 3);
      assert.deepEqual(stale.scratchDirs, [scratch]);
      assert.equal(stale.bytes, 16_384 + 2 * 4096);
      assert.equal(await removeStaleEntries(stale), 3);
      assert.deepEqual(readdirSync(dir).sort(), [
        '.kvc-cal-0000BEEF-1-7.bin',
        '.kvc-cal-0000beef-1.bin',
        '.kvc-cal-0000beef-2-0.bin',
        '.kvc-calibrate-0000beef',
        'kvc-cal-0000beef-1-7.bin',
      ]);
    });

    test('allocated bytes: whole blocks (at least the O_DIRECT unit) plus extent metadata', () => {
      assert.equal(fileAllocatedBytes(1, 4096), 8192);
      assert.equal(fileAllocatedBytes(4096, 4096), 8192);
      assert.equal(fileAllocatedBytes(4097, 1024), 8192 + 1024);
      assert.equal(fileAllocatedBytes(128 * MiB, 4096), 128 * MiB + 2 * 4096); // 32768 blocks: one more
      assert.equal(fileAllocatedBytes(240 * MiB, 1024), 240 * MiB + 8 * 1024); // 245,760 blocks: 7 + 1
    });

    test('a RAM file system is reported (and still works)', { skip: !existsSync('/dev/shm') }, async (t) => {
      const dir = await mkdtemp('/dev/shm/kvfile-test-');
      try {
        const backend = await backendFor(t, { dir });
        assert.equal(backend.fileSystem, 'tmpfs');
        t.diagnostic(`tmpfs: O_DIRECT requested, ${backend.effectiveIoMode} granted`);
        const data = payloadBytes(SEED, 'shm', 5000);
        await backend.write('shm', plainSource(data));
        assertBytes(await readAll(backend, 'shm'), data);
        await backend.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

test('stopInFlight: a write in flight stops and stores nothing (its file goes at dropStopped or close); a read returns the bytes it had read', async () => {
  const { FileBackend: FB } = await import('../../src/tiers/file.js');
  const { IoAbortedError } = await import('../../src/tiers/backend.js');
  const dir = await mkdtemp(join(tmpdir(), 'kv-stop-'));
  const fb = await FB.create({ dir, chunkBytes: 1024 * 1024, stagingSlots: 2 });
  try {
    const size = 16 * 1024 * 1024;
    await fb.write('whole', {
      size,
      chunks: async function* () {
        for (let i = 0; i < 16; i++) yield new Uint8Array(1024 * 1024);
      },
    });
    let handed = 0;
    const slow = {
      size,
      chunks: async function* () {
        for (let i = 0; i < 16; i++) {
          if (i === 4) fb.stopInFlight();
          handed++;
          yield new Uint8Array(1024 * 1024);
        }
      },
    };
    await assert.rejects(fb.write('cut', slow), (e: unknown) => e instanceof IoAbortedError && e.bytes === 4 * 1024 * 1024);
    assert.ok(handed < 16);
    assert.equal(fb.sizeOf('cut'), undefined);
    // After the stop nothing new starts: the same key again is aborted, not mistaken for a foreign file.
    await assert.rejects(
      fb.write('cut', {
        size: 4096,
        chunks: async function* () {
          yield new Uint8Array(4096);
        },
      }),
      (e: unknown) => e instanceof IoAbortedError && e.bytes === 0,
    );
    const r = await fb.read('whole');
    assert.ok(r.bytes < size, `read ${r.bytes} of ${size} after the stop`);
    // Unlinking is teardown, not part of the run: the cut file stays until close.
    assert.deepEqual(readdirSync(dir).sort(), [basename(fb.pathFor('cut')), basename(fb.pathFor('whole'))]);
    // Once the window is over, dropStopped removes it (the room it held was given back), and only it.
    await fb.dropStopped();
    assert.deepEqual(readdirSync(dir), [basename(fb.pathFor('whole'))]);
    await fb.close();
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    await fb.close();
    await rm(dir, { recursive: true, force: true });
  }
});
