// BurstGPT trace replay source (docs/reference-compat.md#rc-33): find the trace files, stream their rows, and turn them
// into a lazily pulled timeline of (row, pass, index, scheduled time). The real trace has millions
// of rows, so nothing here holds more than one read chunk (64 KiB) of a file: lines are split from
// the file stream's own async iterator, which reads the next chunk only when the consumer asks for
// it, so a paced (slow) consumer never makes the file pile up in memory.
//
// BurstGPT files are plain one-record-per-line CSV (Timestamp,Model,Request tokens,Response tokens,
// Total tokens,Log Type): lines come from util/text-lines.ts with their exact file line numbers for
// the skipped-row report, fields from util/csv.ts; a quoted field spanning lines is not supported, its
// pieces are skipped and counted like any other malformed row. Globs are util/glob.ts.
//
// Differences from the reference, on purpose: unparsable rows are counted and reported (it skipped
// them silently); the timeline gives absolute schedule times rather than per-row sleeps, so oversleep
// does not accumulate; a backwards step in time (a later file restarting its clock) costs no delay,
// which is what the reference's "sleep only when positive" did.
import { splitCsvLine } from '../util/csv.js';
import { messageOf } from '../util/errors.js';
import { excerpt } from '../util/excerpt.js';
import { expandPath } from '../util/glob.js';
import type { PathProblem } from '../util/glob.js';
import { readTextLines } from '../util/text-lines.js';
import { NonDecreasingTimestamps, pacedTimeline } from './paced-timeline.js';
import type { PacedReplayOptions } from './paced-timeline.js';
import type { LineReadProblem } from '../util/text-lines.js';

/** A trace that cannot be found or read as BurstGPT CSV; the CLI reports it and exits 2. */
export class TraceError extends Error {
  readonly path: string;

  constructor(message: string, path: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TraceError';
    this.path = path;
  }
}

const VALID_TRACE_PATHS = 'a BurstGPT CSV file, a directory holding *.csv files, or a glob such as data/BurstGPT_*.csv';

// ---------------------------------------------------------------------------------------------
// Finding the files

/** Each way a path names no files, in BurstGPT's words. */
function pathMessage(spec: string, problem: PathProblem): string {
  switch (problem.kind) {
    case 'empty-directory':
      return `BurstGPT trace directory "${spec}" holds no *.csv files (expected ${VALID_TRACE_PATHS})`;
    case 'not-file-or-directory':
      return `BurstGPT trace path "${spec}" is not a regular file or directory (expected ${VALID_TRACE_PATHS})`;
    case 'not-found':
      return `BurstGPT trace not found: "${spec}" (expected ${VALID_TRACE_PATHS})`;
    case 'glob-in-directory':
      return `BurstGPT trace glob "${spec}": wildcards are supported in the file name only, not in directories (expected ${VALID_TRACE_PATHS})`;
    case 'glob-directory-missing':
      return `BurstGPT trace glob "${spec}": directory "${problem.dir}" not found (expected ${VALID_TRACE_PATHS})`;
    case 'no-match':
      return `BurstGPT trace glob "${spec}" matches no files (expected ${VALID_TRACE_PATHS})`;
  }
}

/**
 * `--burst-trace-path` → the files to replay, in replay order: a file → [it]; a directory → its
 * `*.csv` files sorted by name; a glob (metacharacters in the last path component only) → the
 * matching files sorted (util/glob.ts). An existing path is taken literally even if it contains `[`.
 */
export async function resolveBurstFiles(pathOrDirOrGlob: string): Promise<string[]> {
  const expanded = await expandPath(pathOrDirOrGlob, '*.csv');
  if (!expanded.ok) throw new TraceError(pathMessage(pathOrDirOrGlob, expanded.problem), pathOrDirOrGlob);
  return expanded.files;
}

// ---------------------------------------------------------------------------------------------
// Reading rows

/** One valid trace row; `line` is the 1-based line in `file` (the header is line 1). */
export interface BurstRow {
  readonly timestampS: number;
  readonly requestTokens: number;
  readonly responseTokens: number;
  readonly totalTokens: number;
  readonly file: string;
  readonly line: number;
}

export interface SkippedRowExample {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
}

/** Filled in place while rows are read: valid rows yielded, rows skipped, the first few skips. */
export interface BurstReadStats {
  rows: number;
  skipped: number;
  readonly skippedExamples: SkippedRowExample[];
}

