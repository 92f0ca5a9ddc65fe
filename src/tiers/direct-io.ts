// The file tier's data movement: chunked reads that fill a slot (continuing short reads), full writes,
// and the O_DIRECT writer that keeps file offsets block-aligned, writing aligned caller chunks as they
// are and staging everything else. Timing goes to the operation's SplitTimer.
import { DIRECT_ALIGN } from '../data/aligned.js';
import type { DirectSlabs } from '../data/aligned.js';
import { nextNonEmpty } from '../data/chunk-source.js';
import type { ChunkSource, WholeChunk } from '../data/chunk-source.js';
import type { SlotPool } from '../data/slots.js';
import { roundUp } from '../util/units.js';
import { errnoCode } from './fs-info.js';
import type { SplitTimer } from './split-timer.js';
import type { FileIoGauge } from './file-io-gauge.js';
import type { FileCalls } from './fd-file.js';

/** Chunk reads of one entry in flight at once, staging slots permitting (FileBackend.readInto says why). */
export const READS_IN_FLIGHT = 2;

/** One chunk of an entry read: the slot it is in and its bytes of the entry. */
export interface ChunkRead {
  readonly slot: Uint8Array;
  readonly bytes: number;
}

/** The chunks of one entry's read, issued in order; each fills its slot completely (short reads are continued). */
export class ChunkReads {
  private offset = 0;

  constructor(
    private readonly fh: FileCalls,
    private readonly size: number,
    private readonly chunkBytes: number,
    private readonly direct: boolean,
    private readonly t: SplitTimer,
  ) {}

  more(): boolean {
    return this.offset < this.size;
  }

  next(slot: Uint8Array): Promise<ChunkRead> {
    const at = this.offset;
    const bytes = Math.min(this.chunkBytes, this.size - at);
    this.offset += bytes;
    return this.t.deviceOverlapped(() => this.fill(slot, at, bytes));
  }

  /**
   * Reads [at, at + bytes) of the entry into the start of `slot` (whole blocks in direct mode), from
   * `got` bytes in: one read(2) unless it comes back short. Promise chains, not an async loop: this
   * runs once per small block read.
   */
  private fill(slot: Uint8Array, at: number, bytes: number, got = 0): Promise<ChunkRead> {
    const want = this.direct ? roundUp(bytes - got, DIRECT_ALIGN) : bytes - got;
    return this.fh.read(slot, got, want, at + got).then(({ bytesRead }) => {
      if (bytesRead <= 0) throw new Error(`file for entry is shorter than its ${this.size} bytes (EOF at ${at + got})`);
      return got + bytesRead < bytes ? this.fill(slot, at, bytes, got + bytesRead) : { slot, bytes };
    });
  }
}

/** Writes all of `buf` at `pos`, looping over short writes. */
export async function writeFully(fh: FileCalls, buf: Uint8Array, pos: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, pos + done);
    if (bytesWritten <= 0) throw new Error(`write returned ${bytesWritten} at offset ${pos + done}`);
    done += bytesWritten;
  }
}

/** What a backend shares with the writer of one entry. */
export interface WriterContext {
  readonly chunkBytes: number;
  readonly slots: SlotPool;
  readonly directSlabs: DirectSlabs;
  readonly counters: FileCounters;
  /** Counts the waits for a staging slot. */
  readonly gauge: FileIoGauge;
  /** False once a caller's aligned view was refused (its slab was probed on another file system). */
  callerViewsOk: boolean;
}

export interface FileCounters {
  /** Bytes written straight from the caller's aligned chunks (no copy). */
  zeroCopyBytes: number;
  /** Bytes copied into a staging slot before an O_DIRECT write. */
  stagedBytes: number;
}

/**
 * Streams one entry into an O_DIRECT file. File offsets stay multiples of DIRECT_ALIGN: aligned
 * chunks go to write(2) as they are (the last one padded to a block, truncated later); everything
 * else is gathered in a staging slot and written a slot at a time.
 */
export class DirectWriter {
  /** File offset written so far, always a multiple of DIRECT_ALIGN. */
  private pos = 0;
  /** Bytes gathered in the staging slot and not yet written. */
  private pending = 0;
  private slot: Uint8Array | undefined;

