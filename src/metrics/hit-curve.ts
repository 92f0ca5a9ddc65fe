// The prefix hit rate of a block-granular cache at every capacity, from one pass over the requests
// (`kv-cache size`, docs/sizing.md). A request's block i is served from the cache when blocks 0 … i
// are all cached (the run reads the longest present prefix and stops at the first missing block), so
// it hits at every capacity ≥ the largest stack distance among blocks 0 … i (its "prefix distance").
// Each block adds its tokens, bytes and share of the prefill compute saved to the bin of its prefix
// distance; the hit rate at capacity C is the sum of the bins up to C. After the lookup the request
// leaves its chain on top of the stack head first, as the run's keepRecent does (tail evicted first).
//
// Bins: 64 per octave of bytes (a capacity is exact at each bin edge, and the capacity reaching a share
// of the ideal rate is found to within 1.1 %), plus one bin per capacity the user names, exact there.
import { LruStack } from './lru-stack.js';

/** Bins per octave of bytes. */
export const BINS_PER_OCTAVE = 64;
/** Bin edges up to 2^62 bytes (4 EiB). */
const OCTAVES = 62;
const GRID_BINS = OCTAVES * BINS_PER_OCTAVE + 1;

/** Capacity (bytes, whole) at the upper edge of grid bin b: floor(2^(b / 64)). */
export function gridCapacity(b: number): number {
  return Math.floor(2 ** (b / BINS_PER_OCTAVE));
}

const EDGES = Array.from({ length: GRID_BINS }, (_, b) => gridCapacity(b));

/** The grid bin of a distance: the first edge ≥ it. */
function gridBin(distance: number): number {
  let b = Math.max(0, Math.min(GRID_BINS - 1, Math.ceil(Math.log2(distance) * BINS_PER_OCTAVE)));
  while (b < GRID_BINS - 1 && distance > (EDGES[b] ?? Infinity)) b++;
  while (b > 0 && distance <= (EDGES[b - 1] ?? 0)) b--;
  return b;
}

/** Requests' blocks laid out flat: block ids (as the stack takes them), tokens and bytes, one entry per block. */
export interface FlatChains {
  readonly ids: Int32Array;
  readonly tokens: Int32Array;
  readonly bytes: Float64Array;
}

/** One block of a request as the curve sees it. */
export interface SizedBlock {
  /** The block's key, or a number a source interned it to (distinct keys, distinct numbers). */
  readonly key: string | number;
  readonly tokens: number;
  readonly bytes: number;
}

/** What the hits at (or up to) a capacity add up to. */
export interface HitTotals {
  tokens: number;
  blocks: number;
  bytes: number;
  /** Prefill compute saved by the hits, in the unit of the gain function (GPU-seconds). */
  gain: number;
}

const zero = (): HitTotals => ({ tokens: 0, blocks: 0, bytes: 0, gain: 0 });

/**
 * Compute saved when a request of `contextTokens` finds its first `hitTokens` cached: the curve
 * credits each block with saved(after) − saved(before). `whole(contextTokens)`, the part that does not
 * depend on the hits, is worked out once per request and handed to each `saved`.
 */
export interface GainModel {
  whole(contextTokens: number): number;
  saved(whole: number, contextTokens: number, hitTokens: number): number;
}

class Bins {
  readonly tokens: Float64Array;
  readonly blocks: Float64Array;
  readonly bytes: Float64Array;
  readonly gain: Float64Array;
  constructor(n: number) {
    this.tokens = new Float64Array(n);
    this.blocks = new Float64Array(n);
    this.bytes = new Float64Array(n);
    this.gain = new Float64Array(n);
  }
  add(b: number, tokens: number, bytes: number, gain: number): void {
    this.tokens[b] = (this.tokens[b] ?? 0) + tokens;
    this.blocks[b] = (this.blocks[b] ?? 0) + 1;
    this.bytes[b] = (this.bytes[b] ?? 0) + bytes;
    this.gain[b] = (this.gain[b] ?? 0) + gain;
  }
  /** Totals of bins 0 … b. */
  cumulative(): HitTotals[] {
    const out: HitTotals[] = [];
    const run = zero();
    for (let b = 0; b < this.tokens.length; b++) {
      run.tokens += this.tokens[b] ?? 0;
      run.blocks += this.blocks[b] ?? 0;
      run.bytes += this.bytes[b] ?? 0;
      run.gain += this.gain[b] ?? 0;
      out.push({ ...run });
    }
    return out;
  }
}

export interface HitCurveOptions {
  /** Capacities (bytes) at which the curve must be exact, besides the grid. */
  readonly capacities?: readonly number[];
  readonly gain?: GainModel;
}

/** A point of the curve: the hits of an LRU cache of `capacity` bytes. */
export interface CurvePoint extends HitTotals {
  readonly capacity: number;
}

/** Prefix hits at every capacity, accumulated over requests; the stacks are the caller's (one per server). */
export class HitCurve {
  private readonly grid = new Bins(GRID_BINS);
  private readonly probes: readonly number[];
  private readonly probeBins: Bins;
  /** Blocks never referenced before (misses at any capacity). */
  private readonly cold = zero();
  private readonly asked = { requests: 0, tokens: 0, blocks: 0, bytes: 0, gain: 0 };
  private references = 0;
  /** The largest bytes of one request's chain (the curve is exact from there on, docs/sizing.md). */
  private maxChain = 0;
  private maxBlock = 0;
  private readonly gain: GainModel | undefined;

