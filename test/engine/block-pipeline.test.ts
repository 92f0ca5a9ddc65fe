// One request through a block-granular cache (engine/block-pipeline.ts): the longest present prefix is
// read, the rest written, decode re-reads the chain per batch, and LRU evicts a chain from its tail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { processRequest } from '../../src/engine/pipeline.js';
import type { PipelineOptions } from '../../src/engine/pipeline.js';
import { requestChain } from '../../src/engine/block-pipeline.js';
import type { Request } from '../../src/workload/request.js';
import { testPipelineOptions, testRequest } from './requests.js';
import { PrefixMatcher, makeSystemPrompt } from '../../src/workload/prefix.js';
import { ConversationManager } from '../../src/workload/conversation.js';
import { createSessions } from '../../src/workload/session.js';
import { generateUsers } from '../../src/workload/users.js';
import { Rng } from '../../src/util/rng.js';
import { GiB } from '../../src/util/units.js';
import { makeCache, TINY_BPT } from '../cache/helpers.js';
import type { TieredCache } from '../../src/cache/tiered-cache.js';
import type { Recorder } from '../../src/metrics/recorder.js';

function req(over: Partial<Request>): Request {
  return testRequest({ generationTokens: 0, ...over });
}

function options(cache: TieredCache, rec: Recorder, over: Partial<PipelineOptions> = {}): PipelineOptions {
  return testPipelineOptions({ cache, blocks: { blockTokens: 16, stats: rec.blocks }, ...over });
}

test('a first request writes its whole chain; a second sharing the conversation reads the shared blocks and writes the rest', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB, kind: 'null' });
  const o = options(cache, rec);
  await processRequest(req({ conversationId: 'c1', contextTokens: 40 }), o, new Rng(1));
  let s = rec.blocks.snapshot();
  assert.equal(s.blocksWritten, 3); // 16 + 16 + 8
  assert.equal(s.tokensWritten, 40);
  assert.equal(rec.traffic.cpu.writeBytes, 40 * TINY_BPT);
  // Turn 2 of the same conversation, 50 tokens: blocks 0 and 1 are shared, block 2 (8 → 16 tokens) is new.
  await processRequest(req({ id: 'r2', cacheKey: 'c1_turn_2', conversationId: 'c1', turn: 2, contextTokens: 50 }), o, new Rng(1));
  s = rec.blocks.snapshot();
  assert.equal(s.hitBlocks.cpu, 2);
  assert.equal(s.hitTokens.cpu, 32);
  assert.equal(s.tokensAsked, 90);
  assert.equal(s.blocksWritten, 3 + 2); // 16 + 2 for the 50-token chain
  assert.equal(rec.counters.cacheMisses, 3 + 2, 'each block after the present prefix is a miss');
  assert.equal(s.ideal.hitBlocks, 2);
});

test('for the modelled TTFT: the prompt is the chain, the hits its present prefix, their load time the prefix reads', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB, kind: 'null' });
  const o = options(cache, rec, { prefillOnly: true });
  const first = await processRequest(req({ conversationId: 'c', contextTokens: 40 }), o, new Rng(1));
  assert.deepEqual([first.promptTokens, first.hitTokens, first.hitLoadMs], [40, 0, 0]);
  const second = await processRequest(req({ conversationId: 'c', contextTokens: 70 }), o, new Rng(1));
  assert.deepEqual([second.promptTokens, second.hitTokens], [70, 32], 'two full blocks of 16 hit; the partial third did not');
  assert.equal(second.hitLoadMs, 0, 'null tiers take no time');
});

test('the lookup stops at the first missing block: blocks after a gap are not read but written again', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB, kind: 'null' });
  const o = options(cache, rec, { prefillOnly: true });
  const r = req({ conversationId: 'c', contextTokens: 48 });
  await processRequest(r, o, new Rng(1));
  const chain = requestChain(r, 16);
  await cache.delete(chain[1]?.key ?? '');
  const readsBefore = rec.counters.readOperations;
  await processRequest(r, o, new Rng(1));
  const s = rec.blocks.snapshot();
  assert.equal(rec.counters.readOperations - readsBefore, 1, 'only the head was read');
  assert.equal(s.hitBlocks.cpu, 1);
  assert.equal(s.blocksWritten, 3 + 1, 'the missing block is written again');
  assert.equal(s.blocksFoundWritten, 1, 'the block after the gap was still cached: not written twice');
});

