// What block-granular runs add to the measurement (--kv-block-tokens, Mooncake traces): per request,
// the tokens and blocks its context asked for, the longest present prefix found in each tier, the
// blocks written after it; the decode re-reads; the sizes of the blocks the tiers moved; and the hit
// rate the workload itself implied (every block key seen before is a hit, with unlimited capacity), so a
// cache too small for the working set shows as an achieved rate below the ideal one.
import { TIER_NAMES } from '../tiers/backend.js';
import type { TierName } from '../tiers/backend.js';

/** Distinct keys remembered for the ideal hit rate; past it, the ideal is marked as not tracked. */
export const MAX_IDEAL_KEYS = 1 << 22;

/** Sizes are counted in power-of-two buckets: bucket k holds sizes in (2^(k−1), 2^k] bytes. */
const SIZE_BUCKETS = 48;

/** A block of a request's chain, as the lookup saw it. */
export interface LookedUpBlock {
  readonly key: string;
  readonly tokens: number;
}

export interface BlockSizeBucket {
  /** Upper bound of the bucket, bytes (inclusive). */
  readonly uptoBytes: number;
  readonly blocks: number;
}

export interface BlockStatsSnapshot {
  readonly requests: number;
  readonly tokensAsked: number;
  readonly blocksAsked: number;
  readonly hitTokens: Readonly<Record<TierName, number>>;
  readonly hitBlocks: Readonly<Record<TierName, number>>;
  /** Blocks this run wrote after the present prefix (each written once, by the request that missed it). */
  readonly blocksWritten: number;
  readonly tokensWritten: number;
  /** Missing blocks another request had written meanwhile (not written again: an engine would not). */
  readonly blocksFoundWritten: number;
  /** Missing blocks that could not be written (no tier had room, a failed write, the run ending). */
  readonly blocksNotWritten: number;
  readonly decodeBlockReads: number;
  readonly decodeBlockMisses: number;
  /** Sizes of the blocks written and read (prefix hits and decode re-reads). */
  readonly sizes: {
    readonly count: number;
    readonly minBytes: number;
    readonly maxBytes: number;
    readonly totalBytes: number;
    readonly buckets: readonly BlockSizeBucket[];
  };
  /** The workload's own reuse: a block whose key was asked before is an ideal hit. */
  readonly ideal: { readonly tracked: boolean; readonly hitTokens: number; readonly hitBlocks: number };
}

const zeroByTier = (): Record<TierName, number> => ({ gpu: 0, cpu: 0, storage: 0 });

/** The reuse a stream of chains implies: a block whose key was seen before is a hit (bounded memory). */
export class IdealReuse {
  private readonly seen = new Set<string>();
  tracked = true;
  tokensAsked = 0;
  hitTokens = 0;
  hitBlocks = 0;

  add(chain: readonly LookedUpBlock[]): void {
    for (const { key, tokens } of chain) {
      this.tokensAsked += tokens;
      if (!this.tracked) continue;
      if (this.seen.has(key)) {
        this.hitTokens += tokens;
        this.hitBlocks++;
      } else if (this.seen.size < MAX_IDEAL_KEYS) this.seen.add(key);
      else this.tracked = false;
    }
  }

  /** Counters to zero; the keys seen stay (reuse of blocks seen before the window still counts). */
  reset(): void {
    this.tokensAsked = 0;
    this.hitTokens = 0;
    this.hitBlocks = 0;
  }
}

/** Per-block counters of a block-granular run, reset with the Recorder after preparation. */
export class BlockStats {
  private requests = 0;
  private tokensAsked = 0;
  private blocksAsked = 0;
  private hitTokens = zeroByTier();
  private hitBlocks = zeroByTier();
  private blocksWritten = 0;
  private tokensWritten = 0;
  private blocksFoundWritten = 0;
  private blocksNotWritten = 0;
  private decodeBlockReads = 0;
  private decodeBlockMisses = 0;
  private sizeCount = 0;
  private minBytes = Infinity;
  private maxBytes = 0;
  private totalBytes = 0;
  private buckets = new Array<number>(SIZE_BUCKETS).fill(0);
  private readonly ideal = new IdealReuse();

