// Trace-mode tier: remembers sizes only, moves no bytes and takes no time (spec §3.7).
import { EntryNotFoundError, ZERO_TIMING } from './backend.js';
import type { Backend, ChunkSource, IOTiming, ReadResult, TierName } from './backend.js';

export class NullBackend implements Backend {
  private readonly sizes = new Map<string, number>();

  constructor(readonly tier: TierName) {}

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    this.sizes.set(key, source.size);
    return ZERO_TIMING;
  }

  async read(key: string): Promise<ReadResult> {
    const size = this.sizes.get(key);
    if (size === undefined) throw new EntryNotFoundError(this.tier, key);
    return { timing: ZERO_TIMING, bytes: size };
  }

  async delete(key: string): Promise<void> {
    this.sizes.delete(key);
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