test('decode re-reads the whole chain once per batch', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB, kind: 'null' });
  await processRequest(req({ contextTokens: 40, generationTokens: 64 }), options(cache, rec), new Rng(1));
  const s = rec.blocks.snapshot();
  assert.equal(s.decodeBlockReads, 2 * 3);
  assert.equal(s.decodeBlockMisses, 0);
  assert.equal(rec.traffic.cpu.readBytes, 2 * 40 * TINY_BPT);
});

test('a shared system prompt long enough to fill blocks is shared across users', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB, kind: 'null' });
  const prompt = { ...makeSystemPrompt('You are a helpful assistant.'), tokens: 40 };
  const o = options(cache, rec, { prefillOnly: true });
  await processRequest(req({ systemPrompt: prompt, contextTokens: 100, cacheKey: 'a' }), o, new Rng(1));
  await processRequest(req({ id: 'b', userId: 'v', systemPrompt: prompt, contextTokens: 100, cacheKey: 'b' }), o, new Rng(1));
  assert.equal(rec.blocks.snapshot().hitBlocks.cpu, 2, "the prompt's two full blocks; the third mixes in the user's tokens");
});

test('LRU evicts a chain from its tail: the head stays cached longest', async () => {
  // Room for 4 blocks of 16 tokens on the only tier.
  const { cache, rec } = makeCache({ storageBytes: 4 * 16 * TINY_BPT, kind: 'null' });
  const o = options(cache, rec, { prefillOnly: true });
  const a = req({ conversationId: 'a', contextTokens: 48 });
  await processRequest(a, o, new Rng(1));
  await processRequest(req({ id: 'b', conversationId: 'b', contextTokens: 16 }), o, new Rng(1));
  await processRequest(req({ id: 'c', conversationId: 'c', contextTokens: 16 }), o, new Rng(1));
  // c needed room: the victim is a's tail, not a's head.
  const chain = requestChain(a, 16);
  assert.notEqual(cache.locate(chain[0]?.key ?? ''), null, 'the head of the chain is still cached');
  assert.equal(cache.locate(chain[2]?.key ?? ''), null, 'the tail went first');
});

test('synthetic users, same seed: block mode writes fewer bytes than whole-request entries (conversations share their blocks)', async () => {
  // The same 300 requests (8 users, multi-turn, shared system prompts) through both modes on unlimited null tiers.
  const rng = new Rng(7);
  const conversations = new ConversationManager();
  const prefix = new PrefixMatcher(TINY_BPT);
  const sessions = createSessions(generateUsers(8, rng.fork('users')), rng, { conversations, prefix });
  const requests: Request[] = [];
  for (let i = 0; requests.length < 300; i++) {
    const session = sessions[i % sessions.length];
    if (session !== undefined) requests.push(session.nextRequest().request);
  }
  const written = async (blocks: boolean): Promise<{ bytes: number; reads: number }> => {
    const { cache, rec } = makeCache({ kind: 'null' });
    const o = options(cache, rec, {
      prefillOnly: true,
      prefix: new PrefixMatcher(TINY_BPT),
      ...(blocks ? {} : { blocks: undefined }),
    });
    for (const r of requests) await processRequest(r, o, new Rng(1));
    return { bytes: rec.traffic.storage.writeBytes, reads: rec.traffic.storage.readBytes };
  };
  const whole = await written(false);
  const block = await written(true);
  const contextBytes = requests.reduce((n, r) => n + r.contextTokens * TINY_BPT, 0);
  console.log(
    `# 300 synthetic requests (seed 7, tiny-1b): whole-request mode writes ${whole.bytes} B, blocks of 16 tokens ${block.bytes} B (contexts: ${contextBytes} B)`,
  );
  assert.ok(block.bytes < whole.bytes, `block ${block.bytes} < whole ${whole.bytes}`);
  assert.ok(block.bytes <= contextBytes);
});
