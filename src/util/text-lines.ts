// A text file's lines streamed one read chunk at a time, for traces with millions of lines: lines are
// split from the file stream's own async iterator, which reads the next chunk only when the consumer
// asks for it, so a paced (slow) consumer never makes the file pile up in memory. Each reader turns a
// problem into its own typed error and words.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { checkInputFileAsync, judgeStats } from './input-file.js';

/** Why the lines stopped; `line` is 1-based. */
export type LineReadProblem =
  /** Not a regular file (checked without opening it), with the check's words. */
  | { readonly kind: 'unusable'; readonly problem: string }
  | { readonly kind: 'open'; readonly cause: unknown }
  /** A line past `maxLineChars`: not a line-oriented text file. */
  | { readonly kind: 'too-long'; readonly line: number; readonly maxLineChars: number }
  | { readonly kind: 'read'; readonly cause: unknown };

export interface TextLinesOptions {
  /** Bytes read at a time. */
  readonly chunkBytes: number;
  /** A line longer than this is refused rather than buffered. */
  readonly maxLineChars: number;
  fail(problem: LineReadProblem): Error;
}

/** The file's lines without their `\n` / `\r\n`, streamed; a problem throws `options.fail(problem)`. */
export function readTextLines(file: string, options: TextLinesOptions): AsyncGenerator<string> {
  return eachLine(readTextLineBatches(file, options));
}

/** readTextLines a read chunk at a time: the complete lines of each chunk in one array (some may be empty). */
export async function* readTextLineBatches(file: string, options: TextLinesOptions): AsyncGenerator<string[]> {
  // Checked without opening: opening a FIFO would block.
  const checked = await checkInputFileAsync(file);
  if (!checked.ok) throw options.fail({ kind: 'unusable', problem: checked.problem });
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO swapped in since the check opens at once, and what was opened is judged below.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw options.fail({ kind: 'open', cause: err });
  }
  const opened = judgeStats(await handle.stat());
  if (!opened.ok) {
    await handle.close();
    throw options.fail({ kind: 'unusable', problem: opened.problem });
  }
  const stream = handle.createReadStream({ encoding: 'utf8', highWaterMark: options.chunkBytes });
  try {
    yield* splitTextLineBatches(stream as AsyncIterable<string>, options);
  } finally {
    stream.destroy();
  }
}

/**
 * The lines of a stream of text chunks (a file, a decompressor's output), without their `\n` / `\r\n`;
 * a line past `maxLineChars` or a failing stream throws `options.fail(problem)`.
 */
export function splitTextLines(chunks: AsyncIterable<string>, options: Omit<TextLinesOptions, 'chunkBytes'>): AsyncGenerator<string> {
  return eachLine(splitTextLineBatches(chunks, options));
}

/**
 * splitTextLines a chunk at a time: the lines a chunk completes, in one array (none when it completes
 * none), so a reader that keeps up pays the generator's promises per chunk, not per line.
 */
export async function* splitTextLineBatches(
  chunks: AsyncIterable<string>,
  options: Omit<TextLinesOptions, 'chunkBytes'>,
): AsyncGenerator<string[]> {
  let partial = '';
  let lineNo = 0;
  let tooLong: Error | undefined;
  try {
    for await (const chunk of chunks) {
      const data = partial + chunk;
      const lines: string[] = [];
      let start = 0;
      for (let nl = data.indexOf('\n'); nl !== -1; nl = data.indexOf('\n', start)) {
        lines.push(data.charCodeAt(nl - 1) === 13 && nl > start ? data.slice(start, nl - 1) : data.slice(start, nl));
        start = nl + 1;
      }
      lineNo += lines.length;
      if (lines.length > 0) yield lines;
      partial = data.slice(start);
      if (partial.length > options.maxLineChars) {
        tooLong = options.fail({ kind: 'too-long', line: lineNo + 1, maxLineChars: options.maxLineChars });
        throw tooLong;
      }
    }
    if (partial.length > 0) yield [partial.endsWith('\r') ? partial.slice(0, -1) : partial];
  } catch (err) {
    if (err === tooLong) throw err;
    throw options.fail({ kind: 'read', cause: err });
  }
}

/** One line at a time from batches of lines. */
export async function* eachLine(batches: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  for await (const lines of batches) for (const line of lines) yield line;
}
