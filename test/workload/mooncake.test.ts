// The Mooncake trace reader (workload/mooncake.ts): records, skipped lines with their numbers and
// reasons, the paced timeline, and arbitrary input never throwing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  MooncakeBlockNumbers,
  createMooncakeReadStats,
  mooncakeBlocks,
  mooncakeRecordBatches,
  mooncakeRecords,
  mooncakeSessionKey,
  mooncakeTimeline,
  parseMooncakeLine,
} from '../../src/workload/mooncake.js';
import type { HashId } from '../../src/workload/mooncake.js';
import { ChainColumns } from '../../src/workload/numbered-chains.js';

async function* linesOf(text: string): AsyncGenerator<string> {
  for (const l of text.split('\n')) yield l;
}

const GOOD = (ts: number, ids: number[], input = ids.length * 512 - 10): string =>
  JSON.stringify({ timestamp: ts, input_length: input, output_length: 5, hash_ids: ids });

test('usable lines become records; bad ones are counted with their line numbers and reasons', async () => {
  const text = [
    GOOD(0, [1, 2]),
    'not json',
    '',
    JSON.stringify({ timestamp: 5, input_length: 100, output_length: 1, hash_ids: [1, 2] }),
    JSON.stringify({ timestamp: -1, input_length: 100, output_length: 1, hash_ids: [1] }),
    JSON.stringify({ timestamp: 7, input_length: 100, output_length: 1, hash_ids: [1.5] }),
    JSON.stringify({ timestamp: 7, input_length: 0, output_length: 1, hash_ids: [] }),
    GOOD(9, [1, 3]),
  ].join('\n');
  const stats = createMooncakeReadStats();
  const recs = [];
  for await (const r of mooncakeRecords(linesOf(text), stats)) recs.push(r);
  assert.deepEqual(
    recs.map((r) => [r.line, r.timestampMs, r.hashIds]),
    [
      [1, 0, [1, 2]],
      [8, 9, [1, 3]],
    ],
  );
  assert.equal(stats.records, 2);
  assert.equal(stats.skipped, 5);
  assert.deepEqual(
    stats.skippedExamples.map((e) => e.line),
    [2, 4, 5, 6, 7],
  );
  assert.match(stats.skippedExamples[1]?.reason ?? '', /has 2 ids for input_length 100 \(expected 1/);
  assert.match(stats.skippedExamples[2]?.reason ?? '', /timestamp/);
});

test('one canonical form per id: safe integers as numbers however written, others as their text', () => {
  const mixed = JSON.stringify({
    timestamp: 0,
    input_length: 3500,
    output_length: 1,
    hash_ids: [5, '5', '05', '-0', 0, '9007199254740993', 'x'],
  });
  const r = parseMooncakeLine(mixed, 1);
  assert.ok(r.ok);
  // "5" and 5 are one id (the run's key text mc_5_… for both); "05", "-0" and past-2^53 texts are not integers as written.
  assert.deepEqual(r.value.hashIds, [5, 5, '05', '-0', 0, '9007199254740993', 'x']);
});

test('ids may be whole numbers of any size or sign, or short strings: each is one id', () => {
  const big = '{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [-9223372036854775807, "a1b2"]}';
  const r = parseMooncakeLine(big, 1);
  assert.ok(r.ok);
  assert.deepEqual(r.value.hashIds, ['-9223372036854776000', 'a1b2']);
  const long = parseMooncakeLine(JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: ['x'.repeat(129)] }), 1);
  assert.equal(long.ok, false);
});

test("--trace-block-tokens: one id per N tokens of the input (16 for the ATC'25 traces), else the line is skipped", async () => {
  const line = JSON.stringify({ timestamp: 0, input_length: 40, output_length: 2, hash_ids: [1, 2, 3] });
  const r = parseMooncakeLine(line, 1, 16);
  assert.ok(r.ok);
  assert.deepEqual(r.value.hashIds, [1, 2, 3]);
  const at512 = parseMooncakeLine(line, 1);
  assert.deepEqual(at512, { ok: false, reason: '"hash_ids" has 3 ids for input_length 40 (expected 1, one per 512 tokens)' });
  const stats = createMooncakeReadStats();
  const recs = [];
  for await (const rec of mooncakeRecords(linesOf(`${line}\n${GOOD(1, [4])}`), stats, 16)) recs.push(rec.line);
  assert.deepEqual(recs, [1]);
  assert.deepEqual(stats.skippedExamples, [
    { line: 2, reason: '"hash_ids" has 1 ids for input_length 502 (expected 32, one per 16 tokens)' },
  ]);
});

test('the timeline paces by timestamp ÷ speed-up, and later passes follow the first', async () => {
  const text = [GOOD(1000, [1]), GOOD(3000, [2]), GOOD(2000, [3])].join('\n');
  const items = [];
  for await (const it of mooncakeTimeline(() => linesOf(text), { speedup: 2, replayCycles: 2 })) items.push(it);
  assert.deepEqual(
    items.map((i) => [i.pass, i.index, i.scheduledAtMs]),
    [
      [0, 0, 0],
      [0, 1, 1000],
      [0, 2, 1000], // a step back in time costs no delay
      [1, 3, 1000],
      [1, 4, 2000],
      [1, 5, 2000],
    ],
  );
  const unpaced = [];
  for await (const it of mooncakeTimeline(() => linesOf(text), { speedup: 0, replayCycles: 1 })) unpaced.push(it.scheduledAtMs);
  assert.deepEqual(unpaced, [0, 0, 0]);
});

