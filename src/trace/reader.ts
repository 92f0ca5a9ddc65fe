// Streams the rows of an I/O trace: ours or the reference's (same columns, CRLF line ends, no Delete
// rows), plain or zstd-compressed. Compression is recognized by a `.zst` suffix or by the zstd magic
// bytes, and undone by the system zstd (see zstd.ts). Memory stays constant whatever the trace size;
// a malformed record throws TraceFormatError naming the file and the line it starts on.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { TraceFormatError, ZstdError } from './errors.js';
import { checkHeader, parseRow } from './format.js';
import type { TraceRow } from './format.js';
import { DEFAULT_ZSTD_COMMAND, ZSTD_MAGIC, hasZstdSuffix, isZstdMagic, startZstd } from './zstd.js';

export interface ReadTraceOptions {
  /** The zstd executable. Default `zstd` from PATH. */
  readonly zstdCommand?: string;
}

/** A CSV record and the physical line it starts on. */
export interface TraceRecord {
  readonly text: string;
  readonly line: number;
}

/** Decoded text of a trace file, and how to learn whether producing it failed. */
interface TextSource {
  readonly chunks: AsyncIterable<string>;
  /** After the chunks ended: the decompressor's failure, if any. Null while it is still running. */
  failure(): Promise<Error | null>;
  dispose(): void;
}

function oddQuotes(text: string): boolean {
  let count = 0;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) count++;
  return count % 2 === 1;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/**
 * Splits decoded text into CSV records: LF or CRLF ends a record, except inside a quoted field (a
 * quoted Key may hold line breaks). Empty records are yielded too; the caller decides about them.
 */
export async function* splitRecords(chunks: AsyncIterable<string>, file?: string): AsyncGenerator<TraceRecord> {
  let carry = '';
  let scanFrom = 0; // offset in `carry` before which no record end can be
  let line = 1;
  for await (const chunk of chunks) {
    const text = carry + chunk;
    let start = 0;
    let scan = scanFrom;
    for (let nl = text.indexOf('\n', scan); nl !== -1; nl = text.indexOf('\n', scan)) {
      const record = text.slice(start, nl);
      scan = nl + 1;
      if (record.includes('"') && oddQuotes(record)) continue; // the LF is inside a quoted field
      yield { text: record.endsWith('\r') ? record.slice(0, -1) : record, line };
      line += countNewlines(record) + 1;
      start = scan;
    }
    carry = text.slice(start);
    scanFrom = scan - start;
  }
  if (carry === '') return;
  if (oddQuotes(carry)) throw new TraceFormatError(file, line, 'unterminated quoted field at the end of the file');
  yield { text: carry.endsWith('\r') ? carry.slice(0, -1) : carry, line };
}

async function startsWithZstdMagic(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = new Uint8Array(ZSTD_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return isZstdMagic(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

function plainSource(path: string): TextSource {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  return { chunks: stream, failure: async () => null, dispose: () => stream.destroy() };
}

async function zstdSource(path: string, command: string): Promise<TextSource> {
  const proc = await startZstd(command, ['-d', '-c', '-q', '--', path], ['ignore', 'pipe', 'pipe']);
  const stdout = proc.child.stdout;
  if (stdout === null) throw new ZstdError('zstd started without a stdout pipe');
  stdout.setEncoding('utf8');
  return {
    chunks: stdout,
    // Only once its output has ended is zstd about to exit; earlier, waiting could deadlock.
    failure: async () => (stdout.readableEnded ? proc.outcome : null),
    dispose: () => {
      stdout.destroy();
      if (!proc.exited()) proc.child.kill();
    },
  };
}

/** The rows of the trace at `path`, read lazily. Blank lines are skipped. */
export async function* readTrace(path: string, opts: ReadTraceOptions = {}): AsyncGenerator<TraceRow> {
  const compressed = hasZstdSuffix(path) || (await startsWithZstdMagic(path));
  const source = compressed ? await zstdSource(path, opts.zstdCommand ?? DEFAULT_ZSTD_COMMAND) : plainSource(path);
  try {
    let header = false;
    try {
      for await (const record of splitRecords(source.chunks, path)) {
        if (!header) {
          checkHeader(record.text, record.line, path);
          header = true;
        } else if (record.text !== '') {
          yield parseRow(record.text, record.line, path);
        }
      }
    } catch (err) {
      // A truncated or corrupt .zst shows up as a cut-off last line; report the real cause.
      throw (await source.failure()) ?? err;
    }
    const failed = await source.failure();
    if (failed !== null) throw failed;
    if (!header) throw new TraceFormatError(path, 1, 'empty file: the header line is missing');
  } finally {
    source.dispose();
  }
}