export const MAX_SKIPPED_EXAMPLES = 5;
const READ_CHUNK_BYTES = 64 * 1024;
/** A "line" longer than this is not CSV text: the file is rejected rather than buffered. */
const MAX_LINE_CHARS = 1024 * 1024;

export function createBurstReadStats(): BurstReadStats {
  return { rows: 0, skipped: 0, skippedExamples: [] };
}

/** Each way a file's lines stop early, in BurstGPT's words. */
function lineProblem(file: string, p: LineReadProblem): TraceError {
  switch (p.kind) {
    case 'unusable':
      return new TraceError(`cannot open BurstGPT trace file "${file}": ${p.problem}`, file);
    case 'open':
      return new TraceError(`cannot open BurstGPT trace file "${file}": ${messageOf(p.cause)}`, file, { cause: p.cause });
    case 'too-long':
      return new TraceError(
        `BurstGPT trace file "${file}": line ${p.line} is longer than ${p.maxLineChars} characters; not a CSV trace`,
        file,
      );
    case 'read':
      return new TraceError(`cannot read BurstGPT trace file "${file}": ${messageOf(p.cause)}`, file, { cause: p.cause });
  }
}

/**
 * The file's lines, one read chunk at a time. Checked without opening (util/text-lines.ts): file,
 * directory and glob resolution only select regular files, but a file can change between resolution
 * and a later pass, and opening a FIFO would block.
 */
function readLines(file: string): AsyncGenerator<string> {
  return readTextLines(file, { chunkBytes: READ_CHUNK_BYTES, maxLineChars: MAX_LINE_CHARS, fail: (p) => lineProblem(file, p) });
}

/** Column positions from a header; Timestamp and Total tokens are optional. */
interface BurstColumns {
  readonly count: number;
  readonly timestamp: number | undefined;
  readonly request: number;
  readonly response: number;
  readonly total: number | undefined;
}

