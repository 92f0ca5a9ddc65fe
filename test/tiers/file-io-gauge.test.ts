// The file tier's harness gauge (issue 24 item 3): calls queued for a libuv thread and reads waiting for a
// staging buffer are counted exactly on a controlled clock, and a real FileBackend feeds the gauge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileIoGauge, threadPoolSize } from '../../src/tiers/file-io-gauge.js';
import { FileBackend } from '../../src/tiers/file.js';
import { payloadBytes } from '../../src/data/payload.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';

/** A promise and its resolver, to hold a "call" in flight as long as a test wants. */
function held(): { promise: Promise<void>; release: () => void } {
  let release = (): void => undefined;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

test('the threadpool size is read as libuv reads UV_THREADPOOL_SIZE', () => {
  assert.equal(threadPoolSize({}), 4);
  assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '24' }), 24);
  assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '12x' }), 12);
  assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '0' }), 4);
  assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: 'many' }), 4);
  assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '5000' }), 1024);
  assert.throws(() => new FileIoGauge(0), /positive integer/);
});

test('calls beyond the pool queue: the time with more in flight than threads, and the calls that found it full', async () => {
  let t = 0;
  const gauge = new FileIoGauge(2, () => t);
  const calls = [held(), held(), held(), held()];
  const running = calls.slice(0, 3).map((c) => gauge.track(() => c.promise));
  t = 10; // three in flight on two threads since t = 0
  running.push(gauge.track(() => calls[3]?.promise ?? Promise.resolve()));
  assert.equal(gauge.stats.queuedMs, 10, 'a standing queue counts up to now');
  t = 25;
  calls[0]?.release();
  calls[1]?.release();
  await Promise.all(running.slice(0, 2));
  t = 40; // two left: no queue since t = 25
  calls[2]?.release();
  calls[3]?.release();
  await Promise.all(running);
  assert.deepEqual(gauge.stats, { poolThreads: 2, maxInFlight: 4, queuedMs: 25, callsQueued: 2, stagingWaitMs: 0, stagingWaits: 0 });
  // A failed call leaves the count as a settled one does.
  await assert.rejects(
    gauge.track(() => Promise.reject(new Error('EIO'))),
    /EIO/,
  );
  assert.equal(gauge.stats.maxInFlight, 4);
  gauge.resetStats();
  assert.deepEqual(gauge.stats, { poolThreads: 2, maxInFlight: 0, queuedMs: 0, callsQueued: 0, stagingWaitMs: 0, stagingWaits: 0 });
});

test('staging waits count only when the buffer was not free', async () => {
  let t = 0;
  const gauge = new FileIoGauge(4, () => t);
  await gauge.staging(Promise.resolve('free'), true);
  const slot = held();
  const waiting = gauge.staging(slot.promise, false);
  t = 7;
  slot.release();
  await waiting;
  assert.equal(gauge.stats.stagingWaits, 1);
  assert.equal(gauge.stats.stagingWaitMs, 7);
});

test('a file tier counts its calls and its staging waits in its gauge', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kv-gauge-'));
  const gauge = new FileIoGauge(1);
  const backend = await FileBackend.create({ dir, ioMode: 'buffered', chunkBytes: 64 * 1024, stagingSlots: 1, gauge });
  try {
    const bytes = payloadBytes(3, 'g', 256 * 1024);
    const source = (): ChunkSource => ({
      size: bytes.length,
      async *chunks() {
        yield bytes;
      },
    });
    // Two writes at once on a "pool" of one thread: one call at least found it taken.
    await Promise.all([backend.write('a', source()), backend.write('b', source())]);
    assert.equal(backend.gauge, gauge);
    assert.ok(gauge.stats.maxInFlight >= 2, JSON.stringify(gauge.stats));
    assert.ok(gauge.stats.callsQueued >= 1, JSON.stringify(gauge.stats));
    // Two reads at once with one staging buffer: the second waits for it (buffered writes take none).
    assert.equal(gauge.stats.stagingWaits, 0, JSON.stringify(gauge.stats));
    await Promise.all([backend.read('a'), backend.read('b')]);
    assert.ok(gauge.stats.stagingWaits >= 1 && gauge.stats.stagingWaitMs > 0, JSON.stringify(gauge.stats));
    await backend.delete('a');
  } finally {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  }
});
