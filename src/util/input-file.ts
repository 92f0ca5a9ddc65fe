// The one check every input file goes through before it is opened (config, ShareGPT dataset, BurstGPT
// trace, I/O trace): it must be a regular file, and not larger than its reader accepts. The check is a
// stat(2) of the path, never an fstat after open: opening a FIFO for reading blocks until a writer
// appears (forever, and on libuv's threadpool a blocked open also keeps the process from exiting), and a
// character device such as /dev/zero never ends. Each reader turns the problem into its own typed error.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

export interface InputFileLimits {
  /** Larger files are refused before they are read (undefined: any size, e.g. a streamed reader). */
  readonly maxBytes?: number;
}

/** What an input path is: a regular file of `size` bytes, or the reason it cannot be read. */
export type InputFileCheck = { readonly ok: true; readonly size: number } | { readonly ok: false; readonly problem: string };

function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The size in readable units, e.g. "3.5 MiB (3670016 bytes)". */
export function formatBytes(n: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (n < 1024) return `${n} bytes`;
  let v = n;
  let unit = 'bytes';
  for (const u of units) {
    if (v < 1024) break;
    v /= 1024;
    unit = u;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit} (${n} bytes)`;
}

/** Judges the stat of an input file against the limits. */
export function judgeStats(s: Stats, limits: InputFileLimits = {}): InputFileCheck {
  if (!s.isFile()) {
    const kind = kindOf(s);
    return { ok: false, problem: kind === 'not a regular file' ? 'is not a regular file' : `is ${kind}, not a regular file` };
  }
  if (limits.maxBytes !== undefined && s.size > limits.maxBytes)
    return { ok: false, problem: `is ${formatBytes(s.size)}; at most ${formatBytes(limits.maxBytes)} are accepted` };
  return { ok: true, size: s.size };
}

/** The reason stat (or open, or read) failed, in words. */
export function statProblem(e: unknown): string {
  const code = e instanceof Error && 'code' in e ? String(e.code) : '';
  if (code === 'ENOENT') return 'file not found';
  if (code === 'ENOTDIR') return 'file not found (a component of the path is not a directory)';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENAMETOOLONG') return 'the path is too long';
  if (code === 'ELOOP') return 'too many symbolic links in the path';
  return `cannot be read (${code !== '' ? code : 'unknown error'})`;
}

/** Stats `path` (following symlinks) without opening it. */
export function checkInputFile(path: string, limits: InputFileLimits = {}): InputFileCheck {
  let s: Stats;
  try {
    s = statSync(path);
  } catch (e: unknown) {
    return { ok: false, problem: statProblem(e) };
  }
  return judgeStats(s, limits);
}

/** checkInputFile without blocking the event loop (for readers that run during the measured phase). */
export async function checkInputFileAsync(path: string, limits: InputFileLimits = {}): Promise<InputFileCheck> {
  let s: Stats;
  try {
    s = await stat(path);
  } catch (e: unknown) {
    return { ok: false, problem: statProblem(e) };
  }
  return judgeStats(s, limits);
}

/** What reading an input file gave: its text, or the reason it was not read. */
export type InputText = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: string };

export interface InputReadOptions extends InputFileLimits {
  /** Refuse a symbolic link instead of following it (inputs found inside a directory others can write). */
  readonly noFollow?: boolean;
}

/** An input file opened for reading: its descriptor and size, or the reason it was not opened. */
export type OpenedInput =
  { readonly ok: true; readonly fd: number; readonly size: number } | { readonly ok: false; readonly problem: string };

const openFlags = (options: InputReadOptions): number =>
  constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow === true ? constants.O_NOFOLLOW : 0);

function openProblem(e: unknown, options: InputReadOptions): string {
  const code = e instanceof Error && 'code' in e ? String(e.code) : '';
  return options.noFollow === true && code === 'ELOOP' ? 'is a symbolic link (not followed)' : statProblem(e);
}

/**
 * Opens a regular file for reading, judging what was opened rather than what the path named a moment
 * before (a check by path then an open by path lets the file be swapped for a FIFO in between): the
 * open is non-blocking (a FIFO opens at once and is then refused by fstat, never waited on; O_NONBLOCK
 * changes nothing for a regular file's reads), O_NOFOLLOW when asked. The caller closes the fd.
 */
export function openInputFile(path: string, options: InputReadOptions = {}): OpenedInput {
  let fd: number;
  try {
    fd = openSync(path, openFlags(options));
  } catch (e: unknown) {
    return { ok: false, problem: openProblem(e, options) };
  }
  try {
    const judged = judgeStats(fstatSync(fd), options);
    if (judged.ok) return { ok: true, fd, size: judged.size };
    closeSync(fd);
    return judged;
  } catch (e: unknown) {
    closeSync(fd);
    return { ok: false, problem: statProblem(e) };
  }
}

/** openInputFile without blocking the event loop. The caller closes the handle. */
export async function openInputFileAsync(
  path: string,
  options: InputReadOptions = {},
): Promise<{ readonly ok: true; readonly file: FileHandle; readonly size: number } | { readonly ok: false; readonly problem: string }> {
  let file: FileHandle;
  try {
    file = await open(path, openFlags(options));
  } catch (e: unknown) {
    return { ok: false, problem: openProblem(e, options) };
  }
  try {
    const judged = judgeStats(await file.stat(), options);
    if (judged.ok) return { ok: true, file, size: judged.size };
    await file.close();
    return judged;
  } catch (e: unknown) {
    await file.close();
    return { ok: false, problem: statProblem(e) };
  }
}

/** Bytes the buffer grows by at least while a file is read to its end. */
const READ_STEP_BYTES = 64 * 1024;

/**
 * The bytes of an input file read to its end, not to the size fstat gave: procfs, sysfs and some FUSE
 * file systems report 0 (or a guess) for files that hold data. Room is offered for one byte past the
 * cap, so a file that holds more (or grows past it meanwhile) is refused rather than read without end.
 */
class ToEnd {
  private buffer: Buffer;
  private got = 0;

  constructor(
    size: number,
    private readonly maxBytes: number,
  ) {
    this.buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
  }

  /** Where the next read goes; undefined once more than the cap has been read. */
  room(): { readonly buffer: Buffer; readonly offset: number; readonly length: number } | undefined {
    if (this.got > this.maxBytes) return undefined;
    if (this.got === this.buffer.length) {
      const grown = Buffer.alloc(Math.min(this.buffer.length + Math.max(this.buffer.length, READ_STEP_BYTES), this.maxBytes + 1));
      this.buffer.copy(grown, 0, 0, this.got);
      this.buffer = grown;
    }
    return { buffer: this.buffer, offset: this.got, length: this.buffer.length - this.got };
  }

  add(n: number): void {
    this.got += n;
  }

  text(): InputText {
    if (this.got <= this.maxBytes) return { ok: true, text: this.buffer.toString('utf8', 0, this.got) };
    return { ok: false, problem: `holds more than ${formatBytes(this.maxBytes)}, the most accepted` };
  }
}

/** Options of the whole-file readers: a cap is required, since the file is read to its end. */
export interface InputTextOptions extends InputReadOptions {
  readonly maxBytes: number;
}

/**
 * Reads a regular file's text through openInputFile (non-blocking open, fstat of what was opened) to
 * its end, at most `maxBytes`: a file of size 0 in fstat's words may hold data (procfs), and a file
 * that holds more than the cap, or grows past it meanwhile, is refused.
 */
export function readInputText(path: string, options: InputTextOptions): InputText {
  const opened = openInputFile(path, options);
  if (!opened.ok) return opened;
  const { fd } = opened;
  try {
    const bytes = new ToEnd(opened.size, options.maxBytes);
    for (let room = bytes.room(); room !== undefined; room = bytes.room()) {
      const n = readSync(fd, room.buffer, room.offset, room.length, null);
      if (n === 0) break;
      bytes.add(n);
    }
    return bytes.text();
  } catch (e: unknown) {
    return { ok: false, problem: statProblem(e) };
  } finally {
    closeSync(fd);
  }
}

/** readInputText without blocking the event loop: the same non-blocking, no-follow open, fstat check and cap. */
export async function readInputTextAsync(path: string, options: InputTextOptions): Promise<InputText> {
  const opened = await openInputFileAsync(path, options);
  if (!opened.ok) return opened;
  const { file } = opened;
  try {
    const bytes = new ToEnd(opened.size, options.maxBytes);
    for (let room = bytes.room(); room !== undefined; room = bytes.room()) {
      const { bytesRead } = await file.read(room.buffer, room.offset, room.length, null);
      if (bytesRead === 0) break;
      bytes.add(bytesRead);
    }
    return bytes.text();
  } catch (e: unknown) {
    return { ok: false, problem: statProblem(e) };
  } finally {
    await file.close();
  }
}
