// What one request does to a block-granular cache (--kv-block-tokens, Mooncake traces;
// docs/workloads.md#block-granular-kv-cache). The context is a chain of blocks keyed by prefix hash:
//   1. lookup: read the longest present prefix of the chain, block by block, from whatever tier holds
//      each block (an engine loads the cached prefix and stops at the first block it lacks);
//   2. prefill: write every block after it (recomputed KV, stored for the next request);
//   3. RAG chunk reads, as in whole-request mode;
//   4. decode: one read of the chain's blocks per decode batch (the reference's re-read per batch,
//      here per block), then the simulated generation.
// The chain is then marked recent head-last (TieredCache.keepRecent), so LRU evicts it tail first.
// Multi-turn history and shared system prompts are part of the chain (workload/blocks.ts), so the
// whole-request mode's separate reload and prompt entries have no step here.
import type { TierName } from '../tiers/backend.js';
import type { PoolOrigin } from '../tiers/pool-names.js';
import { blockChain, chainTokens } from '../workload/blocks.js';
import type { KvBlock, TokenSegment } from '../workload/blocks.js';
import { decodeBatchReads, hasDecode, prefillTokens } from '../workload/request.js';
import type { Request } from '../workload/request.js';
import type { Steps } from '../util/steps.js';
import type { Rng } from '../util/rng.js';
import { prepopulatedChain } from './prepare.js';
import { RequestStopped, stopCheck } from './pipeline-types.js';
import type { BlockMode, PipelineOptions, PipelineOutcome } from './pipeline-types.js';

export type { BlockMode } from './pipeline-types.js';

/**
 * The segments of a request the workload does not name blocks for: its shared system prompt (the
 * same id for every request that starts with it), then its body — a conversation's tokens (the same id
 * across its turns, so a turn shares the earlier turn's blocks as far as both reach) or the request's own.
 */
export function requestSegments(req: Request): TokenSegment[] {
  const segments: TokenSegment[] = [];
  if (req.systemPrompt !== undefined) segments.push({ id: `prompt:${req.systemPrompt.id}`, tokens: req.systemPrompt.tokens });
  const body = req.systemPrompt !== undefined ? prefillTokens(req) : req.contextTokens;
  segments.push({ id: `body:${req.conversationId ?? req.cacheKey}`, tokens: body });
  return segments;
}

/** The request's chain: the source's own when it names one, else derived from its segments. */
export function requestChain(req: Request, blockTokens: number): readonly KvBlock[] {
  return req.blocks ?? blockChain(requestSegments(req), blockTokens);
}

/**
 * The chain a request reads: its own, or in a decode-only run (disaggregated decode: the KV was written
 * elsewhere) one of the pre-populated chains at random, looked up and read but never written.
 */
function chainOf(req: Request, o: PipelineOptions, mode: BlockMode, rng: Rng): readonly KvBlock[] {
  if (!o.decodeOnly) return requestChain(req, mode.blockTokens);
  const keys = o.prepopulatedKeys ?? [];
  if (keys.length === 0) throw new Error('decode-only mode needs pre-populated entries');
  return prepopulatedChain(rng.pick(keys), mode.blockTokens);
}

