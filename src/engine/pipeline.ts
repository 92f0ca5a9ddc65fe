// What one request does to the cache (docs/reference-compat.md#rc-27): shared prefix, multi-turn full-context reload,
// prefill write, RAG chunk reads, decode probe plus one full re-read per decode batch, then the
// simulated token generation. Storage latency is the sum of the backend-timed operations.
import { blockRequestSteps } from './block-pipeline.js';
import { RequestStopped, stopCheck } from './pipeline-types.js';
import type { PipelineOptions, PipelineOutcome } from './pipeline-types.js';
import { decodeBatchReads, hasDecode, hasPrefill, prefillTokens } from '../workload/request.js';
import type { Request } from '../workload/request.js';
import type { Rng } from '../util/rng.js';
import { settle } from '../util/steps.js';
import type { Steps } from '../util/steps.js';

export type { PipelineOptions, PipelineOutcome } from './pipeline-types.js';

export function processRequest(req: Request, o: PipelineOptions, rng: Rng): Promise<PipelineOutcome> {
  return settle(requestSteps(req, o, rng));
}

/**
 * processRequest as a step function (util/steps.ts): with immediate tiers (trace mode) a whole
 * request runs without a promise per cache operation.
 */
export function* requestSteps(req: Request, o: PipelineOptions, rng: Rng): Steps<PipelineOutcome> {
  if (o.blocks !== undefined) return yield* blockRequestSteps(req, o, o.blocks, rng);
  const { cache } = o;
  let storageMs = 0;
  let multiTurnHits = 0;
  let multiTurnMisses = 0;
  let prefillMs: number | undefined;
  let decodeMs: number | undefined;
  let historyTokens = 0; // earlier turns' tokens that reached this request from cache
  let hitTokens = 0;
  let hitLoadMs = 0;
  const hit = (tokens: number, latencyMs: number): void => {
    hitTokens += tokens;
    hitLoadMs += latencyMs;
  };
  const step = <T extends { latencyMs: number }>(r: T): T => {
    storageMs += r.latencyMs;
    return r;
  };
  const checkStop = stopCheck(o);
  const outcome = (completed: boolean, generationMs: number): PipelineOutcome => ({
    completed,
    storageMs,
    generationMs,
    ...(prefillMs !== undefined ? { prefillMs } : {}),
    ...(decodeMs !== undefined ? { decodeMs } : {}),
    multiTurnHits,
    multiTurnMisses,
    promptTokens: req.contextTokens + historyTokens,
    hitTokens,
    hitLoadMs,
  });

  try {
    // 1. Shared system prompt: written once at first sight, a real read afterwards (docs/reference-compat.md#rc-29).
    if (o.prefix !== undefined && req.systemPrompt !== undefined) {
      checkStop();
      const match = o.prefix.record(req.systemPrompt);
      const key = req.systemPrompt.key;
      // First sight writes the prompt's entry, unless it was pre-populated (decode-only runs).
      if (match.firstSight && cache.locate(key) === null) step(yield* cache.allocateSteps(key, req.systemPrompt.tokens, 'prefill'));
      else {
        const read = step(yield* cache.accessSteps(key, req.phase, 'system'));
        if (read.tier === null)
          step(yield* cache.allocateSteps(key, req.systemPrompt.tokens, 'prefill')); // evicted: write it again
        else hit(req.systemPrompt.tokens, read.latencyMs);
      }
    }
    const context = o.prefix !== undefined ? prefillTokens(req) : req.contextTokens;

    if (!o.decodeOnly) {
      // 2a. Multi-turn: reload every earlier turn of the conversation.
      if (o.multiTurn && req.turn > 1) {
        for (const prev of req.previousTurnKeys) {
          checkStop();
          const before = cache.entryTokens(prev);
          const read = step(yield* cache.accessSteps(prev, 'decode', 'multi_turn'));
          if (read.tier === null) multiTurnMisses++;
          else {
            multiTurnHits++;
            const tokens = cache.entryTokens(prev) ?? before ?? 0; // a turn written while we waited is known only after
            historyTokens += tokens;
            hit(tokens, read.latencyMs);
          }
        }
      }
      // 2b. Prefill: write this request's KV entry.
      if (hasPrefill(req.phase)) {
        checkStop();
        prefillMs = step(yield* cache.allocateSteps(req.cacheKey, context, 'prefill')).latencyMs;
      }
    }

    // 3. RAG: read the retrieved chunks.
    for (const chunk of req.ragRetrieval?.chunks ?? []) {
      checkStop();
      step(yield* cache.accessSteps(chunk.key, 'decode', 'user'));
    }

    // 4. Decode: one probe, then the whole entry again per batch of generated tokens.
    if (!o.prefillOnly && hasDecode(req.phase)) {
      checkStop();
      const key = o.decodeOnly ? pickKey(o.prepopulatedKeys, rng) : req.cacheKey;
      const before = storageMs;
      const probe = step(yield* cache.accessSteps(key, 'decode'));
      if (probe.tier === null) {
        if (!o.decodeOnly) step(yield* cache.allocateSteps(key, context, 'prefill'));
      } else {
        const reads = decodeBatchReads(req.generationTokens, o.decodeBatchSize);
        for (let i = 0; i < reads; i++) {
          checkStop();
          step(yield* cache.accessSteps(key, 'decode'));
        }
      }
      decodeMs = storageMs - before;
    }

    // 5. Generation: the worker is busy for the simulated decode time.
    checkStop();
    const generationMs = req.generationTokens * o.secondsPerToken * 1000;
    if (generationMs > 0) yield o.sleep(generationMs);
    checkStop(); // a generation cut short by the end of the run is not a completed request
    return outcome(true, generationMs);
  } catch (e) {
    if (e instanceof RequestStopped) return outcome(false, 0);
    throw e;
  }
}

function pickKey(keys: readonly string[] | undefined, rng: Rng): string {
  if (keys === undefined || keys.length === 0) throw new Error('decode-only mode needs pre-populated entries');
  return rng.pick(keys);
}
