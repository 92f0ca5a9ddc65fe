// Trace-mode tier: remembers sizes only, moves no bytes and takes no time (spec §3.7).
import { EntryNotFoundError, ZERO_TIMING } from './backend.js';
import type { Backend, ChunkSource, ImmediateOps, IOTiming, ReadResult, TierName } from './backend.js';

export class NullBackend implements Backend, ImmediateOps {
  private readonly sizes = new Map<string, number>();
  readonly immediate: ImmediateOps | undefined;

  /** `immediate` false: offer only the asynchronous operations (for subclasses that take time). */
  constructor(readonly tier: TierName, immediate = true) {
    this.immediate = immediate ? this : undefined;
  }

  writeNow(key: string, size: number): IOTiming {
    this.sizes.set(key, size);
    return ZERO_TIMING;
  }

  readNow(key: string): ReadResult {
    const size = this.sizes.get(key);
    if (size === undefined) throw new EntryNotFoundError(this.tier, key);
    return { timing: ZERO_TIMING, bytes: size };
  }

  deleteNow(key: string): void {
    this.sizes.delete(key);
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
    this.sizes.clear();
  }

  keys(): Iterable<string> {
    return this.sizes.keys();
  }

  async close(): Promise<void> {
    this.sizes.clear();
  }
}