export function* blockRequestSteps(req: Request, o: PipelineOptions, mode: BlockMode, rng: Rng): Steps<PipelineOutcome> {
  const { cache } = o;
  const stats = mode.stats;
  const chain = chainOf(req, o, mode, rng);
  let storageMs = 0;
  let prefillMs: number | undefined;
  let decodeMs: number | undefined;
  let hitTokens = 0;
  let hitLoadMs = 0;
  const checkStop = stopCheck(o);
  const outcome = (completed: boolean, generationMs: number): PipelineOutcome => ({
    completed,
    storageMs,
    generationMs,
    ...(prefillMs !== undefined ? { prefillMs } : {}),
    ...(decodeMs !== undefined ? { decodeMs } : {}),
    multiTurnHits: 0,
    multiTurnMisses: 0,
    promptTokens: chainTokens(chain),
    hitTokens,
    hitLoadMs,
  });

  try {
    {
      // 1. The longest present prefix, read block by block.
      checkStop();
      const hitTiers: TierName[] = [];
      const origins: Array<PoolOrigin | undefined> = [];
      for (const block of chain) {
        checkStop();
        // A block being written by another request is waited for (the key's lock), then read; in a
        // shared pool, a block not in this server's own tiers is looked up through the storage first.
        const r = yield* cache.lookupSteps(block.key, block.tokens, 'prefill', 'user');
        storageMs += r.latencyMs;
        if (r.tier === null) break; // the prefix ends at the first block not cached (counted a miss)
        hitTiers.push(r.tier);
        origins.push(r.origin);
        hitTokens += block.tokens;
        hitLoadMs += r.latencyMs;
        stats.recordSize(r.size ?? cache.sizeOf(block.tokens));
      }
      // A lookup cut short by the end of the run (a read stopped mid-block reads as a miss) is no
      // lookup: neither its tokens asked nor its hits are counted.
      checkStop();
      // Every block after the first missing one is a miss too (not looked up: an engine stops there).
      cache.countMisses(Math.max(0, chain.length - hitTiers.length - 1));
      stats.recordLookup(chain, hitTiers);
      // Counted with the lookup, as its tokens asked are: a request stopped mid-lookup counts neither.
      origins.forEach((origin, i) => {
        const block = chain[i];
        if (origin !== undefined && block !== undefined) mode.pool?.recordHit(origin, block.tokens);
      });

      // 2. Prefill: the blocks after it are computed and stored (not by a decode-only server).
      const before = storageMs;
      for (let i = o.decodeOnly ? chain.length : hitTiers.length; i < chain.length; i++) {
        const block = chain[i];
        if (block === undefined) break;
        checkStop();
        const r = yield* cache.allocateSteps(block.key, block.tokens, 'prefill');
        storageMs += r.latencyMs;
        if (r.wrote) stats.recordSize(cache.sizeOf(block.tokens));
        stats.recordWrite(r.wrote ? 'written' : r.ok ? 'found_written' : 'not_written', block.tokens);
      }
      if (!o.decodeOnly) prefillMs = storageMs - before;
    }

    // 3. RAG: read the retrieved chunks.
    for (const chunk of req.ragRetrieval?.chunks ?? []) {
      checkStop();
      storageMs += (yield* cache.accessSteps(chunk.key, 'decode', 'user')).latencyMs;
    }

    // 4. Decode: the chain's blocks once per batch of generated tokens.
    if (!o.prefillOnly && hasDecode(req.phase)) {
      const before = storageMs;
      const reads = decodeBatchReads(req.generationTokens, o.decodeBatchSize);
      for (let n = 0; n < reads; n++) {
        for (const block of chain) {
          checkStop();
          const r = yield* cache.lookupSteps(block.key, block.tokens, 'decode', 'user', false);
          storageMs += r.latencyMs;
          if (r.tier === null) checkStop(); // a read cut short by the end of the run is no miss
          stats.recordDecodeRead(r.tier !== null);
          if (r.tier !== null) stats.recordSize(r.size ?? cache.sizeOf(block.tokens));
        }
      }
      decodeMs = storageMs - before;
    }
    for (let i = chain.length - 1; i >= 0; i--) cache.keepRecent(chain[i]?.key ?? '');

    // 5. Generation: the worker is busy for the simulated decode time.
    checkStop();
    const generationMs = req.generationTokens * o.secondsPerToken * 1000;
    if (generationMs > 0) yield o.sleep(generationMs);
    checkStop();
    return outcome(true, generationMs);
  } catch (e) {
    if (e instanceof RequestStopped) return outcome(false, 0);
    throw e;
  }
}
