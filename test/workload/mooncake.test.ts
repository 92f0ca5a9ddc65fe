// The Mooncake trace reader (workload/mooncake.ts): records, skipped lines with their numbers and
// reasons, the paced timeline, and arbitrary input never throwing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMooncakeReadStats, mooncakeRecords, mooncakeTimeline, parseMooncakeLine } from '../../src/workload/mooncake.js';

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
