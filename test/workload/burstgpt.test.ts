// BurstGPT replay source (docs/reference-compat.md#rc-33; cases of the reference's BurstGPT tests): finding trace files, streaming rows with
// skipped-row accounting, time across file boundaries, and the paced multi-pass timeline. Every
// test writes its own CSV files into a temp dir and removes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  burstTimeline,
  createBurstReadStats,
  monotonicTimestamps,
  readBurstRows,
  resolveBurstFiles,
  TraceError,
} from '../../src/workload/burstgpt.js';
import { withTempDir } from '../util/temp-dir.js';
import type { BurstReadStats, BurstRow, BurstTimelineItem } from '../../src/workload/burstgpt.js';

const HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

function csv(rows: ReadonlyArray<readonly [number, number, number, number]>, header = HEADER): string {
  return [header, ...rows.map(([ts, req, resp, total]) => `${ts},ChatGPT,${req},${resp},${total},Conversation log`)].join('\n') + '\n';
}

/** The reference's BurstGPT test fixture: 5 rows at 0–40 s, then 3 rows at 50–70 s; totals sum to 2700. */
const FILE_1_ROWS = [
  [0, 100, 20, 120],
  [10, 200, 40, 240],
  [20, 300, 60, 360],
  [30, 400, 80, 480],
  [40, 500, 100, 600],
] as const;
const FILE_2_ROWS = [
  [50, 160, 40, 200],
  [60, 240, 60, 300],
  [70, 320, 80, 400],
] as const;

const withDir = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir(fn, 'kv-burst-');

async function withFixture(fn: (dir: string, files: string[]) => Promise<void>): Promise<void> {
  await withDir(async (dir) => {
    // Written in reverse order, plus non-CSV neighbours, so the sorting and filtering are exercised.
    await writeFile(join(dir, 'BurstGPT_2.csv'), csv(FILE_2_ROWS));
    await writeFile(join(dir, 'BurstGPT_1.csv'), csv(FILE_1_ROWS));
    await writeFile(join(dir, 'notes.txt'), 'not a trace\n');
    await writeFile(join(dir, '.hidden.csv'), csv([]));
    await mkdir(join(dir, 'sub.csv'));
    await fn(dir, [join(dir, 'BurstGPT_1.csv'), join(dir, 'BurstGPT_2.csv')]);
  });
}

async function collect<T>(items: AsyncIterable<T>, limit = Infinity): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

function tuple(r: BurstRow): [number, number, number, number] {
  return [r.timestampS, r.requestTokens, r.responseTokens, r.totalTokens];
}

test('burstgpt: a directory gives its *.csv files sorted by name; a file gives itself', async () => {
  await withFixture(async (dir, files) => {
    assert.deepEqual(await resolveBurstFiles(dir), files);
    assert.deepEqual(await resolveBurstFiles(files[1] ?? ''), [files[1]]);
  });
});

test('burstgpt: a glob in the file name matches files, sorted', async () => {
  await withFixture(async (dir, files) => {
    assert.deepEqual(await resolveBurstFiles(join(dir, 'BurstGPT_*.csv')), files);
    assert.deepEqual(await resolveBurstFiles(join(dir, 'BurstGPT_[2-9].csv')), [files[1]]);
    assert.deepEqual(await resolveBurstFiles(join(dir, 'BurstGPT_?.csv')), files);
    assert.deepEqual(await resolveBurstFiles(join(dir, '*')), [...files, join(dir, 'notes.txt')]);
  });
});

test('burstgpt: missing path, empty directory, unmatched glob → TraceError naming the path', async () => {
  await withDir(async (dir) => {
    const cases = [join(dir, 'nope.csv'), dir, join(dir, 'BurstGPT_*.csv'), join(dir, 'missing', '*.csv'), join(dir, '*', 'a.csv')];
    for (const path of cases) {
      await assert.rejects(resolveBurstFiles(path), (err: unknown) => {
        assert.ok(err instanceof TraceError, String(err));
        assert.equal(err.path, path);
        assert.ok(err.message.includes(path), err.message);
        assert.match(err.message, /expected a BurstGPT CSV file, a directory/);
        return true;
      });
    }
  });
});

