// The I/O trace log (--io-trace-log, spec §7). The cache calls its observer synchronously on its hot
// path, so write() only formats a row and appends it to an in-memory batch; batches go out when they
// reach `batchBytes` or `flushIntervalMs` after the first unflushed row, one at a time, waiting for
// 'drain' when the file or the zstd process pushes back (rows keep collecting meanwhile, so memory
// grows only while the disk is slower than the trace). A `.zst` path is compressed by the system
// zstd at level 3 (see zstd.ts for why); any other path is plain CSV. The first failure stops the
// writer accepting rows and is thrown by close(), which otherwise resolves with the row count.
import { performance } from 'node:perf_hooks';
import { TraceWriteError, messageOf } from './errors.js';
import { TRACE_EOL, TRACE_HEADER, formatRow } from './format.js';
import type { TraceEvent } from './format.js';
import { createFile, fileSink, zstdSink } from './sink.js';
import type { ByteSink } from './sink.js';
import { DEFAULT_ZSTD_COMMAND, ZSTD_LEVEL, hasZstdSuffix } from './zstd.js';

export interface TraceWriterOptions {
  /** Unix epoch seconds stamped on each row; default: wall-clock origin plus a monotonic clock (µs). */
  readonly epochSeconds?: () => number;
  /** Characters buffered before a batch is written. Default 64 Ki. */
  readonly batchBytes?: number;
  /** Longest a row waits in memory before it is written. Default 1000 ms. */
  readonly flushIntervalMs?: number;
  /** zstd level for `.zst` paths. Default 3, the reference's. */
  readonly zstdLevel?: number;
  /** The zstd executable. Default `zstd` from PATH. */
  readonly zstdCommand?: string;
}

/** Epoch seconds that never step backwards during a run (a trace's deltas are what a replayer uses). */
export function monotonicEpochSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

const DEFAULT_BATCH_BYTES = 64 * 1024;
const DEFAULT_FLUSH_MS = 1000;

export class TraceWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  private rows = 0;
  private dropped = 0;
  private failure: Error | null = null;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<number> | null = null;
  private readonly clock: () => number;
  private readonly batchBytes: number;
  private readonly flushMs: number;

  private constructor(
    readonly path: string,
    private readonly sink: ByteSink,
    opts: TraceWriterOptions,
  ) {
    this.clock = opts.epochSeconds ?? monotonicEpochSeconds;
    this.batchBytes = opts.batchBytes ?? DEFAULT_BATCH_BYTES;
    this.flushMs = opts.flushIntervalMs ?? DEFAULT_FLUSH_MS;
    this.append(TRACE_HEADER + TRACE_EOL);
  }

  /** Creates the file (and its parent directories) and, for `.zst`, starts the compressor. */
  static async open(path: string, opts: TraceWriterOptions = {}): Promise<TraceWriter> {
    let sink: ByteSink;
    try {
      const handle = await createFile(path);
      sink = hasZstdSuffix(path)
        ? await zstdSink(handle, opts.zstdLevel ?? ZSTD_LEVEL, opts.zstdCommand ?? DEFAULT_ZSTD_COMMAND)
        : fileSink(handle);
    } catch (err) {
      throw new TraceWriteError(path, `cannot create: ${messageOf(err)}`, { cause: err });
    }
    return new TraceWriter(path, sink, opts);
  }

  /** Rows accepted so far (the header is not a row). */
  get rowCount(): number {
    return this.rows;
  }

  /** Rows refused because an earlier write had failed. */
  get droppedRows(): number {
    return this.dropped;
  }

  /** `write` bound to this writer, to hand to the cache as its observer. */
  readonly observe = (event: TraceEvent): void => this.write(event);

  /** Logs one event, stamped now. Never blocks and never does I/O itself; throws only after close(). */
  write(event: TraceEvent): void {
    if (this.closing !== null) throw new Error(`I/O trace log ${this.path} is closed`);
    if (this.failure !== null) {
      this.dropped++;
      return;
    }
    this.append(formatRow(event, this.clock()) + TRACE_EOL);
    this.rows++;
  }

  /** Writes what is buffered, ends the file (and the zstd frame); resolves with the row count. */
  close(): Promise<number> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private append(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= this.batchBytes) this.kick();
    else if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.kick();
      }, this.flushMs);
      this.timer.unref();
    }
  }

  /** Starts the flush loop unless it is already running. */
  private kick(): void {
    if (this.flushing !== null || this.failure !== null) return;
    this.flushing = this.flushAll()
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.flushing = null;
      });
  }

  /** Writes batches until nothing is pending; rows that arrive while a batch is in flight join the next. */
  private async flushAll(): Promise<void> {
    while (this.pending.length > 0 && this.failure === null) {
      const batch = this.pending.join('');
      this.pending = [];
      this.pendingChars = 0;
      await this.sink.write(batch);
    }
  }

  private fail(err: unknown): void {
    this.failure ??= err instanceof Error ? err : new Error(String(err));
    this.pending = [];
    this.pendingChars = 0;
  }

  private async finish(): Promise<number> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    if (this.failure === null) {
      try {
        await this.flushAll();
        await this.sink.end();
      } catch (err) {
        this.fail(err);
      }
    }
    if (this.failure !== null) {
      const cause = (await this.sink.abort()) ?? this.failure;
      const lost = this.dropped > 0 ? ` (${this.dropped} later rows dropped)` : '';
      throw new TraceWriteError(this.path, `write failed: ${cause.message}${lost}`, { cause });
    }
    return this.rows;
  }
}
