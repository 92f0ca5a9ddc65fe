// Property and fuzz tests of the I/O trace reader (issue 12): any file content — plain, .zst,
// truncated .zst, a .zst that is not zstd, garbage — gives rows or a TraceFormatError naming the file,
// never another exception; a FIFO is refused before it is opened; a record without end is not buffered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { TraceFormatError } from '../../src/trace/errors.js';
import { MAX_RECORD_CHARS, splitRecords, TraceFileError } from '../../src/trace/reader.js';
import { TRACE_HEADER } from '../../src/trace/format.js';
import { collect, withTempDir, zstdCompress } from './helpers.js';

/** Reads the whole trace: the row count, or the TraceFormatError (anything else fails the test). */
async function rowsOrFormatError(path: string): Promise<number | TraceFormatError> {
  try {
    return (await collect(path)).length;
  } catch (e: unknown) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
}

const recordPiece = fc.oneof(
  fc.constantFrom(
    TRACE_HEADER,
    '1732233600.000001,Write,4096,Tier-2,k1,Prefill',
    '1732233600.5,Read,4096,Tier-0,"a,""b""",Decode',
    '1,Delete,0,Tier-1,"multi\nline",Evict',
    '1,Write,-5,Tier-2,k,Prefill',
    '1,Write,99999999999999999999,Tier-2,k,Prefill',
    'x,Write,1,Tier-3,k,Both',
    '"unclosed,Write',
    '',
    '\r',
    '\uFEFF' + TRACE_HEADER,
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

test('any plain or .zst content gives rows or a TraceFormatError naming the file', () =>
  withTempDir(async (dir) => {
    const plain = join(dir, 't.csv');
    const zst = join(dir, 't.csv.zst');
    await fc.assert(
      fc.asyncProperty(fc.array(recordPiece, { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), async (pieces, eol) => {
        const text = pieces.join(eol);
        writeFileSync(plain, text);
        const a = await rowsOrFormatError(plain);
        if (a instanceof TraceFormatError) assert.ok(a.message.includes(plain), a.message);
        writeFileSync(zst, zstdCompress(text));
        const b = await rowsOrFormatError(zst);
        // Compression changes nothing but the file name in a message.
        if (typeof a === 'number') assert.equal(b, a);
        else assert.ok(b instanceof TraceFormatError && b.reason === a.reason, String(b));
      }),
      { numRuns: 40 },
    );
  }));

test('garbage in a .zst: not zstd, truncated, random bytes — one message naming the file', () =>
  withTempDir(async (dir) => {
    const plain = join(dir, 'p.csv');
    writeFileSync(plain, `${TRACE_HEADER}\n${'1,Write,4096,Tier-2,k,Prefill\n'.repeat(2000)}`);
    const full = join(dir, 'full.csv.zst');
    writeFileSync(full, zstdCompress(readFileSync(plain)));
    const notZstd = join(dir, 'text.csv.zst');
    writeFileSync(notZstd, `${TRACE_HEADER}\n`);
    const cut = join(dir, 'cut.csv.zst');
    writeFileSync(cut, readFileSync(full).subarray(0, 30));
    const magicThenJunk = join(dir, 'junk.csv');
    writeFileSync(magicThenJunk, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6, 7, 8]));
    for (const path of [notZstd, cut, magicThenJunk]) {
      const err = await rowsOrFormatError(path);
      assert.ok(err instanceof TraceFileError, `${path}: ${String(err)}`);
      assert.ok(err.message.startsWith(`I/O trace '${path}': cannot be decompressed (`), err.message);
      assert.ok(err.message.length < 600, err.message);
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
        writeFileSync(full, bytes);
        const r = await rowsOrFormatError(full);
        assert.ok(r instanceof TraceFormatError, `${bytes.length} random bytes read as ${String(r)} rows`);
      }),
      { numRuns: 25 },
    );
  }));

test('a FIFO is refused before it is opened (opening it would block for ever)', () =>
  withTempDir(async (dir) => {
    for (const name of ['fifo.csv', 'fifo.csv.zst']) {
      const fifo = join(dir, name);
      execFileSync('mkfifo', [fifo]);
      await assert.rejects(collect(fifo), {
        name: 'TraceFileError',
        message: `I/O trace '${fifo}': is a FIFO (named pipe), not a regular file (expected a CSV trace file, or a .zst of one)`,
      });
    }
    await assert.rejects(collect(dir), /is a directory, not a regular file/);
  }));

test('a record longer than MAX_RECORD_CHARS is refused, not buffered (no line break, or an unclosed quote)', async () => {
  const chunk = 'x'.repeat(64 * 1024);
  const chunks = (first: string): Readable =>
    Readable.from([first, ...Array.from({ length: MAX_RECORD_CHARS / chunk.length + 2 }, () => chunk)]);
  const read = async (first: string): Promise<number> => {
    let records = 0;
    for await (const r of splitRecords(chunks(first), 'f.csv')) records += r.text === '' ? 0 : 1;
    return records;
  };
  await assert.rejects(read(`${TRACE_HEADER}\n`), {
    name: 'TraceFormatError',
    message: new RegExp(`^f\\.csv:2: a record longer than ${MAX_RECORD_CHARS} characters; not an I/O trace`),
  });
  await assert.rejects(
    read(`${TRACE_HEADER}\n1,Write,1,Tier-2,"open\n`),
    /f\.csv:2: a record longer than \d+ characters \(an unclosed quote\?\)/,
  );
});

test('splitRecords is linear: a quoted field over many lines is counted once per line break', async () => {
  const key = `"${'a\n'.repeat(50_000)}"`;
  const records: string[] = [];
  for await (const r of splitRecords(Readable.from([`h\n1,Write,1,Tier-2,${key},Prefill\nlast`]))) records.push(r.text);
  assert.deepEqual(
    records.map((r) => r.length),
    [1, 25 + key.length, 4],
  );
});
