// CPU-memory tier: entries held as lists of fixed-size pages from a pool that only grows to the
// tier's high-water mark and reuses freed pages (fresh guest RAM is slow on first touch).
// Timing: the copy in or out is the tier's "device" time; host time is zero.
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { EntryNotFoundError, timing } from './backend.js';
import type { Backend, ChunkSink, ChunkSource, IOTiming, ReadResult, TierName } from './backend.js';

const DEFAULT_PAGE_BYTES = 1024 * 1024;
const YIELD_EVERY_BYTES = 8 * 1024 * 1024;

interface StoredEntry {
  readonly pages: Uint8Array[];
  readonly size: number;
}

export class MemoryBackend implements Backend {
  private readonly entries = new Map<string, StoredEntry>();
  private readonly freePages: Uint8Array[] = [];
  private readonly scratch: Uint8Array;

  constructor(readonly tier: TierName = 'cpu', readonly pageBytes = DEFAULT_PAGE_BYTES) {
    this.scratch = new Uint8Array(pageBytes);
  }

  private takePage(): Uint8Array {
    return this.freePages.pop() ?? new Uint8Array(this.pageBytes);
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    const pages: Uint8Array[] = [];
    let copyMs = 0;
    let written = 0;
    try {
      for await (const chunk of source.chunks()) {
        const t0 = performance.now();
        let off = 0;
        while (off < chunk.length) {
          const inPage = written % this.pageBytes;
          if (inPage === 0) pages.push(this.takePage());
          const page = pages[pages.length - 1] as Uint8Array;
          const n = Math.min(this.pageBytes - inPage, chunk.length - off);
          page.set(chunk.subarray(off, off + n), inPage);
          off += n;
          written += n;
        }
        copyMs += performance.now() - t0;
      }
    } catch (e) {
      this.freePages.push(...pages);
      throw e;
    }
    if (written !== source.size) {
      this.freePages.push(...pages);
      throw new Error(`memory tier: source for '${key}' gave ${written} bytes, expected ${source.size}`);
    }
    this.releaseEntry(key);
    this.entries.set(key, { pages, size: written });
    return timing(0, copyMs);
  }

  async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const entry = this.entries.get(key);
    if (entry === undefined) throw new EntryNotFoundError(this.tier, key);
    if (sink === undefined) {
      // Without a consumer, copy out into a reused scratch page: the cost of moving the bytes out of
      // this tier (the reference's np.copy), without allocating.
      let copyMs = 0;
      let remaining = entry.size;
      let sinceYield = 0;
      for (const page of entry.pages) {
        const t0 = performance.now();
        const n = Math.min(page.length, remaining);
        this.scratch.set(page.subarray(0, n));
        copyMs += performance.now() - t0;
        remaining -= n;
        sinceYield += n;
        // A multi-GiB entry must not hold the event loop: let other operations run between slices.
        if (sinceYield >= YIELD_EVERY_BYTES) {
          sinceYield = 0;
          await setImmediate();
        }
      }
      return { timing: timing(0, copyMs), bytes: entry.size };
    }
    // With a consumer, pages are handed over in place; the consumer's copy is its own cost.
    let remaining = entry.size;
    for (const page of entry.pages) {
      const n = Math.min(page.length, remaining);
      await sink(page.subarray(0, n));
      remaining -= n;
    }
    return { timing: timing(0, 0), bytes: entry.size };
  }

  async delete(key: string): Promise<void> {
    this.releaseEntry(key);
  }

  async clear(): Promise<void> {
    for (const key of [...this.entries.keys()]) this.releaseEntry(key);
  }

  keys(): Iterable<string> {
    return this.entries.keys();
  }

  /** Bytes held in pages that entries use (for tests). */
  get storedBytes(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.size;
    return n;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.freePages.length = 0;
  }

  private releaseEntry(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.freePages.push(...old.pages);
  }
}
