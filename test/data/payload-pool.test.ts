// PayloadPool: every generated chunk (native fills and worker threads alike) must be byte-for-byte fillChunk of its entry over one base
// the repeat rule allows, aligned for O_DIRECT; nearly every chunk must cost its stamps alone; and
// slots must never leak or deadlock, whatever the consumers do (test/data/payload.test.ts for the bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { DIRECT_ALIGN, DirectSlabs } from '../../src/data/aligned.js';
import { entryKeyMaterial, fillChunk, MIN_REPEAT_BYTES, payloadSource, SOURCE_BYTES } from '../../src/data/payload.js';
import { PayloadPool, type PayloadPoolOptions } from '../../src/data/payload-pool.js';
import { nativeFillHelper, type FillerKind } from '../../src/data/fillers.js';
import { MiB, roundUp } from '../../src/util/units.js';

const TOKEN_BYTES = 24_576; // tiny-1b

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

/**
 * Both ways to fill slots where the native helper is built (test/data/fillers.test.ts fails where a C
 * compiler is but the helper is not); the byte and slot tests below run with each.
 */
const FILLERS: readonly FillerKind[] = typeof nativeFillHelper() === 'string' ? ['threads'] : ['native', 'threads'];

/** Runs `body` with a pool that is closed afterwards, whatever happens; the pool fills as `options.filler` says. */
async function withPool(options: PayloadPoolOptions, body: (pool: PayloadPool) => Promise<void>): Promise<void> {
  const pool = await PayloadPool.create(options);
  if (options.filler !== undefined) assert.match(pool.fillerDescription, options.filler === 'native' ? /^native/ : /worker thread/);
  try {
    await body(pool);
  } finally {
    await pool.close();
  }
}

/** The bases (source offsets) `chunk`, at `offset` of entry `key`, could be a fillChunk of. */
function basesOf(seed: number, key: string, offset: number, chunk: Uint8Array, chunkBytes: number): number[] {
  const source = sourceOf(seed);
  const material = entryKeyMaterial(seed, key);
  const expected = new Uint8Array(chunk.length);
  const found: number[] = [];
  for (let from = 0; from < SOURCE_BYTES; from += chunkBytes) {
    fillChunk(source, material, offset, from, expected);
    if (bytesEqual(chunk, expected)) found.push(from);
  }
  return found;
}

const sources = new Map<number, Uint8Array>();
const sourceOf = (seed: number): Uint8Array => sources.get(seed) ?? sources.set(seed, payloadSource(seed)).get(seed) ?? new Uint8Array();

/**
 * Consumes entry `key` of `size` bytes, checking that every chunk is the entry over one base that none
 * of the entry's chunks of the last MIN_REPEAT_BYTES copied; returns the chunk lengths.
 */
async function checkSource(pool: PayloadPool, seed: number, key: string, size: number, between?: () => Promise<void>): Promise<number[]> {
  const lengths: number[] = [];
  const used: number[] = [];
  let at = 0;
  for await (const chunk of pool.source(key, size).chunks()) {
    const bases = basesOf(seed, key, at, chunk, pool.chunkBytes);
    const recent = used.slice(-(MIN_REPEAT_BYTES / pool.chunkBytes - 1));
    const allowed = bases.filter((b) => !recent.includes(b));
    assert.ok(allowed.length > 0, `chunk at ${at} of ${key}: bases ${bases.join(',')} against recent ${recent.join(',')}`);
    used.push(allowed[0] ?? -1);
    lengths.push(chunk.length);
    at += chunk.length;
    if (between !== undefined) await between();
  }
  assert.equal(at, size);
  return lengths;
}

/** A worker script for failure tests: answers init, then reacts to a fill as `onFill` says. */
function fakeWorker(onFill: string): URL {
  const src = `import { parentPort } from 'node:worker_threads';
parentPort.on('message', (m) => { if (m.type === 'init') parentPort.postMessage({ type: 'ready' }); else { ${onFill} } });`;
  return new URL(`data:text/javascript,${encodeURIComponent(src)}`);
}

