import { test } from 'node:test';
import assert from 'node:assert/strict';
import { processRequest } from '../../src/engine/pipeline.js';
import type { PipelineOptions } from '../../src/engine/pipeline.js';
import type { Request } from '../../src/workload/request.js';
import { testPipelineOptions, testRequest } from './requests.js';
import { PrefixMatcher, makeSystemPrompt } from '../../src/workload/prefix.js';
import { Rng } from '../../src/util/rng.js';
import { GiB } from '../../src/util/units.js';
import { makeCache, TINY_BPT } from '../cache/helpers.js';

function req(over: Partial<Request>): Request {
  return testRequest(over);
}

function options(over: Partial<PipelineOptions> & Pick<PipelineOptions, 'cache'>): PipelineOptions {
  return testPipelineOptions(over);
}

test('prefill + decode: one write, a probe and ceil(gen/32) full re-reads', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  const out = await processRequest(req({ generationTokens: 100 }), options({ cache }), new Rng(1));
  assert.equal(out.completed, true);
  assert.equal(rec.counters.prefillWrites, 1);
  assert.equal(rec.counters.decodeReads, 1 + 4);
  assert.equal(rec.traffic.cpu.readBytes, 5 * 100 * TINY_BPT);
  assert.ok(out.decodeMs !== undefined && out.prefillMs !== undefined);
  assert.ok(Math.abs(out.storageMs - (out.prefillMs + out.decodeMs)) < 1e-9);
});

test('a prefill-phase request (≥ 10,000 tokens) does no decode reads; prefill-only does none at all', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await processRequest(req({ phase: 'prefill', contextTokens: 10_000 }), options({ cache }), new Rng(1));
  assert.equal(rec.counters.readOperations, 0);
  await processRequest(
    req({ cacheKey: 'b', turn: 2, previousTurnKeys: ['u_req_000001'] }),
    options({ cache, prefillOnly: true, multiTurn: false }),
    new Rng(1),
  );
  assert.equal(rec.counters.readOperations, 0);
  assert.equal(rec.counters.writeOperations, 2);
});

test('multi-turn reload reads every earlier turn and counts hits and misses', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await cache.allocate('c_turn_1', 10);
  const out = await processRequest(
    req({ cacheKey: 'c_turn_3', turn: 3, previousTurnKeys: ['c_turn_1', 'c_turn_2'] }),
    options({ cache }),
    new Rng(1),
  );
  assert.equal(out.multiTurnHits, 1);
  assert.equal(out.multiTurnMisses, 1);
  assert.equal(rec.counters.multiTurnHits, 1);
});

test('a decode probe that misses writes the entry instead (RAG request key)', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await processRequest(req({ kind: 'rag', phase: 'decode', cacheKey: 'rag_doc_0001' }), options({ cache }), new Rng(1));
  assert.equal(rec.counters.cacheMisses, 1);
  assert.equal(cache.locate('rag_doc_0001'), 'cpu');
  assert.equal(rec.counters.prefillWrites, 1);
});

test('a shared prefix is written at first sight and read afterwards', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  const prefix = new PrefixMatcher(TINY_BPT);
  const systemPrompt = makeSystemPrompt('You are a helpful assistant.');
  const o = options({ cache, prefix });
  await processRequest(req({ systemPrompt, cacheKey: 'a' }), o, new Rng(1));
  assert.equal(cache.locate(systemPrompt.key), 'cpu');
  await processRequest(req({ systemPrompt, cacheKey: 'b' }), o, new Rng(1));
  assert.equal(rec.counters.systemPromptHits, 1);
  assert.equal(prefix.stats.prefixHits, 1);
  assert.equal(prefix.stats.prefixMisses, 1);
  // The request's own entry is its context minus the prefix tokens.
  assert.equal(cache.entries.get('b')?.size, (100 - systemPrompt.tokens) * TINY_BPT);
});

test('RAG chunks of a request are read', async () => {
  const { cache, rec } = makeCache({ cpuBytes: GiB });
  await cache.allocate('rag_doc_0000_chunk_0', 10);
  await cache.allocate('rag_doc_0000_chunk_3', 10);
  const chunks = [0, 3].map((i) => ({ key: `rag_doc_0000_chunk_${i}`, docId: 'doc_0000', index: i, tokens: 10 }));
  await processRequest(
    req({ phase: 'prefill', contextTokens: 20_000, ragRetrieval: { docId: 'doc_0000', chunks, totalTokens: 20 } }),
    options({ cache }),
    new Rng(1),
  );
  assert.equal(rec.counters.userCacheHits, 2);
});

test('generation sleeps gen × seconds-per-token; a stopped run cuts the request short', async () => {
  const { cache } = makeCache({ cpuBytes: GiB });
  const slept: number[] = [];
  const out = await processRequest(
    req({ generationTokens: 50 }),
    options({ cache, secondsPerToken: 0.03, sleep: async (ms) => void slept.push(ms) }),
    new Rng(1),
  );
  assert.deepEqual(slept, [1500]);
  assert.equal(out.generationMs, 1500);
  const { cache: c2, rec: r2 } = makeCache({ cpuBytes: GiB });
  const cut = await processRequest(req({}), options({ cache: c2, stopped: () => true }), new Rng(1));
  assert.equal(cut.completed, false);
  assert.equal(r2.counters.writeOperations, 0);
});

test('a request whose generation is cut by the stop does not complete', async () => {
  const { cache } = makeCache({ cpuBytes: GiB });
  let stopped = false;
  const out = await processRequest(
    req({ generationTokens: 10 }),
    options({ cache, secondsPerToken: 0.03, sleep: async () => void (stopped = true), stopped: () => stopped }),
    new Rng(1),
  );
  assert.equal(out.completed, false);
});
