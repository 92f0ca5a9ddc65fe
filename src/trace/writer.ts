// The I/O trace log (--io-trace-log, docs/reference-compat.md#rc-21). The cache calls its observer synchronously on its hot
// path, so write() only encodes a row into the current batch buffer (format.ts RowEncoder); a batch goes out
// when it is full (`batchBytes`) or `flushIntervalMs` after its first row, one batch at a time, and
// its buffer is reused once written (fresh memory is slow on first touch here, and a trace-mode run
// writes tens of MB/s). Rows keep collecting while a batch is in flight, so memory grows only while
// the disk is slower than the trace. A `.zst` path is compressed by the system
// zstd at level 3 (see zstd.ts for why); any other path is plain CSV. The first failure stops the
// writer accepting rows and is thrown by close(), which otherwise resolves with the row count.
import { performance } from 'node:perf_hooks';
import { TraceWriteError, messageOf } from './errors.js';
import { RowEncoder, TRACE_EOL, TRACE_HEADER, maxRowBytes } from './format.js';
import type { TraceEvent } from './format.js';
import { createFile, fileSink, zstdSink } from './sink.js';
import type { ByteSink } from './sink.js';
import { DEFAULT_ZSTD_COMMAND, ZSTD_LEVEL, hasZstdSuffix } from './zstd.js';

export interface TraceWriterOptions {
  /** Unix epoch seconds stamped on each row; default: wall-clock origin plus a monotonic clock (µs). */
  readonly epochSeconds?: () => number;
  /** Bytes per batch buffer: a full buffer is written. Default 256 KiB. */
  readonly batchBytes?: number;
  /** Longest a row waits in memory before it is written. Default 1000 ms. */
  readonly flushIntervalMs?: number;
  /** zstd level for `.zst` paths. Default 3, the reference's. */
  readonly zstdLevel?: number;
  /** The zstd executable. Default `zstd` from PATH. */
  readonly zstdCommand?: string;
  /** Arms the flush timer; returns its cancel. Default an unref'd setTimeout (tests fire it by hand). */
  readonly startTimer?: (fire: () => void, ms: number) => () => void;
}

function unrefTimeout(fire: () => void, ms: number): () => void {
  const timer = setTimeout(fire, ms);
  timer.unref(); // a pending flush never keeps the process alive
  return () => clearTimeout(timer);
}

/** Epoch seconds that never step backwards during a run (a trace's deltas are what a replayer uses). */
export function monotonicEpochSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

const DEFAULT_BATCH_BYTES = 256 * 1024;
const DEFAULT_FLUSH_MS = 1000;
/** Written buffers kept for reuse; more are allocated only while the sink is behind. */
const SPARE_BUFFERS = 2;

export class TraceWriter {
  private current: Buffer;
  private used = 0;
  /** Batches waiting for the sink, oldest first: a buffer and how many of its bytes are rows. */
  private queued: Array<{ readonly buffer: Buffer; readonly length: number }> = [];
  private readonly spare: Buffer[] = [];
  private readonly encoder = new RowEncoder();
  private rows = 0;
  private dropped = 0;
  private failure: Error | null = null;
  private flushing: Promise<void> | null = null;
  /** Cancels the armed flush timer; null when none is armed. */
  private cancelTimer: (() => void) | null = null;
  private closing: Promise<number> | null = null;
  private readonly clock: () => number;
  private readonly batchBytes: number;
  private readonly flushMs: number;
  private readonly startTimer: (fire: () => void, ms: number) => () => void;

  private constructor(
    readonly path: string,
    private readonly sink: ByteSink,
    opts: TraceWriterOptions,
  ) {
    this.clock = opts.epochSeconds ?? monotonicEpochSeconds;
    this.batchBytes = Math.max(1024, opts.batchBytes ?? DEFAULT_BATCH_BYTES);
    this.flushMs = opts.flushIntervalMs ?? DEFAULT_FLUSH_MS;
    this.startTimer = opts.startTimer ?? unrefTimeout;
    this.current = Buffer.alloc(this.batchBytes);
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
    this.reserve(maxRowBytes(event));
    this.used = this.encoder.encode(event, this.clock(), this.current, this.used);
    this.rows++;
    this.armTimer();
  }

  /** Writes what is buffered, ends the file (and the zstd frame); resolves with the row count. */
  close(): Promise<number> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private append(text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    this.reserve(bytes);
    this.used += this.current.write(text, this.used, 'utf8');
    this.armTimer();
  }

  /** Makes room for `bytes` more in the current buffer, queueing it for the sink if it is too full. */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.current.length) return;
    this.rotate();
    // A row longer than a whole buffer (a pathological key) gets a buffer of its own.
    if (bytes > this.current.length) this.current = Buffer.alloc(bytes);
  }

  /** Rows wait at most flushMs in memory. */
  private armTimer(): void {
    if (this.cancelTimer !== null) return;
    this.cancelTimer = this.startTimer(() => {
      this.cancelTimer = null;
      this.rotate();
    }, this.flushMs);
  }

  /** Queues the current batch (if it holds anything) and starts the flush loop. */
  private rotate(): void {
    if (this.used > 0) {
      this.queued.push({ buffer: this.current, length: this.used });
      this.current = this.spare.pop() ?? Buffer.alloc(this.batchBytes);
      this.used = 0;
    }
    this.kick();
  }

  /** Starts the flush loop unless it is already running. */
  private kick(): void {
    if (this.flushing !== null || this.failure !== null || this.queued.length === 0) return;
    this.flushing = this.flushAll()
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.flushing = null;
        this.kick(); // a batch queued just as the loop ended
      });
  }

  /** Writes queued batches in order; each buffer is reused once the sink has written it. */
  private async flushAll(): Promise<void> {
    for (let batch = this.queued.shift(); batch !== undefined && this.failure === null; batch = this.queued.shift()) {
      await this.sink.write(batch.buffer.subarray(0, batch.length));
      if (batch.buffer.length === this.batchBytes && this.spare.length < SPARE_BUFFERS) this.spare.push(batch.buffer);
    }
  }

  private fail(err: unknown): void {
    this.failure ??= err instanceof Error ? err : new Error(String(err));
    this.queued = [];
    this.used = 0;
  }

  private async finish(): Promise<number> {
    this.cancelTimer?.();
    this.cancelTimer = null;
    while (this.flushing !== null) await this.flushing; // a loop's end may start another (kick)
    if (this.failure === null) {
      try {
        if (this.used > 0) this.queued.push({ buffer: this.current, length: this.used });
        this.used = 0;
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