function columnsOf(headerLine: string, file: string): BurstColumns {
  const text = headerLine.replace(/^\uFEFF/, '');
  const names = (splitCsvLine(text) ?? [text]).map((n) => n.trim());
  const find = (name: string): number | undefined => {
    const i = names.indexOf(name);
    return i === -1 ? undefined : i;
  };
  const request = find('Request tokens');
  const response = find('Response tokens');
  if (request === undefined || response === undefined) {
    const missing = [request === undefined ? '"Request tokens"' : '', response === undefined ? '"Response tokens"' : ''].filter(Boolean);
    const found = excerpt(names.map((n) => JSON.stringify(n)).join(', '), 200);
    throw new TraceError(
      `BurstGPT trace file "${file}" has no ${missing.join(' or ')} column${missing.length > 1 ? 's' : ''} (columns found: ${found}); expected a header like Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`,
      file,
    );
  }
  return { count: names.length, timestamp: find('Timestamp'), request, response, total: find('Total tokens') };
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

function parseNumber(column: string, raw: string, integer: boolean): Parsed<number> {
  const text = raw.trim();
  const shown = JSON.stringify(excerpt(raw));
  if (!DECIMAL.test(text)) return { ok: false, reason: `${column}: ${shown} is not a number` };
  const value = Number(text);
  if (!Number.isFinite(value)) return { ok: false, reason: `${column}: ${shown} is out of range` };
  if (value < 0) return { ok: false, reason: `${column}: ${excerpt(text)} is negative` };
  if (integer && !Number.isSafeInteger(value)) return { ok: false, reason: `${column}: ${excerpt(text)} is not a whole token count` };
  return { ok: true, value };
}

/** A data line → a row, or why it is skipped. Empty Timestamp → 0; empty/absent Total → sum. */
function parseRow(line: string, columns: BurstColumns, file: string, lineNo: number): Parsed<BurstRow> {
  const fields = splitCsvLine(line);
  if (fields === undefined) return { ok: false, reason: 'malformed quoted field' };
  if (fields.length !== columns.count) return { ok: false, reason: `expected ${columns.count} fields, found ${fields.length}` };
  const tsText = columns.timestamp === undefined ? '' : (fields[columns.timestamp] ?? '');
  const ts = tsText.trim() === '' ? ({ ok: true, value: 0 } as const) : parseNumber('Timestamp', tsText, false);
  if (!ts.ok) return ts;
  const req = parseNumber('Request tokens', fields[columns.request] ?? '', true);
  if (!req.ok) return req;
  const resp = parseNumber('Response tokens', fields[columns.response] ?? '', true);
  if (!resp.ok) return resp;
  const totalText = columns.total === undefined ? '' : (fields[columns.total] ?? '');
  const total =
    totalText.trim() === '' ? ({ ok: true, value: req.value + resp.value } as const) : parseNumber('Total tokens', totalText, true);
  if (!total.ok) return total;
  return {
    ok: true,
    value: { timestampS: ts.value, requestTokens: req.value, responseTokens: resp.value, totalTokens: total.value, file, line: lineNo },
  };
}

function recordSkip(stats: BurstReadStats, example: SkippedRowExample): void {
  stats.skipped++;
  if (stats.skippedExamples.length < MAX_SKIPPED_EXAMPLES) stats.skippedExamples.push(example);
}

/**
 * The valid rows of the files, in file order then line order, read lazily in constant memory.
 * Each file keeps its own timestamps (see `monotonicTimestamps`). Blank lines are ignored; other
 * unparsable rows are skipped and counted in `stats`; rows with 0 response tokens (failed requests
 * in BurstGPT) are kept. A missing/unreadable file, an empty file, or a header without `Request
 * tokens` / `Response tokens` throws TraceError when that file is reached.
 */
export async function* readBurstRows(files: readonly string[], stats: BurstReadStats = createBurstReadStats()): AsyncGenerator<BurstRow> {
  for (const file of files) {
    let columns: BurstColumns | undefined;
    let lineNo = 0;
    for await (const line of readLines(file)) {
      lineNo++;
      if (columns === undefined) {
        columns = columnsOf(line, file);
        continue;
      }
      if (line.trim() === '') continue;
      const parsed = parseRow(line, columns, file, lineNo);
      if (parsed.ok) {
        stats.rows++;
        yield parsed.value;
      } else recordSkip(stats, { file, line: lineNo, reason: parsed.reason });
    }
    if (columns === undefined) throw new TraceError(`BurstGPT trace file "${file}" is empty (no header line)`, file);
  }
}

// ---------------------------------------------------------------------------------------------
// Time across files and passes

/** The rows with `timestampS` made non-decreasing across file boundaries (see NonDecreasingTimestamps). */
export async function* monotonicTimestamps(rows: AsyncIterable<BurstRow>): AsyncGenerator<BurstRow> {
  const timestamps = new NonDecreasingTimestamps();
  for await (const row of rows) yield { ...row, timestampS: timestamps.next(row.timestampS) };
}

/** `--trace-speedup` (trace seconds per replay second) and `--replay-cycles`. */
export type BurstReplayOptions = PacedReplayOptions;

export interface BurstTimelineItem {
  /** The row as read (its own timestamp, not the adjusted one). */
  readonly row: BurstRow;
  /** 0-based pass over the files. */
  readonly pass: number;
  /** 0-based sequence number across all passes: unique per request of the run. */
  readonly index: number;
  /** When to issue it, in ms from the replay start; non-decreasing across rows, files and passes. */
  readonly scheduledAtMs: number;
}

/**
 * The replay schedule, pulled lazily: every valid row of every pass, in order, with
 * scheduledAtMs = pass offset + (adjusted ts − first adjusted ts of the pass) × 1000 / speedup.
 * Timestamps restart at each pass and the next pass's first row is due when the previous pass's
 * last row was (the reference reset prev_ts, so no sleep between passes). The consumer should wait
 * until start + scheduledAtMs (an absolute time, so late wake-ups do not add up), in short slices
 * if it must honour a stop. A pass with no valid rows ends the timeline, even with replayCycles 0.
 * `stats` describe the trace itself: they are filled during the first pass only, since later passes
 * re-read the same files.
 */
export async function* burstTimeline(
  files: readonly string[],
  options: BurstReplayOptions,
  stats: BurstReadStats = createBurstReadStats(),
): AsyncGenerator<BurstTimelineItem> {
  const rows = (pass: number): AsyncIterable<BurstRow> => readBurstRows(files, pass === 0 ? stats : createBurstReadStats());
  for await (const { record, ...when } of pacedTimeline(rows, (r) => r.timestampS, 1000, options)) yield { row: record, ...when };
}
