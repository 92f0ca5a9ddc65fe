// CPU-memory tier: entries held as lists of fixed-size pages from a pool that only grows to the
// tier's high-water mark and reuses freed pages (fresh guest RAM is slow on first touch).
// With an off-thread copier (runs use a CopyPool) the pages are shared, O_DIRECT-aligned memory:
// copies in and out run on worker threads, and a demotion to the file tier writes pages as they are.
// Timing: the copy itself is the tier's "device" time; host time is the hand-off to and from the copy
// thread (zero for inline copies).
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { AlignedSlab } from '../data/aligned.js';
import type { DirectSlabs } from '../data/aligned.js';
import { inlineCopier } from '../data/copy-pool.js';
import type { Copier, CopyPair } from '../data/copy-pool.js';
import { EntryNotFoundError, timing } from './backend.js';
import type { Backend, ChunkSink, IOTiming, ReadResult, TierName } from './backend.js';
import type { ChunkSource } from '../data/chunk-source.js';

const DEFAULT_PAGE_BYTES = 1024 * 1024;
/** Bytes per copy job: large copies are sliced so other operations interleave with them. */
const COPY_JOB_BYTES = 8 * 1024 * 1024;
/** Largest slab of shared pages (one O_DIRECT probe each). */
const MAX_SLAB_BYTES = 1024 * 1024 * 1024;
/** Slab size when the tier outgrows its reserve (it should not: the cache enforces the limit). */
const EXTRA_SLAB_BYTES = 64 * 1024 * 1024;

export interface MemoryBackendOptions {
  /** Who copies bytes (default inline, on the calling thread). */
  readonly copier?: Copier;
  /** With an off-thread copier: the file tier's directory, so pages are aligned for its O_DIRECT. */
  readonly probeDir?: string;
  /** Where pages that pass the probe are recorded, for the file tier to write them as they are. */
  readonly directSlabs?: DirectSlabs;
  /**
   * With an off-thread copier: the tier's limit in entry bytes; shared memory for twice that is set
   * up now. Making a slab probes O_DIRECT with synchronous file I/O, which must not happen on the
   * measured path; untouched slab memory costs no RAM.
   */
  readonly reserveBytes?: number;
}

interface StoredEntry {
  readonly pages: Uint8Array[];
  readonly size: number;
}

export class MemoryBackend implements Backend {
  private readonly entries = new Map<string, StoredEntry>();
  private readonly freePages: Uint8Array[] = [];
  private readonly scratch: Uint8Array;
  private readonly copier: Copier;
  private readonly shared: boolean;

  constructor(
    readonly tier: TierName = 'cpu',
    readonly pageBytes = DEFAULT_PAGE_BYTES,
    private readonly options: MemoryBackendOptions = {},
  ) {
    this.copier = options.copier ?? inlineCopier;
    this.shared = this.copier.offThread;
    this.scratch = this.shared ? AlignedSlab.create(pageBytes).slab.view(0, pageBytes) : new Uint8Array(pageBytes);
    if (this.shared) {
      // Entries take whole pages, so page use exceeds the entry bytes the cache limits by up to a page
      // per entry: reserve twice the limit (virtual memory only until touched).
      const reserve = 2 * (options.reserveBytes ?? 0);
      for (let left = reserve; left > 0; left -= MAX_SLAB_BYTES) this.addSlab(Math.min(left, MAX_SLAB_BYTES));
    }
  }

  /** Shared slabs not yet carved into pages, and the next page offset in the first of them. */
  private readonly slabs: AlignedSlab[] = [];
  private carved = 0;

  private addSlab(bytes: number): void {
    const pages = Math.max(1, Math.ceil(bytes / this.pageBytes));
    this.slabs.push(AlignedSlab.create(pages * this.pageBytes, this.options.probeDir, this.options.directSlabs).slab);
  }

  private takePage(): Uint8Array {
    const free = this.freePages.pop();
    if (free !== undefined) return free;
    if (!this.shared) return new Uint8Array(this.pageBytes);
    let slab = this.slabs[0];
    if (slab === undefined || this.carved + this.pageBytes > slab.usable) {
      if (slab !== undefined) this.slabs.shift();
      this.carved = 0;
      if (this.slabs.length === 0) this.addSlab(EXTRA_SLAB_BYTES);
      slab = this.slabs[0];
    }
    const page = slab.view(this.carved, this.pageBytes);
    this.carved += this.pageBytes;
    return page;
  }

  /** Runs `pairs` through the copier: [copy ms, wall ms including the hand-off]. */
  private async copyTimed(pairs: readonly CopyPair[]): Promise<[number, number]> {
    const t0 = performance.now();
    const copyMs = await this.copier.copy(pairs);
    return [copyMs, this.copier.offThread ? performance.now() - t0 : copyMs];
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    const pages: Uint8Array[] = [];
    let copyMs = 0;
    let wallMs = 0;
    let written = 0;
    try {
      for await (const chunk of source.chunks()) {
        const pairs: CopyPair[] = [];
        let off = 0;
        while (off < chunk.length) {
          const inPage = written % this.pageBytes;
          if (inPage === 0) pages.push(this.takePage());
          const page = pages[pages.length - 1];
          const n = Math.min(this.pageBytes - inPage, chunk.length - off);
          pairs.push({ dst: page.subarray(inPage, inPage + n), src: chunk.subarray(off, off + n) });
          off += n;
          written += n;
        }
        // The chunk stays valid until the next one is asked for: the copy is awaited before that.
        const [copy, wall] = await this.copyTimed(pairs);
        copyMs += copy;
        wallMs += wall;
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
    return timing(Math.max(0, wallMs - copyMs), copyMs);
  }

  async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const entry = this.entries.get(key);
    if (entry === undefined) throw new EntryNotFoundError(this.tier, key);
    if (sink === undefined) {
      // Without a consumer, copy out into a reused scratch page: the cost of moving the bytes out of
      // this tier (the reference's np.copy), without allocating.
      let copyMs = 0;
      let wallMs = 0;
      let remaining = entry.size;
      const perJob = Math.max(1, Math.floor(COPY_JOB_BYTES / this.pageBytes));
      for (let first = 0; first < entry.pages.length; first += perJob) {
        const pairs: CopyPair[] = [];
        for (const page of entry.pages.slice(first, first + perJob)) {
          const n = Math.min(page.length, remaining);
          pairs.push({ dst: this.scratch.subarray(0, n), src: page.subarray(0, n) });
          remaining -= n;
        }
        const [copy, wall] = await this.copyTimed(pairs);
        copyMs += copy;
        wallMs += wall;
        // Inline copies of a multi-GiB entry must not hold the event loop: let others run between slices.
        if (!this.copier.offThread && first + perJob < entry.pages.length) await setImmediate();
      }
      return { timing: timing(Math.max(0, wallMs - copyMs), copyMs), bytes: entry.size };
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

  /** Entries take whole pages. */
  allocatedBytes(size: number): number {
    return Math.ceil(size / this.pageBytes) * this.pageBytes;
  }

  keys(): Iterable<string> {
    return this.entries.keys();
  }

  /** Size of a stored entry, or undefined. */
  sizeOf(key: string): number | undefined {
    return this.entries.get(key)?.size;
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