test('burstgpt: streams 8 rows; first (0, 100, 20, 120); time increases across files; totals 2700', async () => {
  await withFixture(async (_dir, files) => {
    const stats = createBurstReadStats();
    const rows = await collect(readBurstRows(files, stats));
    assert.equal(rows.length, 8);
    assert.deepEqual(tuple(rows[0]), [0.0, 100, 20, 120]);
    assert.deepEqual(rows.map(tuple), [...FILE_1_ROWS, ...FILE_2_ROWS]);
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i].timestampS > rows[i - 1].timestampS);
    assert.equal(
      rows.reduce((s, r) => s + r.totalTokens, 0),
      2700,
    );
    assert.deepEqual(
      rows.map((r) => [r.file, r.line]),
      [...[2, 3, 4, 5, 6].map((l) => [files[0], l]), ...[2, 3, 4].map((l) => [files[1], l])],
    );
    assert.deepEqual(stats, { rows: 8, skipped: 0, skippedExamples: [] });
  });
});

test('burstgpt: malformed rows are skipped and counted with file, line and reason; failures kept', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'bad.csv');
    await writeFile(
      file,
      [
        HEADER,
        '1,ChatGPT,100,20,120,Conversation log', // 2 ok
        '2,ChatGPT,abc,20,120,Conversation log', // 3 text in a number column
        '3,ChatGPT,100,20', // 4 missing fields
        '4,ChatGPT,100,-5,95,Conversation log', // 5 negative
        '', // 6 blank: ignored, not counted
        '5,GPT-4,300,0,300,API log', // 7 failed request (0 response tokens): kept
        'x,ChatGPT,100,20,120,Conversation log', // 8 bad timestamp
        '6,"Chat""GPT, v2",100,20,120,Conversation log', // 9 quoted field with comma and quote: ok
        '7,"ChatGPT,100,20,120,Conversation log', // 10 unterminated quote
        '8,ChatGPT,100.5,20,120,Conversation log', // 11 fractional tokens
        '9,ChatGPT,0x10,20,120,Conversation log', // 12 hex is not a decimal number
        '10,ChatGPT,7,3,,Conversation log', // 13 empty total → sum
      ].join('\n'),
    );
    const stats = createBurstReadStats();
    const rows = await collect(readBurstRows([file], stats));
    assert.deepEqual(
      rows.map((r) => r.line),
      [2, 7, 9, 13],
    );
    assert.deepEqual(rows.map(tuple), [
      [1, 100, 20, 120],
      [5, 300, 0, 300],
      [6, 100, 20, 120],
      [10, 7, 3, 10],
    ]);
    assert.equal(stats.rows, 4);
    assert.equal(stats.skipped, 7);
    assert.equal(stats.skippedExamples.length, 5);
    assert.deepEqual(
      stats.skippedExamples.map((e) => [e.file, e.line]),
      [
        [file, 3],
        [file, 4],
        [file, 5],
        [file, 8],
        [file, 10],
      ],
    );
    const reasons = stats.skippedExamples.map((e) => e.reason);
    assert.match(reasons[0] ?? '', /Request tokens: "abc" is not a number/);
    assert.match(reasons[1] ?? '', /expected 6 fields, found 4/);
    assert.match(reasons[2] ?? '', /Response tokens: -5 is negative/);
    assert.match(reasons[3] ?? '', /Timestamp: "x" is not a number/);
    assert.match(reasons[4] ?? '', /quoted/);
  });
});

test('burstgpt: optional columns default; header tolerant of BOM, spaces, quotes, order and CRLF', async () => {
  await withDir(async (dir) => {
    const noTotal = join(dir, 'a.csv');
    await writeFile(noTotal, 'Timestamp,Request tokens,Response tokens\n1.5,10,5\n,7,0\n');
    assert.deepEqual((await collect(readBurstRows([noTotal]))).map(tuple), [
      [1.5, 10, 5, 15],
      [0, 7, 0, 7],
    ]);
    const noTimestamp = join(dir, 'b.csv');
    await writeFile(noTimestamp, '\uFEFF"Response tokens" , Model,  Request tokens\r\n5,ChatGPT,10\r\n6,ChatGPT,11');
    assert.deepEqual((await collect(readBurstRows([noTimestamp]))).map(tuple), [
      [0, 10, 5, 15],
      [0, 11, 6, 17],
    ]);
  });
});