test('property: the line parser never throws, whatever the line', () => {
  const objects = fc.record(
    {
      timestamp: fc.oneof(fc.double(), fc.integer(), fc.string(), fc.constant(null)),
      input_length: fc.oneof(fc.integer({ min: -5, max: 5000 }), fc.double(), fc.string()),
      output_length: fc.oneof(fc.integer({ min: -5, max: 5000 }), fc.string()),
      hash_ids: fc.oneof(fc.array(fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)), { maxLength: 12 }), fc.string()),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.json(),
        objects.map((o) => JSON.stringify(o)),
      ),
      (line) => {
        const r = parseMooncakeLine(line, 1);
        if (r.ok) {
          assert.equal(r.value.hashIds.length, Math.ceil(r.value.inputLength / 512));
          assert.ok(r.value.inputLength > 0);
        } else assert.equal(typeof r.reason, 'string');
      },
    ),
    { numRuns: 2000 },
  );
});

async function* itemsOf<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const i of items) yield i;
}

test('property: records in batches = records one line at a time, bad and blank lines counted at the same numbers with the same reasons', async () => {
  const line = fc.oneof(
    fc
      .tuple(fc.integer({ min: 0, max: 5000 }), fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }))
      .map(([ts, ids]) => GOOD(ts, ids)),
    fc.constantFrom(
      '',
      '  ',
      'not json',
      '{"timestamp": -1}',
      GOOD(1, [1, 2], 100),
      '{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": ["05"]}',
    ),
    fc.string({ maxLength: 20 }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(line, { maxLength: 6 }), { maxLength: 8 }), async (batches) => {
      const lines = batches.flat();
      const byLine = createMooncakeReadStats();
      const expected = [];
      for await (const r of mooncakeRecords(itemsOf(lines), byLine)) expected.push(r);
      const stats = createMooncakeReadStats();
      const got = [];
      for await (const b of mooncakeRecordBatches(itemsOf(batches), stats)) {
        assert.ok(b.length > 0);
        got.push(...b);
      }
      assert.deepEqual(got, expected);
      assert.deepEqual(stats, byLine);
    }),
    { numRuns: 300 },
  );
});

/** Numbers a list of records' chains in one batch. */
function numbered(records: ReadonlyArray<{ inputLength: number; hashIds: HashId[] }>, blockTokens: number, traceBlockTokens: number) {
  const numbers = new MooncakeBlockNumbers(blockTokens, traceBlockTokens);
  const columns = new ChainColumns();
  for (const r of records) numbers.chain(r, columns);
  return columns.take(new Float64Array(records.length), (i) => mooncakeSessionKey(records[i], blockTokens, traceBlockTokens));
}

test('property: numbered chains name what mooncakeBlocks names: equal keys, equal numbers, numbered in order of first appearance', () => {
  const id = fc.oneof(
    fc.integer({ min: 0, max: 30 }),
    fc.integer({ min: 2 ** 21, max: 2 ** 21 + 3 }),
    fc.constantFrom('a', 'b', '9007199254740993'),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.array(id, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 15 })), { minLength: 1, maxLength: 12 }),
      fc.constantFrom(16, 3, 8, 40),
      (shapes, blockTokens) => {
        const traceBlockTokens = 16;
        // The input ends anywhere in its last trace block.
        const records = shapes.map(([hashIds, cut]) => ({ hashIds, inputLength: hashIds.length * traceBlockTokens - cut }));
        const batch = numbered(records, blockTokens, traceBlockTokens);
        const byKey = new Map<string, number>();
        records.forEach((r, i) => {
          const blocks = mooncakeBlocks(r, blockTokens, traceBlockTokens);
          const from = batch.starts[i];
          assert.equal(batch.starts[i + 1] - from, blocks.length);
          blocks.forEach((b, j) => {
            if (!byKey.has(b.key)) byKey.set(b.key, byKey.size); // first appearance: the next number
            assert.equal(batch.keys[from + j], byKey.get(b.key), b.key);
            assert.equal(batch.tokens[from + j], b.tokens);
          });
          assert.equal(batch.sessionKey(i), blocks[0]?.key);
        });
        assert.equal(batch.requests, records.length);
      },
    ),
    { numRuns: 500 },
  );
});

test('numbered chains: an id first seen past the array stays one id when the array grows over it', () => {
  const far = 2 ** 21; // past the 2^20 ids numbered through the array from the start
  const records = [{ hashIds: [far], inputLength: 512 }];
  for (let i = 0; i < 600_000; i += 4) records.push({ hashIds: [i, i + 1, i + 2, i + 3], inputLength: 2048 }); // 4 × 600,000 ids > far
  records.push({ hashIds: [far], inputLength: 512 }, { hashIds: [far + 1], inputLength: 512 });
  const batch = numbered(records, 512, 512);
  const n = batch.keys.length;
  assert.equal(batch.keys[0], 0);
  assert.equal(batch.keys[n - 2], 0);
  assert.equal(batch.keys[n - 1], 600_001);
});