for (const filler of FILLERS) {
  test(`pool chunks are the entry over an allowed base, chunkBytes long (tail shorter) and O_DIRECT-aligned [${filler}]`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kv-pool-'));
    const directSlabs = new DirectSlabs();
    try {
      await withPool({ filler, seed: 42, workers: 2, chunkBytes: MiB, slots: 4, probeDir: dir, directSlabs }, async (pool) => {
        // Where the file system takes O_DIRECT, really write each chunk with it: EINVAL if misaligned.
        const fd = pool.direct ? openSync(join(dir, 'direct.bin'), constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT) : undefined;
        try {
          for (const size of [0, 1, DIRECT_ALIGN - 1, MiB, 3 * MiB + 12_345]) {
            const lengths: number[] = [];
            let at = 0;
            for await (const chunk of pool.source(`entry_${size}`, size).chunks()) {
              if (fd !== undefined) {
                const view = directSlabs.directView(chunk, roundUp(chunk.length, DIRECT_ALIGN));
                assert.ok(view !== undefined, 'chunk not direct-capable');
                writeSync(fd, view, 0, view.length, at);
              }
              at += chunk.length;
              lengths.push(chunk.length);
            }
            assert.equal(at, size);
            assert.deepEqual(await checkSource(pool, 42, `entry_${size}`, size), lengths);
            assert.ok(
              lengths.slice(0, -1).every((n) => n === MiB),
              `lengths ${lengths.join(',')}`,
            );
            assert.equal(pool.available, 4);
          }
        } finally {
          if (fd !== undefined) closeSync(fd);
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

for (const filler of FILLERS) {
  test(`an entry much larger than all slots together (8 × 1 MiB slots, 20 MiB entry) [${filler}]`, async () => {
    await withPool({ filler, seed: 3, workers: 2, chunkBytes: MiB, slots: 8 }, async (pool) => {
      const size = 20 * MiB + 4321;
      const lengths = await checkSource(pool, 3, 'big', size);
      assert.equal(lengths.length, 21);
      assert.equal(pool.available, 8);
    });
  });
}

for (const filler of FILLERS) {
  test(`a one-chunk entry taken whole is fillChunk of it over some base, its slot held until release, most by stamps alone [${filler}]`, async () => {
    await withPool({ filler, seed: 5, workers: 2, chunkBytes: 64 * 1024, slots: 3 }, async (pool) => {
      assert.equal(pool.source('big', 64 * 1024 + 1).whole, undefined); // two chunks: iterate them
      assert.equal(pool.source('empty', 0).whole, undefined);
      const held = [];
      for (let i = 0; i < 60; i++) {
        const size = 4096 * (1 + (i % 16));
        const source = pool.source(`w${i}`, size);
        assert.ok(source.whole !== undefined);
        const chunk = await source.whole();
        assert.equal(chunk.bytes.length, size);
        assert.ok(basesOf(5, `w${i}`, 0, chunk.bytes, pool.chunkBytes).length > 0, `entry w${i}`);
        held.push(chunk);
        if (held.length === 3) {
          assert.equal(pool.available, 0); // each held chunk keeps its slot
          // A fourth waits for a slot: given once one is released, with the bytes of its own key.
          const waiting = pool.source('late', 8192).whole?.();
          await yieldToLoop();
          held.shift()?.release();
          const late = await waiting;
          assert.ok(late !== undefined && basesOf(5, 'late', 0, late.bytes, pool.chunkBytes).length > 0);
          late?.release();
          for (const h of held.splice(0)) h.release();
        }
      }
      for (const h of held) h.release();
      assert.equal(pool.available, 3);
      assert.ok(pool.stats.stampedBytes > pool.stats.copiedBytes, `stamped ${pool.stats.stampedBytes}, copied ${pool.stats.copiedBytes}`);
    });
  });
}

test('a whole chunk after close rejects; a failed fill rejects it and gives its slot back', async () => {
  const onFill = "parentPort.postMessage({ type: 'failed', id: m.id, error: 'no keystream' });";
  await withPool({ seed: 1, workers: 1, chunkBytes: MiB, slots: 2, workerUrl: fakeWorker(onFill) }, async (pool) => {
    await assert.rejects(pool.source('x', 4096).whole?.() ?? Promise.resolve(), /could not generate a chunk: no keystream/);
    assert.equal(pool.available, 2);
  });
  const pool = await PayloadPool.create({ seed: 1, workers: 1, chunkBytes: MiB, slots: 1 });
  const source = pool.source('late', 4096);
  await pool.close();
  await assert.rejects(source.whole?.() ?? Promise.resolve(), /closed/);
});

test('dedup inside one 16,384-token tiny-1b entry (384 MiB), hashed chunk by chunk', async () => {
  await withPool({ seed: 42, workers: 2, chunkBytes: 4 * MiB, slots: 4 }, async (pool) => {
    const size = 16_384 * TOKEN_BYTES;
    assert.equal(size, 384 * MiB);
    const seen = new Set<string>();
    let blocks = 0;
    let duplicates = 0;
    for await (const chunk of pool.source('long_context', size).chunks()) {
      for (let at = 0; at < chunk.length; at += 4096) {
        const digest = createHash('sha256')
          .update(chunk.subarray(at, at + 4096))
          .digest('base64');
        blocks++;
        if (seen.has(digest)) duplicates++;
        else seen.add(digest);
      }
    }
    assert.equal(blocks, size / 4096);
    assert.ok(duplicates / blocks < 0.01);
    assert.equal(duplicates, 0);
  });
});

for (const filler of FILLERS) {
  test(`6 entries at once with only 2 slots all complete with correct bytes [${filler}]`, async () => {
    await withPool({ filler, seed: 11, workers: 2, chunkBytes: 256 * 1024, slots: 2 }, async (pool) => {
      const sizes = [1, 300_000, 1_000_000, 2 * MiB, 777_777, 256 * 1024];
      await Promise.all(sizes.map((size, i) => checkSource(pool, 11, `c${i}`, size, () => yieldToLoop())));
      assert.equal(pool.available, 2);
    });
  });
}

for (const filler of FILLERS) {
  test(`breaking out early, or throwing, returns every slot [${filler}]`, async () => {
    await withPool({ filler, seed: 1, workers: 2, chunkBytes: MiB, slots: 4, readahead: 4 }, async (pool) => {
      for await (const chunk of pool.source('abandoned', 10 * MiB).chunks()) {
        assert.equal(chunk.length, MiB);
        break;
      }
      assert.equal(pool.available, 4);
      await assert.rejects(async () => {
        for await (const _ of pool.source('thrown', 10 * MiB).chunks()) throw new Error('consumer failed');
      }, /consumer failed/);
      assert.equal(pool.available, 4);
    });
  });
}

test('a source is lazy: nothing is taken until it is iterated', async () => {
  await withPool({ seed: 1, workers: 1, chunkBytes: MiB, slots: 2 }, async (pool) => {
    const source = pool.source('lazy', 5 * MiB);
    await yieldToLoop();
    assert.equal(pool.available, 2);
    assert.equal(source.size, 5 * MiB);
  });
});

test('a crashed worker rejects the pending chunk with a clear error and leaks no slot', async () => {
  await withPool({ seed: 1, workers: 1, chunkBytes: MiB, slots: 2, workerUrl: fakeWorker("throw new Error('boom');") }, async (pool) => {
    await assert.rejects(async () => {
      for await (const _ of pool.source('doomed', 3 * MiB).chunks()) assert.fail('no chunk expected');
    }, /payload worker 0 failed: boom/);
    assert.equal(pool.available, 2);
    await assert.rejects(async () => {
      for await (const _ of pool.source('after', MiB).chunks()) assert.fail('no chunk expected');
    }, /no live worker: payload worker 0 failed: boom/);
  });
});

test('a fill the worker reports as failed rejects that chunk', async () => {
  const onFill = "parentPort.postMessage({ type: 'failed', id: m.id, error: 'no keystream' });";
  await withPool({ seed: 1, workers: 1, chunkBytes: MiB, slots: 2, workerUrl: fakeWorker(onFill) }, async (pool) => {
    await assert.rejects(async () => {
      for await (const _ of pool.source('x', MiB).chunks()) assert.fail('no chunk expected');
    }, /could not generate a chunk: no keystream/);
    assert.equal(pool.available, 2);
  });
});

test('after close, iterating a source rejects; bad options are refused', async () => {
  const pool = await PayloadPool.create({ seed: 1, workers: 1, chunkBytes: MiB, slots: 1 });
  const source = pool.source('late', MiB);
  await pool.close();
  await assert.rejects(async () => {
    for await (const _ of source.chunks()) assert.fail('no chunk expected');
  }, /closed/);
  await assert.rejects(
    PayloadPool.create({ seed: 1, workers: 1, chunkBytes: 1000, slots: 1 }),
    /chunkBytes must be a positive multiple of 4096/,
  );
  await assert.rejects(PayloadPool.create({ seed: 1, workers: 0, chunkBytes: 4096, slots: 0 }), /workers .*; slots/);
});

for (const filler of FILLERS) {
  test(`a free slot is reused by rewriting its stamps only, whatever entry it held, within the repeat rule [${filler}]`, async () => {
    // One consumer at a time, 2 chunks per entry, 4 slots: the first entry fills two slots by copying; every
    // later entry, whatever its key, finds a free slot holding a base it may copy for each of its chunks.
    await withPool({ filler, seed: 8, workers: 1, chunkBytes: MiB, slots: 4, readahead: 2 }, async (pool) => {
      for (let i = 0; i < 10; i++) await checkSource(pool, 8, `k${i}`, 2 * MiB);
      assert.equal(pool.stats.stampedBytes, 18 * MiB);
      assert.equal(pool.stats.copiedBytes, 2 * MiB);
      // A shorter chunk is stamped too, and the slot still holds the whole base for a longer one after it.
      await checkSource(pool, 8, 'short', MiB + 1000);
      await checkSource(pool, 8, 'long', 2 * MiB);
      assert.equal(pool.stats.stampedBytes, 18 * MiB + (MiB + 1000) + 2 * MiB);
      assert.equal(pool.stats.copiedBytes, 2 * MiB);
    });
  });
}

for (const filler of FILLERS) {
  test(`a chunk never copies a base its entry copied in the last MIN_REPEAT_BYTES: with one slot, every second chunk is a copy [${filler}]`, async () => {
    await withPool({ filler, seed: 5, workers: 1, chunkBytes: 4 * MiB, slots: 1, readahead: 1 }, async (pool) => {
      // 4 MiB chunks: 3 recent bases are barred; one slot holds one base, so chunks alternate stamp and copy
      // only where the slot's base is barred. A 2-chunk entry: the first chunk copies (an unused slot or a
      // base still allowed is stamped), the second cannot take the base the first just used.
      await checkSource(pool, 5, 'a', 8 * MiB);
      assert.equal(pool.stats.copiedBytes, 8 * MiB); // unused slot, then a barred base
      await checkSource(pool, 5, 'b', 8 * MiB);
      assert.equal(pool.stats.stampedBytes, 4 * MiB); // the slot's base is new to 'b', then barred
      assert.equal(pool.stats.copiedBytes, 12 * MiB);
      // A long entry through one slot still never repeats a base within 16 MiB (checkSource asserts it).
      await checkSource(pool, 5, 'c', 40 * MiB);
    });
  });
}

for (const filler of FILLERS) {
  test(`the time consumers wait for a chunk is counted on the clock of the pool, and reset with the stats [${filler}]`, async () => {
    let t = 0;
    // Every reading of the clock moves it by 10 ms: a wait is two readings, so each waited chunk adds exactly 10.
    await withPool({ filler, seed: 3, workers: 1, chunkBytes: MiB, slots: 2, now: () => (t += 10) - 10 }, async (pool) => {
      await checkSource(pool, 3, 'w', 3 * MiB);
      const { consumerWaitMs, chunksWaitedFor } = pool.stats;
      // The first chunk is always waited for: its fill was only just handed to a thread.
      assert.ok(chunksWaitedFor >= 1 && chunksWaitedFor <= 3, `${chunksWaitedFor} chunks waited for`);
      assert.equal(consumerWaitMs, 10 * chunksWaitedFor);
      pool.resetStats();
      assert.deepEqual(pool.stats, {
        filler: pool.fillerDescription,
        stampedBytes: 0,
        copiedBytes: 0,
        consumerWaitMs: 0,
        chunksWaitedFor: 0,
      });
    });
  });
}
