// Where the trace writer's batches go: a plain file, or a zstd process whose output is the file.
// Both are Node Writables underneath; this hides their write callbacks and the asynchronous ways a
// stream fails behind awaitable calls, and remembers the first failure so none is lost.
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { startZstd } from './zstd.js';
import type { ZstdProcess } from './zstd.js';

export interface ByteSink {
  /** Resolves once `chunk` has been written (the caller may then reuse it); rejects on failure. */
  write(chunk: Uint8Array): Promise<void>;
  /** Flushes and finalizes (closes the file, ends the zstd frame); rejects with the first failure. */
  end(): Promise<void>;
  /**
   * Gives up after a failure: releases the file and stops the process, never throws. Resolves with
   * the root cause when the sink knows a better one than the stream error (zstd's own message).
   */
  abort(): Promise<Error | null>;
}

const ABORT_GRACE_MS = 2000;

/**
 * Opens `path` for writing (created or truncated), creating its parent directories; never through a
 * symlink at `path` (ELOOP): in a directory others can write, a planted link would make the trace
 * overwrite the link's target.
 */
export async function createFile(path: string): Promise<FileHandle> {
  await mkdir(dirname(path), { recursive: true });
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
}

/** Waits for a stream's 'close' (immediately if it already closed). */
function closed(out: Writable): Promise<void> {
  if (out.closed) return Promise.resolve();
  return new Promise<void>((resolve) => out.once('close', () => resolve()));
}

/** A Writable plus how to learn that the bytes really landed once it has ended. */
class StreamSink implements ByteSink {
  private failure: Error | null = null;

  constructor(
    private readonly out: Writable,
    /** After the stream closed: resolves with the final failure (e.g. zstd's exit), if any. */
    private readonly settled: () => Promise<Error | null>,
    private readonly stop: () => void,
  ) {
    out.on('error', (err: Error) => {
      this.failure ??= err;
    });
  }

  write(chunk: Uint8Array): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.out.destroyed) return Promise.reject(new Error('the output stream closed unexpectedly'));
    // The callback runs once the bytes left for the file or pipe, or with the stream's error.
    return new Promise<void>((resolve, reject) => {
      this.out.write(chunk, (err) => {
        if (err !== null && err !== undefined) reject(this.failure ?? err);
        else if (this.failure !== null) reject(this.failure);
        else resolve();
      });
    });
  }

  async end(): Promise<void> {
    if (this.failure === null) this.out.end();
    await closed(this.out);
    const last = await this.settled();
    const err = last ?? this.failure;
    if (err !== null) throw err;
  }

  async abort(): Promise<Error | null> {
    this.out.destroy();
    await closed(this.out);
    // A process that failed on its own is exiting with its reason: give it a moment before stopping it.
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ABORT_GRACE_MS);
    });
    await Promise.race([this.settled(), grace]);
    clearTimeout(timer);
    this.stop();
    return this.settled();
  }
}

export function fileSink(handle: FileHandle): ByteSink {
  const out = handle.createWriteStream();
  return new StreamSink(
    out,
    async () => null,
    () => undefined,
  );
}

/**
 * zstd at `level` reading our text on stdin and writing the frame straight into `handle`'s file. The
 * child gets its own copy of the descriptor, so ours is closed as soon as it runs.
 */
export async function zstdSink(handle: FileHandle, level: number, command: string): Promise<ByteSink> {
  let proc: ZstdProcess;
  try {
    proc = await startZstd(command, [`-${level}`, '-q', '-c'], ['pipe', handle.fd, 'pipe']);
  } finally {
    await handle.close();
  }
  const stdin = proc.child.stdin;
  if (stdin === null) throw new Error('zstd started without a stdin pipe');
  // zstd's own message (e.g. "No space left on device") beats the EPIPE its death causes on stdin.
  return new StreamSink(
    stdin,
    () => proc.outcome,
    () => {
      if (!proc.exited()) proc.child.kill();
    },
  );
}
