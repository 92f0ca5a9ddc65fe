// The one interface every storage tier implements. The cache sees storage only through it.
import type { ChunkSource } from '../data/chunk-source.js';

/**
 * Tier names as the reference reports them ("nvme" internally, "storage" in every metric), fastest
 * first: declared once here; metric field names and per-tier records are built from this list.
 */
export const TIER_NAMES = ['gpu', 'cpu', 'storage'] as const;
export type TierName = (typeof TIER_NAMES)[number];

/**
 * Time spent by one operation, in milliseconds, from a monotonic clock.
 * `device` is the part spent in the storage medium itself, `host` the part spent in host-side
 * work around it; `total = host + device`. Time spent waiting for payload bytes (a write) or for
 * the consumer of a chunk (a read) is never included.
 */
export interface IOTiming {
  readonly totalMs: number;
  readonly hostMs: number;
  readonly deviceMs: number;
}

export const ZERO_TIMING: IOTiming = { totalMs: 0, hostMs: 0, deviceMs: 0 };

export function timing(hostMs: number, deviceMs: number): IOTiming {
  return { totalMs: hostMs + deviceMs, hostMs, deviceMs };
}

/**
 * Receives the bytes of a read, in order. A read awaits the sink before reading on, and the chunk is
 * valid only until the sink's promise settles. Time spent in the sink is not part of the read's timing.
 */
export type ChunkSink = (chunk: Uint8Array) => void | Promise<void>;

export interface ReadResult {
  readonly timing: IOTiming;
  /** Bytes actually read from the tier. */
  readonly bytes: number;
}

/**
 * Synchronous operations of a tier whose every operation completes at once (the null tier of trace
 * mode), with the same effects as write/read/delete. The cache uses them to skip promise machinery:
 * the simulation rate of trace mode is bounded by per-operation overhead.
 */
export interface ImmediateOps {
  writeNow(key: string, size: number): IOTiming;
  /** Throws EntryNotFoundError if `key` is not stored here. */
  readNow(key: string): ReadResult;
  deleteNow(key: string): void;
}

export interface Backend {
  readonly tier: TierName;
  /** Present when every operation of this tier completes synchronously. */
  readonly immediate?: ImmediateOps;
  /** Stores the entry under `key`, replacing any previous one. */
  write(key: string, source: ChunkSource): Promise<IOTiming>;
  /** Reads the whole entry; throws EntryNotFoundError if `key` is not stored here. */
  read(key: string, sink?: ChunkSink): Promise<ReadResult>;
  /** Removes the entry; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Removes every entry this backend wrote (and nothing else). */
  clear(): Promise<void>;
  /**
   * What an entry of `size` bytes takes on the medium at most, while being written included (whole
   * file-system blocks and their metadata, whole memory pages). The cache enforces a tier's limit on
   * these bytes. Absent: `size`.
   */
  allocatedBytes?(size: number): number;
  /** Keys currently stored, for invariant checks. */
  keys(): Iterable<string>;
  /** Releases resources (buffers, worker threads, temp directories it created). */
  close(): Promise<void>;
  /** After close(): what it could not remove of its own; absent or undefined: nothing. */
  leftBehind?(): LeftBehind | undefined;
  /**
   * The run is over: operations in flight stop at their next chunk. A read then returns the bytes it
   * had read (fewer than the entry's size); a write throws IoAbortedError and stores nothing.
   */
  stopInFlight?(): void;
  /**
   * The window is over: removes now what writes cut short by stopInFlight left on the medium (their
   * room was given back when they stopped; close() would remove them later), so the tier's medium
   * holds no more than its entries take.
   */
  dropStopped?(): Promise<void>;
  /** Present when the tier is a shared pool's (--kv-pool shared): lookups through the storage itself. */
  readonly pool?: PoolAccess;
}

/** What a backend's close() could not remove of its own (objects whose DELETE failed or was never sent). */
export interface LeftBehind {
  readonly count: number;
  /** Where they are (s3://bucket/prefix). */
  readonly where: string;
  /** Why: the failures, and what was not tried. */
  readonly why: string;
  /** What the user can do about them. */
  readonly remedy: string;
}

/** What a lookup through the storage found for one block (an existence check: stat, HEAD). */
export interface PoolProbe {
  readonly found: boolean;
  /** The published block's size (bytes); 0 when not found. */
  readonly size: number;
  /** When it was published, on the storage's own clock (mtime, Last-Modified); 0 when not found. */
  readonly publishedAtMs: number;
  readonly timing: IOTiming;
}

/**
 * A shared pool's storage (docs/shared-pool.md): any rank reads what any rank published, the storage
 * is the index (a lookup asks it), and a block is published atomically or not at all.
 */
export interface PoolAccess {
  /** When this rank opened the pool, on the storage's clock: blocks published before it are an earlier run's. */
  readonly openedAtMs: number;
  /** Whether `key`'s block is published now (an existence check on the storage). */
  lookup(key: string): Promise<PoolProbe>;
  /** Reads a published block of `size` bytes that this backend may not have written; EntryNotFoundError when it is gone. */
  readPublished(key: string, size: number, sink?: ChunkSink): Promise<ReadResult>;
  /** Drops `key` from what this backend published, touching nothing (its block was removed by someone else). */
  forget(key: string): void;
}

/**
 * A pool write found the block published by another writer first: it is not rewritten. `bytes` of
 * the discarded temporary copy had reached the medium (they moved, and count as written bytes).
 */
export class AlreadyPublishedError extends Error {
  constructor(
    readonly bytes: number,
    readonly timing: IOTiming,
  ) {
    super('the block was already published by another writer');
    this.name = 'AlreadyPublishedError';
  }
}

/** A write cut short by stopInFlight; `bytes` reached the medium before it stopped. */
export class IoAbortedError extends Error {
  constructor(readonly bytes: number) {
    super(`operation stopped at the end of the run after ${bytes} bytes`);
    this.name = 'IoAbortedError';
  }
}

export class EntryNotFoundError extends Error {
  constructor(
    readonly tier: TierName,
    readonly key: string,
  ) {
    super(`${tier} tier has no entry '${key}'`);
    this.name = 'EntryNotFoundError';
  }
}
