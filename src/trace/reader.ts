// Streams the rows of an I/O trace: ours or the reference's (same columns, CRLF line ends, no Delete
// rows), plain or zstd-compressed. Compression is recognized by a `.zst` suffix or by the zstd magic
// bytes, and undone by the system zstd (see zstd.ts). Memory stays constant whatever the trace size;
// a malformed record throws TraceFormatError naming the file and the line it starts on.
import { TraceFormatError, ZstdError } from './errors.js';
import { checkHeader, parseRow, TRACE_HEADER } from './format.js';
import { checkInputFileAsync, openInputFileAsync, statProblem } from '../util/input-file.js';
import { excerpt } from '../util/excerpt.js';
import type { TraceRow } from './format.js';
import { DEFAULT_ZSTD_COMMAND, hasZstdSuffix, startZstd, startsWithZstdMagic } from './zstd.js';

/** What a valid trace looks like, for messages. */
const TRACE_EXAMPLE = `${TRACE_HEADER} then rows like 1700000000.000123,Write,1048576,Tier-2,user_1_turn_1,Prefill`;

/**
 * A trace file that cannot be read at all (missing, not a regular file, not decompressible). A
 * TraceFormatError, so every caller that reports bad trace input reports this too; its message names
 * the file and the problem, with no line number.
 */
export class TraceFileError extends TraceFormatError {
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(file, 0, reason);
    this.message = `I/O trace '${file}': ${reason}`;
    this.name = 'TraceFileError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

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

/** `"` characters in text[from, to). */
function quotesIn(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('"', from); i !== -1 && i < to; i = text.indexOf('"', i + 1)) count++;
  return count;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/**
 * A record longer than this is refused rather than buffered: no trace row is (its longest field is a
 * cache key of some dozens of characters), and a file without line breaks, or with an unclosed quote,
 * would otherwise be held whole in memory.
 */
export const MAX_RECORD_CHARS = 1024 * 1024;

/**
 * Splits decoded text into CSV records: LF or CRLF ends a record, except inside a quoted field (a
 * quoted Key may hold line breaks). Empty records are yielded too; the caller decides about them.
 * Linear: the quote parity of the record being read is kept as the text is scanned, never recounted.
 */
export async function* splitRecords(chunks: AsyncIterable<string>, file?: string): AsyncGenerator<TraceRecord> {
  let carry = '';
  let scanFrom = 0; // offset in `carry` before which no record end can be
  let odd = false; // an odd number of quotes in carry[0, scanFrom): inside a quoted field
  let line = 1;
  for await (const chunk of chunks) {
    const text = carry + chunk;
    let start = 0;
    let scan = scanFrom;
    for (let nl = text.indexOf('\n', scan); nl !== -1; nl = text.indexOf('\n', scan)) {
      if (quotesIn(text, scan, nl) % 2 === 1) odd = !odd;
      scan = nl + 1;
      if (odd) continue; // the LF is inside a quoted field
      const record = text.slice(start, nl);
      yield { text: record.endsWith('\r') ? record.slice(0, -1) : record, line };
      line += countNewlines(record) + 1;
      start = scan;
    }
    carry = text.slice(start);
    scanFrom = scan - start;
    if (carry.length > MAX_RECORD_CHARS)
      throw new TraceFormatError(
        file,
        line,
        `a record longer than ${MAX_RECORD_CHARS} characters${odd ? ' (an unclosed quote?)' : ''}; not an I/O trace (expected CSV rows such as ${TRACE_EXAMPLE})`,
      );
  }
  if (carry === '') return;
  if (odd !== (quotesIn(carry, scanFrom, carry.length) % 2 === 1))
    throw new TraceFormatError(file, line, 'unterminated quoted field at the end of the file');
  yield { text: carry.endsWith('\r') ? carry.slice(0, -1) : carry, line };
}

/** The file's text, opened once without blocking and judged on what was opened (a FIFO swapped in since the check is refused). */
async function plainSource(path: string): Promise<TextSource> {
  const opened = await openInputFileAsync(path);
  if (!opened.ok) throw new TraceFileError(path, `${opened.problem} (expected a CSV trace file, or a .zst of one)`);
  const stream = opened.file.createReadStream({ encoding: 'utf8', highWaterMark: 256 * 1024 });
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

/** The decompressor's failure as input trouble: the file is not (complete) zstd, or zstd is missing. */
function zstdProblem(path: string, err: Error): TraceFileError {
  const said = excerpt(err.message.replace(/\s+/g, ' '), 300);
  return new TraceFileError(
    path,
    `cannot be decompressed (${said}); expected a zstd-compressed trace (zstd -d must open it) or a plain CSV trace`,
    {
      cause: err,
    },
  );
}

/**
 * The rows of the trace at `path`, read lazily. Blank lines are skipped. Every problem with the input
 * is a TraceFormatError (a TraceFileError when the file as a whole cannot be read): it is checked to
 * be a regular file before anything opens it (opening a FIFO blocks), and a zstd failure is reported
 * as such.
 */
export async function* readTrace(path: string, opts: ReadTraceOptions = {}): AsyncGenerator<TraceRow> {
  const checked = await checkInputFileAsync(path);
  if (!checked.ok) throw new TraceFileError(path, `${checked.problem} (expected a CSV trace file, or a .zst of one)`);
  let compressed: boolean;
  try {
    compressed = hasZstdSuffix(path) || (await startsWithZstdMagic(path));
  } catch (e: unknown) {
    throw new TraceFileError(path, `cannot be read: ${statProblem(e)}`, { cause: e });
  }
  let source: TextSource;
  try {
    source = compressed ? await zstdSource(path, opts.zstdCommand ?? DEFAULT_ZSTD_COMMAND) : await plainSource(path);
  } catch (e: unknown) {
    if (e instanceof ZstdError) throw zstdProblem(path, e);
    throw e;
  }
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
      const failed = await source.failure();
      if (failed !== null) throw zstdProblem(path, failed);
      if (err instanceof TraceFormatError) throw err;
      throw new TraceFileError(path, `cannot be read: ${statProblem(err)}`, { cause: err });
    }
    const failed = await source.failure();
    if (failed !== null) throw zstdProblem(path, failed);
    if (!header) throw new TraceFormatError(path, 1, `empty file: the header line is missing (expected ${TRACE_EXAMPLE})`);
  } finally {
    source.dispose();
  }
}