test('burstgpt: a header without Request tokens, or an empty file → TraceError naming file and columns', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'wrong.csv');
    await writeFile(file, 'Timestamp,Model,Prompt tokens,Response tokens\n1,ChatGPT,10,5\n');
    await assert.rejects(collect(readBurstRows([file])), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.equal(err.path, file);
      assert.ok(err.message.includes(file));
      assert.match(err.message, /no "Request tokens" column/);
      assert.match(err.message, /columns found: "Timestamp", "Model", "Prompt tokens", "Response tokens"/);
      return true;
    });
    const empty = join(dir, 'empty.csv');
    await writeFile(empty, '');
    await assert.rejects(collect(readBurstRows([empty])), (err: unknown) => err instanceof TraceError && err.message.includes('empty'));
    await assert.rejects(collect(readBurstRows([join(dir, 'gone.csv')])), TraceError);
    await assert.rejects(collect(readBurstRows([dir])), TraceError); // a directory: EISDIR on read
  });
});

test('burstgpt: monotonicTimestamps shifts a file whose clock restarts; continuous files unchanged', async () => {
  await withDir(async (dir) => {
    const a = join(dir, 'a.csv');
    const b = join(dir, 'b.csv');
    await writeFile(
      a,
      csv([
        [100, 1, 1, 2],
        [110, 1, 1, 2],
        [130, 1, 1, 2],
      ]),
    );
    await writeFile(
      b,
      csv([
        [0, 1, 1, 2],
        [5, 1, 1, 2],
        [5, 1, 1, 2],
        [20, 1, 1, 2],
      ]),
    );
    const raw = await collect(readBurstRows([a, b]));
    assert.deepEqual(
      raw.map((r) => r.timestampS),
      [100, 110, 130, 0, 5, 5, 20],
    ); // each file keeps its own
    const mono = await collect(monotonicTimestamps(readBurstRows([a, b])));
    assert.deepEqual(
      mono.map((r) => r.timestampS),
      [100, 110, 130, 130, 135, 135, 150],
    );
    assert.deepEqual(
      mono.map((r) => [r.file, r.line]),
      raw.map((r) => [r.file, r.line]),
    );
  });
  await withFixture(async (_dir, files) => {
    const mono = await collect(monotonicTimestamps(readBurstRows(files)));
    assert.deepEqual(
      mono.map((r) => r.timestampS),
      [0, 10, 20, 30, 40, 50, 60, 70],
    );
  });
});