  constructor(
    private readonly fh: FileCalls,
    private readonly ctx: WriterContext,
    private readonly t: SplitTimer,
    /** Where the entry starts in the file (a slab slot's offset; 0 for a file of its own). */
    private readonly base = 0,
  ) {}

  async add(chunk: Uint8Array, isLast: boolean): Promise<void> {
    let rest = chunk;
    if (this.pending === 0) {
      const whole = isLast ? this.ctx.directSlabs.directView(chunk, roundUp(chunk.length, DIRECT_ALIGN)) : undefined;
      if (whole !== undefined) return this.writeView(whole);
      const head = chunk.length - (chunk.length % DIRECT_ALIGN);
      const headView = head > 0 ? this.ctx.directSlabs.directView(chunk.subarray(0, head), head) : undefined;
      if (headView !== undefined) {
        await this.writeView(headView);
        rest = chunk.subarray(head);
      }
    }
    await this.stage(rest);
  }

  /**
   * Writes what is left in the staging slot, padded to a whole block, then cuts the file to `size`
   * (`cut`; a slab slot is never cut: its padding stays inside the slot).
   */
  async finish(size: number, cut = true): Promise<void> {
    if (this.pending > 0) await this.flushSlot();
    if (cut && size % DIRECT_ALIGN !== 0) await this.t.device(() => this.fh.truncate(size));
  }

  release(): void {
    if (this.slot !== undefined) this.ctx.slots.release(this.slot);
    this.slot = undefined;
  }

  /** A staging slot, waiting (untimed, but counted by the gauge) for one if all are in use. */
  private async stagingSlot(): Promise<Uint8Array> {
    this.slot ??= await this.ctx.gauge.staging(this.ctx.slots.acquire(), this.ctx.slots.available > 0);
    return this.slot;
  }

  private async writeAt(buf: Uint8Array): Promise<void> {
    await this.t.device(() => writeFully(this.fh, buf, this.base + this.pos));
    this.pos += buf.length;
  }

  /** Writes an aligned caller view in chunkBytes pieces, bouncing through staging if it is refused. */
  private async writeView(view: Uint8Array): Promise<void> {
    const step = this.ctx.chunkBytes;
    for (let off = 0; off < view.length; off += step) {
      const piece = view.subarray(off, Math.min(off + step, view.length));
      if (this.ctx.callerViewsOk) {
        try {
          await this.writeAt(piece);
          this.ctx.counters.zeroCopyBytes += piece.length;
          continue;
        } catch (e) {
          if (errnoCode(e) !== 'EINVAL') throw e;
          this.ctx.callerViewsOk = false;
        }
      }
      const slot = await this.stagingSlot();
      this.t.hostSync(() => slot.set(piece));
      this.ctx.counters.stagedBytes += piece.length;
      await this.writeAt(slot.subarray(0, piece.length));
    }
  }

  private async stage(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) {
      const slot = await this.stagingSlot();
      const n = Math.min(slot.length - this.pending, bytes.length - off);
      const at = this.pending;
      this.t.hostSync(() => slot.set(bytes.subarray(off, off + n), at));
      this.ctx.counters.stagedBytes += n;
      this.pending += n;
      off += n;
      if (this.pending === slot.length) await this.flushSlot();
    }
  }

  private async flushSlot(): Promise<void> {
    const slot = await this.stagingSlot();
    await this.writeAt(slot.subarray(0, roundUp(this.pending, DIRECT_ALIGN)));
    this.pending = 0;
  }
}

/**
 * An entry of one chunk's bytes for O_DIRECT, padded to a block: `slot` when they were copied into a
 * staging slot; else `view` is the source's own chunk, valid until its iteration goes on (ChunkSource's
 * contract), so `finish` ends that iteration only once the write is done (releaseOneChunk).
 */
export interface OneChunk {
  readonly view: Uint8Array;
  readonly slot?: Uint8Array;
  readonly finish?: () => void | Promise<void>;
}

/**
 * A one-chunk entry's bytes as one O_DIRECT-ready view padded to a whole block (a native block-file
 * job writes it with one call): the source's own chunk when its slab allows, held until
 * releaseOneChunk(); else copied into a staging slot chunk by chunk (host time; waiting for a slot is
 * untimed, counted by the gauge).
 */
