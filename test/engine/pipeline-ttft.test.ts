// What the pipeline reports for the modelled TTFT (issue 23): prompt tokens (context + earlier turns
// reloaded from cache), hit tokens (system-prompt hit, multi-turn hits) and the hit reads' summed
// latency. Reads take a fixed 7 ms on a storage tier made for the purpose, so the sums are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { processRequest } from '../../src/engine/pipeline.js';
import type { PipelineOptions } from '../../src/engine/pipeline.js';
import type { Request } from '../../src/workload/request.js';
import { testPipelineOptions, testRequest } from './requests.js';
import { PrefixMatcher, makeSystemPrompt } from '../../src/workload/prefix.js';
import { MemoryBackend } from '../../src/tiers/memory.js';
import type { ChunkSink, ReadResult } from '../../src/tiers/backend.js';
import { Rng } from '../../src/util/rng.js';
import { makeCache, TINY_BPT } from '../cache/helpers.js';

const READ_MS = 7;

/** A memory tier whose reads report 7 ms, whatever they took. */
class FixedReadTier extends MemoryBackend {
  override async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const r = await super.read(key, sink);
    return { ...r, timing: { totalMs: READ_MS, hostMs: 0, deviceMs: READ_MS } };
  }
}

function req(over: Partial<Request>): Request {
  return testRequest({ generationTokens: 0, phase: 'prefill', ...over });
}

function options(over: Partial<PipelineOptions> & Pick<PipelineOptions, 'cache'>): PipelineOptions {
  return testPipelineOptions(over);
}

const fixedCache = (tensorParallel = 1) => makeCache({ storage: new FixedReadTier('storage', 4096), tensorParallel });

test('a first request: its context is the prompt, nothing is served from cache', async () => {
  const { cache } = fixedCache();
  const out = await processRequest(req({ contextTokens: 300 }), options({ cache }), new Rng(1));
  assert.deepEqual([out.promptTokens, out.hitTokens, out.hitLoadMs], [300, 0, 0]);
});

test('multi-turn: earlier turns that hit add their tokens to the prompt and the hits; a missed one adds nothing', async () => {
  const { cache } = fixedCache();
  await cache.allocate('c_turn_1', 40);
  await cache.allocate('c_turn_2', 60);
  const out = await processRequest(
    req({ cacheKey: 'c_turn_4', turn: 4, contextTokens: 100, previousTurnKeys: ['c_turn_1', 'c_turn_2', 'c_turn_3'] }),
    options({ cache }),
    new Rng(1),
  );
  assert.deepEqual([out.multiTurnHits, out.multiTurnMisses], [2, 1]);
  assert.deepEqual([out.promptTokens, out.hitTokens, out.hitLoadMs], [200, 100, 2 * READ_MS]);
});

test('entry tokens survive tensor parallelism (entries divided by the ranks)', async () => {
  const { cache } = fixedCache(4);
  await cache.allocate('c_turn_1', 37);
  assert.equal(cache.entryTokens('c_turn_1'), 37);
  assert.equal(cache.entries.get('c_turn_1')?.size, Math.floor((37 * TINY_BPT) / 4));
  assert.equal(cache.entryTokens('absent'), undefined);
});

test('a shared system prompt: a miss at first sight, then a hit of its tokens (already inside the context)', async () => {
  const { cache } = fixedCache();
  const prefix = new PrefixMatcher(TINY_BPT);
  const systemPrompt = makeSystemPrompt('You are a helpful assistant.');
  const o = options({ cache, prefix, multiTurn: false });
  const first = await processRequest(req({ systemPrompt, cacheKey: 'a' }), o, new Rng(1));
  assert.deepEqual([first.promptTokens, first.hitTokens, first.hitLoadMs], [100, 0, 0]);
  const second = await processRequest(req({ systemPrompt, cacheKey: 'b' }), o, new Rng(1));
  assert.deepEqual([second.promptTokens, second.hitTokens, second.hitLoadMs], [100, systemPrompt.tokens, READ_MS]);
});

test('decode reads after the prefill are not part of the time to first token', async () => {
  const { cache } = fixedCache();
  const out = await processRequest(req({ phase: 'both', generationTokens: 64 }), options({ cache }), new Rng(1));
  assert.ok(out.storageMs >= 3 * READ_MS); // probe + 2 batch reads happened
  assert.deepEqual([out.hitTokens, out.hitLoadMs], [0, 0]);
});

test('block mode: the prompt is the chain, the hits its present prefix, each hit block read once in 7 ms', async () => {
  const { cache, rec } = fixedCache();
  const o = options({ cache, blocks: { blockTokens: 16, stats: rec.blocks } });
  await processRequest(req({ conversationId: 'c', contextTokens: 40 }), o, new Rng(1));
  const out = await processRequest(req({ conversationId: 'c', contextTokens: 70 }), o, new Rng(1));
  assert.equal(out.promptTokens, 70);
  assert.equal(out.hitTokens, 32, 'the two full blocks of 16; the third (8 tokens then, 16 now) is new');
  assert.equal(out.hitLoadMs, 2 * READ_MS);
});
