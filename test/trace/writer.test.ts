// Trace writer: 10,000-event round trips plain and .zst, the .zst opened by the system zstd gives the
// same bytes as the plain file, close() counts rows, batching under backpressure, flushes by timer (manual time) and by full batch, and
// clear failures (unwritable path, a full device, a missing zstd, writing after close).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { CacheOptions } from '../../src/cache/tiered-cache.js';
import { TraceWriteError } from '../../src/trace/errors.js';
import { TRACE_HEADER, formatRow } from '../../src/trace/format.js';
import type { TraceEvent } from '../../src/trace/format.js';
import { TraceWriter } from '../../src/trace/writer.js';
import { ZSTD_MAGIC } from '../../src/trace/zstd.js';
import { ManualTime } from '../util/manual-time.js';
import { collect, sampleEvents, steppingClock, withTempDir, zstdDecompress } from './helpers.js';

const N = 10_000;

async function writeAll(path: string, events: readonly TraceEvent[], batchBytes?: number): Promise<number> {
  const w = await TraceWriter.open(path, { epochSeconds: steppingClock(), ...(batchBytes === undefined ? {} : { batchBytes }) });
  for (const e of events) w.write(e);
  return w.close();
}

function expectedCsv(events: readonly TraceEvent[]): string {
  const clock = steppingClock();
  return [TRACE_HEADER, ...events.map((e) => formatRow(e, clock()))].join('\n') + '\n';
}

/**
 * The file's text once the write under way has landed: waits on the file-system thread pool
 * (event-loop turns, bounded), never on a timer.
 */
async function fileOnceWritten(path: string): Promise<string> {
  for (let turn = 0; turn < 100_000; turn++) {
    const text = readFileSync(path, 'utf8');
    if (text !== '') return text;
    await nextTurn();
  }
  throw new Error(`${path} was never written`);
}

const EVENT: TraceEvent = { op: 'Write', tier: 'gpu', key: 'k', size: 1, phase: 'Prefill' };