  /** A request's prefix lookup: its chain, and the tier of each block of the present prefix (from the head). */
  recordLookup(chain: readonly LookedUpBlock[], hitTiers: readonly TierName[]): void {
    this.requests++;
    chain.forEach(({ tokens }, i) => {
      this.blocksAsked++;
      this.tokensAsked += tokens;
      const tier = hitTiers[i];
      if (tier !== undefined) {
        this.hitTokens[tier] += tokens;
        this.hitBlocks[tier]++;
      }
    });
    this.ideal.add(chain);
  }

  /** The outcome of writing one missing block. */
  recordWrite(outcome: 'written' | 'found_written' | 'not_written', tokens: number): void {
    if (outcome === 'written') {
      this.blocksWritten++;
      this.tokensWritten += tokens;
    } else if (outcome === 'found_written') this.blocksFoundWritten++;
    else this.blocksNotWritten++;
  }

  recordDecodeRead(hit: boolean): void {
    this.decodeBlockReads++;
    if (!hit) this.decodeBlockMisses++;
  }

  /** A block the tiers moved (written or read), by its size. */
  recordSize(bytes: number): void {
    this.sizeCount++;
    this.totalBytes += bytes;
    if (bytes < this.minBytes) this.minBytes = bytes;
    if (bytes > this.maxBytes) this.maxBytes = bytes;
    const k = Math.min(SIZE_BUCKETS - 1, bytes <= 1 ? 0 : Math.ceil(Math.log2(bytes)));
    this.buckets[k] = (this.buckets[k] ?? 0) + 1;
  }

  /** Counters to zero; the keys seen stay, so reuse of blocks written before the window still counts as ideal. */
  reset(): void {
    this.requests = 0;
    this.tokensAsked = 0;
    this.blocksAsked = 0;
    this.hitTokens = zeroByTier();
    this.hitBlocks = zeroByTier();
    this.blocksWritten = 0;
    this.tokensWritten = 0;
    this.blocksFoundWritten = 0;
    this.blocksNotWritten = 0;
    this.decodeBlockReads = 0;
    this.decodeBlockMisses = 0;
    this.sizeCount = 0;
    this.minBytes = Infinity;
    this.maxBytes = 0;
    this.totalBytes = 0;
    this.buckets = new Array<number>(SIZE_BUCKETS).fill(0);
    this.ideal.reset();
  }

  snapshot(): BlockStatsSnapshot {
    const buckets: BlockSizeBucket[] = [];
    this.buckets.forEach((blocks, k) => {
      if (blocks > 0) buckets.push({ uptoBytes: 2 ** k, blocks });
    });
    return {
      requests: this.requests,
      tokensAsked: this.tokensAsked,
      blocksAsked: this.blocksAsked,
      hitTokens: { ...this.hitTokens },
      hitBlocks: { ...this.hitBlocks },
      blocksWritten: this.blocksWritten,
      tokensWritten: this.tokensWritten,
      blocksFoundWritten: this.blocksFoundWritten,
      blocksNotWritten: this.blocksNotWritten,
      decodeBlockReads: this.decodeBlockReads,
      decodeBlockMisses: this.decodeBlockMisses,
      sizes: {
        count: this.sizeCount,
        minBytes: this.sizeCount === 0 ? 0 : this.minBytes,
        maxBytes: this.maxBytes,
        totalBytes: this.totalBytes,
        buckets,
      },
      ideal: { tracked: this.ideal.tracked, hitTokens: this.ideal.hitTokens, hitBlocks: this.ideal.hitBlocks },
    };
  }
}

/** Hit tokens over every tier. */
export function totalHitTokens(s: Pick<BlockStatsSnapshot, 'hitTokens'>): number {
  return TIER_NAMES.reduce((n, t) => n + s.hitTokens[t], 0);
}

/** Hit blocks over every tier. */
export function totalHitBlocks(s: Pick<BlockStatsSnapshot, 'hitBlocks'>): number {
  return TIER_NAMES.reduce((n, t) => n + s.hitBlocks[t], 0);
}