test('burstgpt: speed-up 0 → one cycle 8 items all scheduled at 0 ms; two cycles 16', async () => {
  await withFixture(async (_dir, files) => {
    const one = await collect(burstTimeline(files, { speedup: 0, replayCycles: 1 }));
    assert.equal(one.length, 8);
    assert.ok(one.every((it) => it.scheduledAtMs === 0 && it.pass === 0));
    assert.deepEqual(
      one.map((it) => it.index),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    const two = await collect(burstTimeline(files, { speedup: 0, replayCycles: 2 }));
    assert.equal(two.length, 16);
    assert.deepEqual(
      two.map((it) => it.pass),
      [...Array<number>(8).fill(0), ...Array<number>(8).fill(1)],
    );
    assert.deepEqual(
      two.map((it) => it.index),
      Array.from({ length: 16 }, (_, i) => i),
    );
    assert.deepEqual(
      two.slice(8).map((it) => tuple(it.row)),
      one.map((it) => tuple(it.row)),
    );
  });
});

test('burstgpt: speed-up 10 schedules 0, 1000, … ms; the next pass continues from the last', async () => {
  await withFixture(async (_dir, files) => {
    const items = await collect(burstTimeline(files, { speedup: 10, replayCycles: 2 }));
    const times = items.map((it) => it.scheduledAtMs);
    assert.deepEqual(times.slice(0, 8), [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]);
    assert.deepEqual(times.slice(8), [7000, 8000, 9000, 10000, 11000, 12000, 13000, 14000]);
    const realTime = await collect(burstTimeline(files, { speedup: 1, replayCycles: 1 }));
    assert.deepEqual(
      realTime.map((it) => it.scheduledAtMs),
      [0, 10000, 20000, 30000, 40000, 50000, 60000, 70000],
    );
  });
});

test('burstgpt: timeline starts each pass at its own first timestamp and never goes back', async () => {
  await withDir(async (dir) => {
    const a = join(dir, 'a.csv');
    const b = join(dir, 'b.csv');
    await writeFile(
      a,
      csv([
        [1000, 1, 1, 2],
        [1002, 1, 1, 2],
      ]),
    );
    await writeFile(
      b,
      csv([
        [0, 1, 1, 2],
        [3, 1, 1, 2],
      ]),
    );
    const items = await collect(burstTimeline([a, b], { speedup: 2, replayCycles: 2 }));
    assert.deepEqual(
      items.map((it) => it.scheduledAtMs),
      [0, 1000, 1000, 2500, 2500, 3500, 3500, 5000],
    );
    assert.deepEqual(
      items.map((it) => it.row.timestampS),
      [1000, 1002, 0, 3, 1000, 1002, 0, 3],
    ); // rows as read
  });
});

test('burstgpt: replayCycles 0 repeats until the consumer stops; a pass with no valid rows ends it', async () => {
  await withFixture(async (_dir, files) => {
    const items: BurstTimelineItem[] = await collect(burstTimeline(files, { speedup: 0, replayCycles: 0 }), 50);
    assert.equal(items.length, 50);
    assert.equal(items[49]?.pass, 6);
  });
  await withDir(async (dir) => {
    const file = join(dir, 'bad.csv');
    await writeFile(file, `${HEADER}\nx,ChatGPT,1,1,2,API log\n`);
    const stats = createBurstReadStats();
    assert.deepEqual(await collect(burstTimeline([file], { speedup: 0, replayCycles: 0 }, stats)), []);
    assert.deepEqual([stats.rows, stats.skipped], [0, 1]);
  });
});

test('burstgpt: timeline stats describe one pass of the trace, however many passes run', async () => {
  await withFixture(async (_dir, files) => {
    await appendFile(files[0] ?? '', 'oops,ChatGPT,1,1,2,API log\n');
    const stats: BurstReadStats = createBurstReadStats();
    const items = await collect(burstTimeline(files, { speedup: 0, replayCycles: 3 }, stats));
    assert.equal(items.length, 24);
    assert.deepEqual(stats, {
      rows: 8,
      skipped: 1,
      skippedExamples: [{ file: files[0], line: 7, reason: 'Timestamp: "oops" is not a number' }],
    });
  });
});

test('burstgpt: invalid replay options are rejected', async () => {
  await assert.rejects(collect(burstTimeline([], { speedup: -1, replayCycles: 1 })), RangeError);
  await assert.rejects(collect(burstTimeline([], { speedup: Number.NaN, replayCycles: 1 })), RangeError);
  await assert.rejects(collect(burstTimeline([], { speedup: 1, replayCycles: 1.5 })), RangeError);
  await assert.rejects(collect(burstTimeline([], { speedup: 1, replayCycles: -1 })), RangeError);
});

/** A collector of unreachable objects when the runtime lets us have one, for a stable heap figure. */
function gcFunction(): (() => void) | undefined {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}

test('burstgpt: a 200,000-row file streams with bounded memory', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'big.csv');
    const ROWS = 200_000;
    await writeFile(file, `${HEADER}\n`);
    for (let start = 0; start < ROWS; start += 10_000) {
      const lines: string[] = [];
      for (let i = start; i < start + 10_000; i++)
        lines.push(`${(i * 0.25).toFixed(2)},ChatGPT,${(i % 2000) + 1},${i % 300},${(i % 2000) + 1 + (i % 300)},Conversation log`);
      await appendFile(file, `${lines.join('\n')}\n`);
    }
    const fileBytes = (await stat(file)).size;
    const gc = gcFunction();
    gc?.();
    const base = process.memoryUsage().heapUsed;
    let peak = 0;
    let count = 0;
    let totalTokens = 0;
    const stats = createBurstReadStats();
    for await (const row of readBurstRows([file], stats)) {
      count++;
      totalTokens += row.totalTokens;
      if (count % 40_000 === 0) {
        gc?.();
        peak = Math.max(peak, process.memoryUsage().heapUsed - base);
      }
    }
    assert.equal(count, ROWS);
    assert.deepEqual([stats.rows, stats.skipped], [ROWS, 0]);
    assert.ok(totalTokens > 0);
    // Retained heap stays near one read chunk plus ~2 MB of the runtime's own (compiled code, type
    // feedback: it was 2.2 MB here against a 2.3 MB limit of a quarter of the file, failing at random);
    // loading the file whole would hold at least its size.
    const limit = gc ? fileBytes / 2 : fileBytes * 2;
    assert.ok(peak < limit, `heap grew ${peak} bytes while streaming a ${fileBytes}-byte file (limit ${limit})`);
  });
});
