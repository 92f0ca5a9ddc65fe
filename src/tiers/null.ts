// Trace-mode tier: remembers sizes only, moves no bytes and takes no time (docs/reference-compat.md#rc-19).
import { EntryNotFoundError, ZERO_TIMING } from './backend.js';
import type { Backend, ImmediateOps, IOTiming, ReadResult, TierName } from './backend.js';
import type { ChunkSource } from '../data/chunk-source.js';

export class NullBackend implements Backend, ImmediateOps {
  /** Per key, the answer to a read (made once at write: trace mode reads millions of times a minute). */
  private readonly reads = new Map<string, ReadResult>();
  readonly immediate: ImmediateOps | undefined;

  /** `immediate` false: offer only the asynchronous operations (for subclasses that take time). */
  constructor(
    readonly tier: TierName,
    immediate = true,
  ) {
    this.immediate = immediate ? this : undefined;
  }

  writeNow(key: string, size: number): IOTiming {
    this.reads.set(key, { timing: ZERO_TIMING, bytes: size });
    return ZERO_TIMING;
  }

  readNow(key: string): ReadResult {
    const r = this.reads.get(key);
    if (r === undefined) throw new EntryNotFoundError(this.tier, key);
    return r;
  }

  deleteNow(key: string): void {
    this.reads.delete(key);
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    return this.writeNow(key, source.size);
  }

  async read(key: string): Promise<ReadResult> {
    return this.readNow(key);
  }

  async delete(key: string): Promise<void> {
    this.deleteNow(key);
  }

  async clear(): Promise<void> {
    this.reads.clear();
  }

  keys(): Iterable<string> {
    return this.reads.keys();
  }

  async close(): Promise<void> {
    this.reads.clear();
  }
}