export async function oneChunkView(ctx: WriterContext, key: string, source: ChunkSource, t: SplitTimer): Promise<OneChunk> {
  if (source.whole !== undefined) return wholeChunkView(ctx, source.size, await source.whole(), t);
  const it = source.chunks()[Symbol.asyncIterator]();
  const padded = roundUp(source.size, DIRECT_ALIGN);
  let slot: Uint8Array | undefined;
  try {
    let chunk = await nextNonEmpty(it);
    if (chunk?.length === source.size && ctx.callerViewsOk) {
      const view = ctx.directSlabs.directView(chunk, padded);
      // Not the last step: asking for the next chunk would hand this one's memory to another entry.
      if (view !== undefined) return { view, finish: () => endOfSource(key, it) };
    }
    slot = ctx.slots.tryAcquire() ?? (await ctx.gauge.staging(ctx.slots.acquire(), false));
    const into = slot;
    let at = 0;
    for (; chunk !== undefined; chunk = await nextNonEmpty(it)) {
      const c = chunk;
      if (at + c.length > source.size) throw new RangeError(`source for '${key}' exceeds its size ${source.size}`);
      t.hostSync(() => into.set(c, at)); // before the next chunk is asked for
      at += c.length;
    }
    if (at !== source.size) throw new RangeError(`source for '${key}' gave ${at} bytes, expected ${source.size}`);
    return { view: slot.subarray(0, padded), slot };
  } catch (e) {
    if (slot !== undefined) ctx.slots.release(slot);
    await it.return?.();
    throw e;
  }
}

/** oneChunkView of a source that gave its one chunk whole: that chunk itself when its slab allows, else a staged copy. */
async function wholeChunkView(ctx: WriterContext, size: number, chunk: WholeChunk, t: SplitTimer): Promise<OneChunk> {
  if (chunk.bytes.length !== size) {
    chunk.release();
    throw new RangeError(`a source's whole chunk has ${chunk.bytes.length} bytes, its size is ${size}`);
  }
  const view = ctx.callerViewsOk ? ctx.directSlabs.directView(chunk.bytes, roundUp(size, DIRECT_ALIGN)) : undefined;
  if (view !== undefined) return { view, finish: () => chunk.release() };
  try {
    return await stagedView(ctx, chunk.bytes, t);
  } finally {
    chunk.release();
  }
}

/** `bytes` copied into a staging slot (host time), padded to a whole block. */
export async function stagedView(ctx: WriterContext, bytes: Uint8Array, t: SplitTimer): Promise<OneChunk> {
  const slot = ctx.slots.tryAcquire() ?? (await ctx.gauge.staging(ctx.slots.acquire(), false));
  t.hostSync(() => slot.set(bytes));
  return { view: slot.subarray(0, roundUp(bytes.length, DIRECT_ALIGN)), slot };
}

/** Gives back what `data` holds: its staging slot, or the source's chunk (its iteration ended). */
export async function releaseOneChunk(ctx: WriterContext, data: OneChunk): Promise<void> {
  if (data.slot !== undefined) ctx.slots.release(data.slot);
  if (data.finish !== undefined) await data.finish();
}

/** Ends a source whose one chunk was its whole size: it must have nothing more. */
async function endOfSource(key: string, it: AsyncIterator<Uint8Array>): Promise<void> {
  if ((await nextNonEmpty(it)) === undefined) return;
  await it.return?.();
  throw new RangeError(`source for '${key}' exceeds its size`);
}

/** Iterates a source's non-empty chunks, flagging the last one and checking the declared size. */
export async function* sizedChunks(key: string, source: ChunkSource): AsyncGenerator<[Uint8Array, boolean]> {
  let received = 0;
  for await (const chunk of source.chunks()) {
    if (chunk.length === 0) continue;
    received += chunk.length;
    if (received > source.size) throw new RangeError(`source for '${key}' exceeds its size ${source.size}`);
    yield [chunk, received === source.size];
  }
  if (received !== source.size) {
    throw new RangeError(`source for '${key}' gave ${received} bytes, expected ${source.size}`);
  }
}
