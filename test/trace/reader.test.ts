// Trace reader: traces as the reference writes them (CRLF, no Delete rows, zstandard-compressed),
// compression found by magic bytes without a suffix, keys with line breaks, line-numbered errors,
// truncated .zst files, and early exit from the loop.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { TraceFormatError, ZstdError } from '../../src/trace/errors.js';
import { readTrace, splitRecords, TraceFileError } from '../../src/trace/reader.js';
import type { TraceRecord } from '../../src/trace/reader.js';
import { TraceWriter } from '../../src/trace/writer.js';
import { collect, sampleEvents, steppingClock, withTempDir, zstdCompress } from './helpers.js';

/** What the reference's csv.writer produces: CRLF line ends, Read/Write only. */
const REFERENCE =
  [
    'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase',
    '1732233600.000123,Write,2621440,Tier-0,user_17_req_0042,Prefill',
    '1732233600.004567,Read,2621440,Tier-0,user_17_req_0042,Decode',
    '1732233600.010000,Read,1310720,Tier-0,user_3_req_0001,Evict',
    '1732233600.010001,Write,1310720,Tier-1,user_3_req_0001,Evict',
    '1732233601.500000,Write,65536,Tier-2,rag_doc_7_chunk_0,Prefill',
  ].join('\r\n') + '\r\n';

const EXPECTED = [
  { timestamp: 1732233600.000123, op: 'Write', size: 2621440, tier: 'gpu', key: 'user_17_req_0042', phase: 'Prefill' },
  { timestamp: 1732233600.004567, op: 'Read', size: 2621440, tier: 'gpu', key: 'user_17_req_0042', phase: 'Decode' },
  { timestamp: 1732233600.01, op: 'Read', size: 1310720, tier: 'gpu', key: 'user_3_req_0001', phase: 'Evict' },
  { timestamp: 1732233600.010001, op: 'Write', size: 1310720, tier: 'cpu', key: 'user_3_req_0001', phase: 'Evict' },
  { timestamp: 1732233601.5, op: 'Write', size: 65536, tier: 'storage', key: 'rag_doc_7_chunk_0', phase: 'Prefill' },
];

async function records(chunks: string[]): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of splitRecords(Readable.from(chunks))) out.push(r);
  return out;
}

function expectFormatError(file: string, line: number, why: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof TraceFormatError, String(err));
    assert.equal(err.file, file);
    assert.equal(err.line, line);
    assert.ok(err.message.startsWith(`${file}:${line}: `), err.message);
    assert.match(err.message, why);
    return true;
  };
}

describe('readTrace', () => {
  test('reads a reference-style trace (CRLF, no Delete rows)', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 'kv_ops.csv');
      await writeFile(path, REFERENCE);
      assert.deepEqual(await collect(path), EXPECTED);
    }));

  test('reads a reference-style .zst trace, and finds zstd by magic bytes without the suffix', () =>
    withTempDir(async (dir) => {
      const packed = zstdCompress(REFERENCE);
      await writeFile(join(dir, 'kv_ops.csv.zst'), packed);
      await writeFile(join(dir, 'kv_ops.bin'), packed);
      assert.deepEqual(await collect(join(dir, 'kv_ops.csv.zst')), EXPECTED);
      assert.deepEqual(await collect(join(dir, 'kv_ops.bin')), EXPECTED);
    }));

  test('a malformed line is reported with file and line number', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 'bad.csv');
      const lines = REFERENCE.split('\r\n');
      lines[3] = '1732233600.010000,Read,lots,Tier-0,user_3_req_0001,Evict';
      await writeFile(path, lines.join('\r\n'));
      const seen: number[] = [];
      await assert.rejects(
        (async () => {
          for await (const row of readTrace(path)) seen.push(row.size);
        })(),
        expectFormatError(path, 4, /bad Object_Size_Bytes "lots"/),
      );
      assert.deepEqual(seen, [2621440, 2621440], 'rows before the bad line were delivered');
    }));

  test('the same error from a .zst trace', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 'bad.csv.zst');
      await writeFile(path, zstdCompress(REFERENCE.replace('Tier-2', 'Tier-9')));
      await assert.rejects(collect(path), expectFormatError(path, 6, /bad Tier "Tier-9"/));
    }));

  test('a wrong header or an empty file is an error on line 1', () =>
    withTempDir(async (dir) => {
      const wrong = join(dir, 'wrong.csv');
      await writeFile(wrong, 'time,op\n1,2\n');
      await assert.rejects(collect(wrong), expectFormatError(wrong, 1, /expected the header/));
      const empty = join(dir, 'empty.csv');
      await writeFile(empty, '');
      await assert.rejects(collect(empty), expectFormatError(empty, 1, /header line is missing/));
    }));

  test('line numbers count line breaks inside quoted keys; blank lines are skipped', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 'q.csv');
      const text = [
        'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase',
        '1.0,Read,1,Tier-0,"a',
        'b",Decode',
        '',
        '2.0,Read,x,Tier-0,k,Decode',
        '',
      ].join('\n');
      await writeFile(path, text);
      await assert.rejects(collect(path), expectFormatError(path, 5, /bad Object_Size_Bytes/));
    }));

  test('a truncated .zst reports the decompression failure', () =>
    withTempDir(async (dir) => {
      const src = join(dir, 'full.csv.zst');
      const w = await TraceWriter.open(src, { epochSeconds: steppingClock() });
      for (const e of sampleEvents(5000)) w.write(e);
      await w.close();
      const bytes = readFileSync(src);
      const cut = join(dir, 'cut.csv.zst');
      await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
      await assert.rejects(collect(cut), (err: unknown) => {
        assert.ok(err instanceof TraceFileError, String(err));
        assert.ok(err instanceof TraceFormatError, 'a TraceFormatError, so replay reports it as bad input');
        assert.ok(err.cause instanceof ZstdError);
        assert.match(
          err.message,
          /^I\/O trace '.*cut\.csv\.zst': cannot be decompressed \(zstd .* exited with code 1: .*\); expected a zstd-compressed trace/,
        );
        return true;
      });
    }));

  test('a missing file is an error', () =>
    withTempDir(async (dir) => {
      await assert.rejects(collect(join(dir, 'none.csv')), (err: unknown) => {
        assert.ok(err instanceof TraceFileError);
        assert.equal(err.message, `I/O trace '${join(dir, 'none.csv')}': file not found (expected a CSV trace file, or a .zst of one)`);
        return true;
      });
      await assert.rejects(collect(join(dir, 'none.csv.zst')), TraceFileError);
    }));

  test('breaking out of the loop early stops the decompressor', () =>
    withTempDir(async (dir) => {
      const path = join(dir, 'big.csv.zst');
      const w = await TraceWriter.open(path, { epochSeconds: steppingClock() });
      for (const e of sampleEvents(50_000)) w.write(e);
      await w.close();
      let n = 0;
      for await (const row of readTrace(path)) {
        assert.ok(row.size >= 0);
        if (++n === 10) break;
      }
      assert.equal(n, 10);
    }));
});

describe('splitRecords', () => {
  test('records split across chunks, CRLF stripped, quoted line breaks kept', async () => {
    const got = await records(['a,b\r', '\nc,"x\r\ny', '"\nlast', ' line']);
    assert.deepEqual(got, [
      { text: 'a,b', line: 1 },
      { text: 'c,"x\r\ny"', line: 2 },
      { text: 'last line', line: 4 },
    ]);
  });

  test('an unterminated quote at the end of the file is an error', async () => {
    await assert.rejects(records(['h\n', 'x,"open\n', 'more\n']), /<trace>:2: unterminated quoted field/);
  });
});