  constructor(o: HitCurveOptions = {}) {
    this.probes = [...new Set(o.capacities ?? [])].sort((a, b) => a - b);
    this.probeBins = new Bins(this.probes.length + 1);
    this.gain = o.gain;
  }

  /**
   * One request served by the cache whose recency is `stack`; `scale` multiplies its distances (N
   * private servers of C ÷ N bytes each: a block cached at distance d on one of them needs C ≥ N·d).
   * Keys are numbered by the stack (`LruStack.idOf`).
   */
  addRequest(stack: LruStack, chain: readonly SizedBlock[], scale = 1): void {
    const n = chain.length;
    const ids = new Int32Array(n);
    const tokens = new Int32Array(n);
    const bytes = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const b = chain[i];
      ids[i] = stack.idOf(b.key);
      tokens[i] = b.tokens;
      bytes[i] = b.bytes;
    }
    this.addChain(stack, { ids, tokens, bytes }, 0, n, scale);
  }

  /**
   * addRequest for the blocks `from` … `to − 1` of flat arrays (block ids as the stack takes them,
   * tokens, bytes): no object or array per request, the form sizing hands over (engine/sizing.ts).
   */
  addChain(stack: LruStack, chain: FlatChains, from: number, to: number, scale = 1): void {
    const { ids, tokens, bytes } = chain;
    const n = to - from;
    let contextTokens = 0;
    let chainBytes = 0;
    for (let i = from; i < to; i++) {
      const size = bytes[i];
      contextTokens += tokens[i];
      chainBytes += size;
      if (size > this.maxBlock) this.maxBlock = size;
    }
    if (chainBytes > this.maxChain) this.maxChain = chainBytes;
    this.asked.requests++;
    this.asked.tokens += contextTokens;
    this.asked.blocks += n;
    this.asked.bytes += chainBytes;
    this.references += n;
    const model = this.gain;
    const whole = model?.whole(contextTokens) ?? 0;
    if (model !== undefined) this.asked.gain += model.saved(whole, contextTokens, contextTokens);

    // The lookup: block i is served at every capacity ≥ the prefix's largest distance.
    let prefixDistance = 0;
    let hitBefore = 0;
    let gainBefore = 0;
    // The bins of the prefix distance (0's to start with), found again only when it grows: it often
    // stays for several blocks.
    let gridAt = 0;
    let probeAt = 0;
    let i = from;
    for (; i < to; i++) {
      const t = tokens[i];
      const size = bytes[i];
      const d = stack.distance(ids[i]) * scale;
      if (d > prefixDistance) {
        prefixDistance = d;
        if (prefixDistance === Infinity) break;
        gridAt = gridBin(prefixDistance);
        probeAt = lowerBound(this.probes, prefixDistance);
      }
      let gain = 0;
      if (model !== undefined) {
        const after = model.saved(whole, contextTokens, hitBefore + t);
        gain = after - gainBefore;
        gainBefore = after;
      }
      hitBefore += t;
      this.grid.add(gridAt, t, size, gain);
      this.probeBins.add(probeAt, t, size, gain);
    }
    // From the first block never seen before on, the rest of the chain misses at every capacity.
    for (; i < to; i++) {
      this.cold.tokens += tokens[i];
      this.cold.blocks++;
      this.cold.bytes += bytes[i];
    }
    // The chain ends on top of the stack, head newest.
    for (let j = to - 1; j >= from; j--) stack.touch(ids[j], bytes[j]);
  }

  /** Requests, tokens, blocks, bytes and (with a gain function) the compute of every lookup. */
  totals(): { requests: number; references: number; tokens: number; blocks: number; bytes: number; gain: number } {
    return { ...this.asked, references: this.references };
  }

  /** Hits with unlimited capacity: every block whose prefix was referenced before. */
  ideal(): HitTotals {
    return this.grid.cumulative().at(-1) ?? zero();
  }

  /** The largest chain and block bytes seen. */
  extremes(): { maxChainBytes: number; maxBlockBytes: number } {
    return { maxChainBytes: this.maxChain, maxBlockBytes: this.maxBlock };
  }

  /** Hits at each grid edge (64 per octave from 1 byte), cumulative. */
  gridPoints(): CurvePoint[] {
    return this.grid.cumulative().map((t, b) => ({ capacity: EDGES[b] ?? 0, ...t }));
  }

  /** Hits at each of the named capacities, exactly, in ascending order. */
  probePoints(): CurvePoint[] {
    const cum = this.probeBins.cumulative();
    return this.probes.map((capacity, i) => ({ capacity, ...(cum[i] ?? zero()) }));
  }
}

/** The index of the first capacity ≥ d (capacities.length when none is). */
function lowerBound(capacities: readonly number[], d: number): number {
  let lo = 0;
  let hi = capacities.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((capacities[mid] ?? Infinity) < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
