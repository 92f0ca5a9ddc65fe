// RAG documents (docs/reference-compat.md#rc-30): document sizes by model, chunking arithmetic, retrieval distribution,
// and eviction that returns the chunk keys to delete (bug: the reference called a missing delete).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { BUILTIN_MODELS, kvBytesPerToken } from '../../src/model/models.js';
import type { ModelConfig } from '../../src/model/models.js';
import {
  chunkDocument,
  isLargeModel,
  RagDocumentManager,
  retrievalWeights,
  sampleWithoutReplacement,
  tokensPerChunk,
} from '../../src/workload/rag.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';

const DEFAULT_RAG = DEFAULT_SETTINGS.rag;

function model(key: string): ModelConfig {
  const m = BUILTIN_MODELS.get(key);
  assert.ok(m, key);
  return m;
}

test('rag: large model = hidden ≥ 8192 or layers ≥ 64', () => {
  assert.equal(isLargeModel(model('tiny-1b')), false);
  assert.equal(isLargeModel(model('llama3.1-8b')), false);
  assert.equal(isLargeModel(model('llama3.1-70b-instruct')), true);
  assert.equal(isLargeModel(model('qwen3-32b')), true); // 64 layers
  assert.equal(isLargeModel({ hiddenDim: 8192, numLayers: 1 }), true);
});

test('rag: tokens per chunk = max(1, min(chunk size, floor(max bytes / bpt)))', () => {
  assert.equal(tokensPerChunk(DEFAULT_RAG, 131072), 512); // 256 MiB / 128 KiB = 2048
  assert.equal(tokensPerChunk({ chunkSizeTokens: 512, maxChunkBytes: 1_000_000 }, 131072), 7);
  assert.equal(tokensPerChunk({ chunkSizeTokens: 512, maxChunkBytes: 1000 }, 131072), 1);
  const chunks = chunkDocument('doc_0000', 1100, 512);
  assert.deepEqual(
    chunks.map((c) => c.tokens),
    [512, 512, 76],
  );
  assert.deepEqual(
    chunks.map((c) => c.key),
    ['rag_doc_0000_chunk_0', 'rag_doc_0000_chunk_1', 'rag_doc_0000_chunk_2'],
  );
  assert.deepEqual(
    chunkDocument('d', 1024, 512).map((c) => c.tokens),
    [512, 512],
  );
});

test('rag: ingest sizes by model and chunk sums', () => {
  const small = new RagDocumentManager(model('llama3.1-8b'));
  const large = new RagDocumentManager(model('llama3.1-70b-instruct'));
  const rng = new Rng(1);
  assert.equal(small.bytesPerToken, kvBytesPerToken(model('llama3.1-8b')));
  for (const plan of small.planIngest(20, rng)) {
    const d = plan.document;
    assert.ok(d.totalTokens >= 4000 && d.totalTokens <= 12000);
    assert.equal(d.chunks.length, Math.ceil(d.totalTokens / 512));
    assert.equal(
      d.chunks.reduce((a, c) => a + c.tokens, 0),
      d.totalTokens,
    );
    assert.equal(plan.evicted, undefined);
  }
  for (const plan of large.planIngest(20, rng)) assert.ok(plan.document.totalTokens >= 1024 && plan.document.totalTokens <= 4096);
  assert.equal(small.documentCount, 20);
  assert.equal(small.documentIds()[0], 'doc_0000');
  assert.equal(small.documentIds()[19], 'doc_0019');
});

test('rag: maxDocuments evicts the oldest and returns its chunk keys for deletion', () => {
  const m = new RagDocumentManager(model('tiny-1b'), { ...DEFAULT_RAG, maxDocuments: 2 });
  const rng = new Rng(2);
  const [p0, p1, p2, p3] = m.planIngest(4, rng);
  assert.ok(p0 && p1 && p2 && p3);
  assert.equal(p0.evicted, undefined);
  assert.equal(p1.evicted, undefined);
  assert.equal(p2.evicted?.docId, 'doc_0000');
  assert.deepEqual(
    p2.evicted?.chunks.map((c) => c.key),
    p0.document.chunks.map((c) => c.key),
  );
  assert.equal(p3.evicted?.docId, 'doc_0001');
  assert.deepEqual(m.documentIds(), ['doc_0002', 'doc_0003']);
  assert.equal(m.getDocument('doc_0000'), undefined);
});

test('rag: retrieval picks min(topK, n) distinct chunks', () => {
  const rng = new Rng(3);
  for (let i = 0; i < 200; i++) {
    const idx = sampleWithoutReplacement(retrievalWeights(8, 'zipfian'), 5, rng);
    assert.equal(idx.length, 5);
    assert.equal(new Set(idx).size, 5);
    for (const j of idx) assert.ok(j >= 0 && j < 8);
  }
  assert.deepEqual(sampleWithoutReplacement(retrievalWeights(3, 'uniform'), 5, rng).sort(), [0, 1, 2]);
  const m = new RagDocumentManager(model('tiny-1b'));
  assert.equal(m.retrieveRandom(rng), undefined);
  m.planIngest(3, rng);
  const r = m.retrieveRandom(rng);
  assert.ok(r !== undefined);
  assert.equal(r.chunks.length, 5);
  assert.equal(
    r.totalTokens,
    r.chunks.reduce((a, c) => a + c.tokens, 0),
  );
  assert.ok(r.chunks.every((c) => c.docId === r.docId));
});

test('rag: zipfian favours chunk 0 (first pick ∝ 1/(i+1)); uniform does not', () => {
  const n = 10;
  const draws = 40000;
  const rng = new Rng(4);
  const firstZipf = new Array<number>(n).fill(0);
  const anyZipf = new Array<number>(n).fill(0);
  const anyUniform = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) {
    const z = sampleWithoutReplacement(retrievalWeights(n, 'zipfian'), 5, rng);
    firstZipf[z[0] ?? 0]++;
    for (const j of z) anyZipf[j]++;
    for (const j of sampleWithoutReplacement(retrievalWeights(n, 'uniform'), 5, rng)) anyUniform[j]++;
  }
  const h = retrievalWeights(n, 'zipfian').reduce((a, b) => a + b, 0);
  for (let i = 0; i < n; i++) {
    const expected = 1 / (i + 1) / h;
    assert.ok(Math.abs((firstZipf[i] ?? 0) / draws - expected) < 0.01, `first pick ${i}`);
    assert.ok(Math.abs((anyUniform[i] ?? 0) / draws - 0.5) < 0.02, `uniform ${i}`);
  }
  assert.ok((anyZipf[0] ?? 0) > (anyZipf[n - 1] ?? 0) * 1.5);
  for (let i = 1; i < n; i++) assert.ok((anyZipf[i - 1] ?? 0) > (anyZipf[i] ?? 0) * 0.98, `monotone at ${i}`);
});
