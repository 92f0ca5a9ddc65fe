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
export async function* readTextLines(file: string, options: TextLinesOptions): AsyncGenerator<string> {
  const stream = await openChunks(file, options);
  try {
    yield* splitTextLines(stream, options);
  } finally {
    stream.destroy();
  }
}

/** readTextLines a read chunk at a time: the complete lines of each chunk in one array (some may be empty). */
export async function* readTextLineBatches(file: string, options: TextLinesOptions): AsyncGenerator<string[]> {
  const stream = await openChunks(file, options);
  try {
    yield* splitTextLineBatches(stream, options);
  } finally {
    stream.destroy();
  }
}

/** The file as a stream of text chunks, once it is known to be a regular file. */
async function openChunks(file: string, options: TextLinesOptions): Promise<AsyncIterable<string> & { destroy(): void }> {
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
  return handle.createReadStream({ encoding: 'utf8', highWaterMark: options.chunkBytes }) as AsyncIterable<string> & { destroy(): void };
}

/**
 * The lines in a stream of text chunks, a chunk at a time: a line ends at `\n` (a `\r` before it
 * dropped), the last line may have no end, and a partial line past `maxLineChars` is refused.
 */
class LineSplitter {
  private data = '';
  private start = 0;
  private lineNo = 0;

  constructor(private readonly options: Omit<TextLinesOptions, 'chunkBytes'>) {}

  /** Adds a chunk after the partial line left by the last. */
  feed(chunk: string): void {
    this.data = this.data.slice(this.start) + chunk;
    this.start = 0;
  }

  /** The next complete line, or undefined when the chunks fed so far hold no more. */
  next(): string | undefined {
    const { data, start } = this;
    const nl = data.indexOf('\n', start);
    if (nl === -1) return undefined;
    this.lineNo++;
    this.start = nl + 1;
    return data.charCodeAt(nl - 1) === 13 && nl > start ? data.slice(start, nl - 1) : data.slice(start, nl);
  }

  /** After a chunk's lines: the error for a partial line past maxLineChars, or undefined. */
  tooLong(): Error | undefined {
    if (this.data.length - this.start <= this.options.maxLineChars) return undefined;
    return this.options.fail({ kind: 'too-long', line: this.lineNo + 1, maxLineChars: this.options.maxLineChars });
  }

  /** At the end: the last line when it had no line end, else undefined. */
  last(): string | undefined {
    const rest = this.data.slice(this.start);
    if (rest.length === 0) return undefined;
    return rest.endsWith('\r') ? rest.slice(0, -1) : rest;
  }
}

/**
 * The lines of a stream of text chunks (a file, a decompressor's output), without their `\n` / `\r\n`;
 * a line past `maxLineChars` or a failing stream throws `options.fail(problem)`.
 */
export async function* splitTextLines(
  chunks: AsyncIterable<string>,
  options: Omit<TextLinesOptions, 'chunkBytes'>,
): AsyncGenerator<string> {
  const lines = new LineSplitter(options);
  let tooLong: Error | undefined;
  try {
    for await (const chunk of chunks) {
      lines.feed(chunk);
      for (let line = lines.next(); line !== undefined; line = lines.next()) yield line;
      tooLong = lines.tooLong();
      if (tooLong !== undefined) throw tooLong;
    }
    const last = lines.last();
    if (last !== undefined) yield last;
  } catch (err) {
    if (err === tooLong) throw err;
    throw options.fail({ kind: 'read', cause: err });
  }
}

/**
 * splitTextLines a chunk at a time: the lines a chunk completes, in one array (none when it completes
 * none), so a reader that keeps up pays the generator's promises per chunk, not per line. (The
 * one-at-a-time readers do not flatten these: a batch holds a chunk's line strings at once.)
 */
export async function* splitTextLineBatches(
  chunks: AsyncIterable<string>,
  options: Omit<TextLinesOptions, 'chunkBytes'>,
): AsyncGenerator<string[]> {
  const lines = new LineSplitter(options);
  let tooLong: Error | undefined;
  try {
    for await (const chunk of chunks) {
      lines.feed(chunk);
      const batch: string[] = [];
      for (let line = lines.next(); line !== undefined; line = lines.next()) batch.push(line);
      if (batch.length > 0) yield batch;
      tooLong = lines.tooLong();
      if (tooLong !== undefined) throw tooLong;
    }
    const last = lines.last();
    if (last !== undefined) yield [last];
  } catch (err) {
    if (err === tooLong) throw err;
    throw options.fail({ kind: 'read', cause: err });
  }
}
