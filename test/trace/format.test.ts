// Row format (docs/reference-compat.md#rc-21): the header, exact row text (6-decimal epoch seconds, Tier-N names), CSV
// quoting of keys, parsing and its line-numbered errors, and that the cache's IoEvent fits the trace.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IoEvent } from '../../src/cache/tiered-cache.js';
import { TraceFormatError } from '../../src/trace/errors.js';
import { RowEncoder, TRACE_HEADER, checkHeader, csvField, formatRow, maxRowBytes, parseRow, splitFields } from '../../src/trace/format.js';
import type { TraceEvent } from '../../src/trace/format.js';
import { Rng } from '../../src/util/rng.js';

const EV: TraceEvent = { op: 'Read', tier: 'gpu', key: 'k', size: 1, phase: 'Decode' };

describe('trace row format', () => {
  test('header is the reference column list', () => {
    assert.equal(TRACE_HEADER, 'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase');
  });

  test('a row has 6 decimals and Tier-N names', () => {
    const e: TraceEvent = { op: 'Write', tier: 'storage', key: 'user_3_req_0042', size: 131072, phase: 'Prefill' };
    assert.equal(formatRow(e, 1732233600.5), '1732233600.500000,Write,131072,Tier-2,user_3_req_0042,Prefill');
    assert.equal(
      formatRow({ ...e, tier: 'gpu', op: 'Read', phase: 'Decode' }, 1732233600.1234567),
      '1732233600.123457,Read,131072,Tier-0,user_3_req_0042,Decode',
    );
    assert.equal(
      formatRow({ ...e, tier: 'cpu', op: 'Delete', phase: 'Evict', size: 0 }, 1),
      '1.000000,Delete,0,Tier-1,user_3_req_0042,Evict',
    );
  });

  test('timestamps are exactly toFixed(6) (same second in a row, carries, huge values, seeded sweep)', () => {
    const e: TraceEvent = { op: 'Read', tier: 'gpu', key: 'k', size: 1, phase: 'Decode' };
    const stamp = (t: number): string => formatRow(e, t).split(',')[0] ?? '';
    const rng = new Rng(5, 'timestamps');
    // eslint-disable-next-line no-loss-of-precision -- near-boundary literals on purpose: the test is about the doubles they round to
    const cases = [0, 0.0000004, 0.9999996, 1732233600.9999996, 1732233600.9999994, 1732233601, 2 ** 42 + 0.5, 1e15 + 0.25];
    for (let i = 0; i < 100_000; i++) {
      const whole = rng.int(0, 2_000_000_000);
      cases.push(whole + rng.random(), whole + (rng.int(0, 999_999) + 0.5) / 1e6);
    }
    for (const t of cases) assert.equal(stamp(t), t.toFixed(6), `timestamp ${t}`);
  });

  test('RowEncoder writes exactly formatRow + newline (odd keys, huge sizes, any tier/op/phase)', () => {
    const encoder = new RowEncoder();
    const rng = new Rng(6, 'encode');
    const keys = ['user_3_req_0042', '', 'a,b', 'say "hi"', 'line\nbreak', 'tab\tkey', 'ключ_7', '鍵🔑', 'x'.repeat(300)];
    const ops = ['Write', 'Read', 'Delete'] as const;
    const tiers = ['gpu', 'cpu', 'storage'] as const;
    const phases = ['Prefill', 'Decode', 'Both', 'Evict'] as const;
    const buf = Buffer.alloc(8192);
    for (let i = 0; i < 5000; i++) {
      const event: TraceEvent = {
        op: ops[i % 3] ?? 'Read',
        tier: tiers[i % 3 === 0 ? 2 : i % 2] ?? 'gpu',
        key: keys[i % keys.length] ?? '',
        size: i % 7 === 0 ? Number.MAX_SAFE_INTEGER - i : rng.int(0, 2 ** 40),
        phase: phases[i % 4] ?? 'Both',
      };
      const t = i % 11 === 0 ? rng.int(0, 10) : 1.7e9 + rng.random() * 1e8;
      const at = i % 5; // not always at the start of the buffer
      const end = encoder.encode(event, t, buf, at);
      assert.ok(end - at <= maxRowBytes(event));
      assert.equal(buf.toString('utf8', at, end), `${formatRow(event, t)}\n`);
    }
    assert.throws(() => encoder.encode({ ...EV, size: 1.5 }, 1, buf, 0), RangeError);
    assert.throws(() => encoder.encode(EV, Number.NaN, buf, 0), RangeError);
    assert.throws(() => encoder.encode(EV, -1, buf, 0), RangeError);
  });

  test('one RowEncoder over a run of timestamps: rows of one second, carries, steps back and huge values', () => {
    const encoder = new RowEncoder();
    const buf = Buffer.alloc(256);
    // Each timestamp either shares the previous one's second or not; a wrong remembered second shows.
    const stamps: Array<[number, string]> = [
      [1732233600.1, '1732233600.100000'],
      [1732233600.5, '1732233600.500000'],
      // eslint-disable-next-line no-loss-of-precision -- a near-boundary literal on purpose: its micros round up to the next second
      [1732233600.9999996, '1732233601.000000'],
      [1732233601.25, '1732233601.250000'],
      [1732233599.75, '1732233599.750000'],
      [1732233600, '1732233600.000000'],
      [9, '9.000000'],
      [9.5, '9.500000'],
      [2 ** 42 + 0.5, '4398046511104.500000'],
      [9.25, '9.250000'],
      [0, '0.000000'],
    ];
    const rows = stamps.map(([t]) => buf.toString('utf8', 0, encoder.encode(EV, t, buf, 0)));
    assert.deepEqual(
      rows,
      stamps.map(([, text]) => `${text},Read,1,Tier-0,k,Decode\n`),
    );
  });

  test('the cache IoEvent is a TraceEvent', () => {
    const e: IoEvent = { op: 'Delete', tier: 'cpu', key: 'k', size: 1, phase: 'Both' };
    const asTrace: TraceEvent = e;
    assert.equal(formatRow(asTrace, 2), '2.000000,Delete,1,Tier-1,k,Both');
  });

  test('keys are quoted only when needed, quotes doubled', () => {
    assert.equal(csvField('plain_key'), 'plain_key');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    const e: TraceEvent = { op: 'Read', tier: 'cpu', key: 'a,"b"', size: 5, phase: 'Decode' };
    const line = formatRow(e, 10);
    assert.equal(line, '10.000000,Read,5,Tier-1,"a,""b""",Decode');
    assert.deepEqual(parseRow(line), { ...e, timestamp: 10 });
  });

  test('bad sizes and times are refused when formatting', () => {
    const e: TraceEvent = { op: 'Read', tier: 'cpu', key: 'k', size: 1.5, phase: 'Decode' };
    assert.throws(() => formatRow(e, 1), RangeError);
    assert.throws(() => formatRow({ ...e, size: 1 }, Number.NaN), RangeError);
  });

  test('parses every field', () => {
    assert.deepEqual(parseRow('1732233600.123456,Write,262144,Tier-1,user_1_req_0001,Evict'), {
      timestamp: 1732233600.123456,
      op: 'Write',
      size: 262144,
      tier: 'cpu',
      key: 'user_1_req_0001',
      phase: 'Evict',
    });
    assert.equal(parseRow('1.0,Read,1,Tier-0,,Both').key, '');
  });

  test('6-decimal timestamps survive a parse/format round trip', () => {
    for (const ts of ['1732233600.000001', '1732233600.999999', '1999999999.123456', '0.000000']) {
      const row = parseRow(`${ts},Read,1,Tier-0,k,Decode`);
      assert.equal(formatRow(row, row.timestamp), `${ts},Read,1,Tier-0,k,Decode`);
    }
  });

  test('splitFields handles quoting', () => {
    assert.deepEqual(splitFields('a,"b,c",d'), ['a', 'b,c', 'd']);
    assert.deepEqual(splitFields('"x""y",'), ['x"y', '']);
    assert.equal(typeof splitFields('a,"b'), 'string');
    assert.equal(typeof splitFields('a,"b"c'), 'string');
    assert.equal(typeof splitFields('a,b"c'), 'string');
  });

  const bad: ReadonlyArray<[string, RegExp]> = [
    ['1.0,Write,1,Tier-0,k', /expected 6 fields, found 5/],
    ['1.0,Write,1,Tier-0,k,Prefill,extra', /expected 6 fields, found 7/],
    ['soon,Write,1,Tier-0,k,Prefill', /bad Timestamp "soon"/],
    ['1.0,Update,1,Tier-0,k,Prefill', /bad Operation "Update"/],
    ['1.0,Write,-1,Tier-0,k,Prefill', /bad Object_Size_Bytes "-1"/],
    ['1.0,Write,1.5,Tier-0,k,Prefill', /bad Object_Size_Bytes/],
    ['1.0,Write,1,nvme,k,Prefill', /bad Tier "nvme"/],
    ['1.0,Write,1,Tier-0,k,prefill', /bad Phase "prefill"/],
    ['1.0,Write,1,Tier-0,"k,Prefill', /unterminated quoted field/],
  ];
  for (const [line, why] of bad) {
    test(`malformed: ${JSON.stringify(line)}`, () => {
      assert.throws(
        () => parseRow(line, 17, 'trace.csv'),
        (err: unknown) => {
          assert.ok(err instanceof TraceFormatError);
          assert.equal(err.line, 17);
          assert.equal(err.file, 'trace.csv');
          assert.match(err.message, /^trace\.csv:17: /);
          assert.match(err.message, why);
          return true;
        },
      );
    });
  }

  test('header check tolerates a BOM and names the line otherwise', () => {
    checkHeader(TRACE_HEADER);
    checkHeader(`\uFEFF${TRACE_HEADER}`);
    assert.throws(() => checkHeader('Timestamp,Operation', 1, 'f.csv'), /^TraceFormatError: f\.csv:1: expected the header/);
  });
});