describe('TraceWriter', () => {
  for (const name of ['nested/dir/trace.csv', 'nested/dir/trace.csv.zst']) {
    test(`round trip of ${N} events: ${name}`, () =>
      withTempDir(async (dir) => {
        const events = sampleEvents(N);
        const path = join(dir, name);
        assert.equal(await writeAll(path, events), N);
        const rows = await collect(path);
        assert.equal(rows.length, N);
        const clock = steppingClock();
        rows.forEach((row, i) => {
          const { timestamp, ...event } = row;
          assert.deepEqual(event, events[i]);
          assert.equal(timestamp.toFixed(6), clock().toFixed(6));
        });
      }));
  }

  test('plain output is exactly the formatted rows', () =>
    withTempDir(async (dir) => {
      const events = sampleEvents(300);
      const path = join(dir, 't.csv');
      await writeAll(path, events);
      assert.equal(readFileSync(path, 'utf8'), expectedCsv(events));
    }));

  test('.zst output is a zstd frame that `zstd -d` turns into the identical CSV', () =>
    withTempDir(async (dir) => {
      const events = sampleEvents(N);
      const plain = join(dir, 't.csv');
      const packed = join(dir, 't.csv.zst');
      await writeAll(plain, events);
      await writeAll(packed, events, 4096);
      const head = readFileSync(packed).subarray(0, 4);
      assert.deepEqual([...head], ZSTD_MAGIC);
      assert.ok(statSync(packed).size < statSync(plain).size / 3, 'compressed well');
      assert.ok(zstdDecompress(packed).equals(readFileSync(plain)));
    }));

  test('tiny batches force many flushes and drains without losing or reordering rows', () =>
    withTempDir(async (dir) => {
      const events = sampleEvents(N);
      const path = join(dir, 't.csv');
      assert.equal(await writeAll(path, events, 1), N);
      assert.equal(readFileSync(path, 'utf8'), expectedCsv(events));
    }));

  test('close() returns the row count; an empty trace is just the header', () =>
    withTempDir(async (dir) => {
      const w = await TraceWriter.open(join(dir, 'empty.csv'));
      assert.equal(await w.close(), 0);
      assert.equal(await w.close(), 0, 'close is idempotent');
      assert.equal(readFileSync(join(dir, 'empty.csv'), 'utf8'), `${TRACE_HEADER}\n`);
      const z = await TraceWriter.open(join(dir, 'empty.csv.zst'));
      assert.equal(await z.close(), 0);
      assert.equal(zstdDecompress(join(dir, 'empty.csv.zst')).toString('utf8'), `${TRACE_HEADER}\n`);
      const seven = await TraceWriter.open(join(dir, 'seven.csv'));
      for (let i = 0; i < 7; i++) seven.write(EVENT);
      assert.equal(seven.rowCount, 7);
      assert.equal(await seven.close(), 7);
    }));

  test('write() does no I/O itself; rows wait in memory until the flush timer fires, then reach the file', () =>
    withTempDir(async (dir) => {
      const time = new ManualTime();
      const path = join(dir, 't.csv');
      const w = await TraceWriter.open(path, { flushIntervalMs: 20, startTimer: time.after, epochSeconds: steppingClock() });
      assert.equal(time.pending, 1, 'the header arms the timer');
      w.write(EVENT);
      w.write(EVENT);
      assert.equal(time.pending, 1, 'one timer per batch, not per row');
      await time.advance(19);
      assert.equal(readFileSync(path, 'utf8'), '', 'nothing written before the timer fires');
      await time.advance(1);
      assert.equal(time.pending, 0);
      const clock = steppingClock();
      const twoRows = `${TRACE_HEADER}\n${formatRow(EVENT, clock())}\n${formatRow(EVENT, clock())}\n`;
      assert.equal(await fileOnceWritten(path), twoRows);
      w.write(EVENT);
      assert.equal(time.pending, 1, 'the next row arms a new timer');
      assert.equal(await w.close(), 3);
      assert.equal(time.pending, 0, 'close cancels the timer');
      assert.equal(readFileSync(path, 'utf8'), `${twoRows}${formatRow(EVENT, clock())}\n`);
    }));

  test('a full batch is written at once, without waiting for the timer', () =>
    withTempDir(async (dir) => {
      const time = new ManualTime();
      const path = join(dir, 't.csv');
      const w = await TraceWriter.open(path, { batchBytes: 1024, startTimer: time.after, epochSeconds: steppingClock() });
      const events = sampleEvents(40); // well over 1 KiB of rows
      for (const e of events) w.write(e);
      const written = await fileOnceWritten(path);
      assert.ok(written.length > 0 && written.length <= expectedCsv(events).length);
      assert.ok(expectedCsv(events).startsWith(written), 'whole batches, in order');
      assert.equal(await w.close(), 40);
      assert.equal(readFileSync(path, 'utf8'), expectedCsv(events));
    }));

  test('observe is usable as the cache observer', () =>
    withTempDir(async (dir) => {
      const w = await TraceWriter.open(join(dir, 't.csv'));
      const observer: CacheOptions['observer'] = w.observe;
      observer?.({ op: 'Delete', tier: 'storage', key: 'gone', size: 9, phase: 'Evict' });
      assert.equal(await w.close(), 1);
      assert.match(readFileSync(join(dir, 't.csv'), 'utf8'), /,Delete,9,Tier-2,gone,Evict\n$/);
    }));

  test('writing after close throws', () =>
    withTempDir(async (dir) => {
      const w = await TraceWriter.open(join(dir, 't.csv'));
      await w.close();
      assert.throws(() => w.write(EVENT), /is closed/);
    }));

  test('an unwritable path fails at open with a clear error', () =>
    withTempDir(async (dir) => {
      await writeFile(join(dir, 'a-file'), 'x');
      for (const path of [join(dir, 'a-file', 'trace.csv'), join(dir, 'a-file', 'sub', 'trace.csv.zst'), dir]) {
        await assert.rejects(TraceWriter.open(path), (err: unknown) => {
          assert.ok(err instanceof TraceWriteError);
          assert.ok(err.message.startsWith(`I/O trace log ${path}: cannot create: `), err.message);
          assert.match(err.message, /ENOTDIR|EISDIR|EEXIST/);
          return true;
        });
      }
    }));

  test('a symlink planted at the trace path is refused at open; its target is left untouched', () =>
    withTempDir(async (dir) => {
      const target = join(dir, 'precious.txt');
      await writeFile(target, 'keep me');
      for (const name of ['t.csv', 't.csv.zst']) {
        const path = join(dir, name);
        await symlink(target, path);
        await assert.rejects(TraceWriter.open(path), /cannot create: .*ELOOP/);
      }
      assert.equal(readFileSync(target, 'utf8'), 'keep me');
    }));

  test('a missing zstd binary fails at open and says how to install it', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 't.csv.zst');
      await assert.rejects(
        TraceWriter.open(path, { zstdCommand: join(dir, 'no-such-zstd') }),
        /cannot create: cannot run .*ENOENT.*apt-get install zstd/,
      );
    }));

  for (const name of ['full.csv', 'full.csv.zst']) {
    test(`a write error (device full) surfaces on close and stops accepting rows: ${name}`, async (t) => {
      if (!existsSync('/dev/full')) return t.skip('no /dev/full');
      if (process.getuid?.() !== 0) return t.skip('needs root: mknod makes a /dev/full device node under the trace name');
      await withTempDir(async (dir) => {
        const path = join(dir, name);
        // A device node like /dev/full (char 1:7) under the trace's own name: the writer opens no symlink.
        const made = spawnSync('mknod', [path, 'c', '1', '7']);
        assert.equal(made.status, 0, `mknod ${path}: ${made.stderr.toString()}`);
        const w = await TraceWriter.open(path, { batchBytes: 1024 });
        // zstd writes (and so fails) only once its compressed output fills a buffer: keep feeding it
        // rows that do not compress to nothing.
        const events = sampleEvents(1000);
        // Waits for the zstd process and the device, not a duration: up to 2,000 rounds of 5 ms.
        for (let round = 0; w.droppedRows === 0 && round < 2000; round++) {
          for (const e of events) w.write(e);
          await sleep(5);
        }
        const dropped = w.droppedRows;
        await assert.rejects(w.close(), (err: unknown) => {
          assert.ok(err instanceof TraceWriteError);
          assert.match(err.message, new RegExp(`^I/O trace log ${path}: write failed: .*(ENOSPC|No space left)`));
          return true;
        });
        assert.ok(dropped > 0, 'rows are refused once a write failed');
      });
    });
  }
});
