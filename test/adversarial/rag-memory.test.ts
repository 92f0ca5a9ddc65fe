// --rag-num-docs in the hundreds of thousands: the document manager keeps a number per document, not
// every document's chunk objects and keys (which held 2.8 GiB for a million documents).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import { RagDocumentManager } from '../../src/workload/rag.js';
import { Rng } from '../../src/util/rng.js';

test('ingesting 300 000 RAG documents retains under 64 MiB of heap (bound: 8 bytes a document + garbage not yet collected)', () => {
  const model = BUILTIN_MODELS.get('tiny-1b');
  assert.ok(model !== undefined);
  const m = new RagDocumentManager(model);
  const rng = new Rng(1);
  const before = process.memoryUsage().heapUsed;
  let chunks = 0;
  for (let i = 0; i < 300_000; i++) chunks += m.ingest(rng).document.chunks.length;
  const grown = process.memoryUsage().heapUsed - before;
  assert.equal(m.documentCount, 300_000);
  // Each document has several chunks: holding them all would be hundreds of MiB.
  assert.ok(chunks > 1_000_000, `${chunks} chunks`);
  assert.ok(grown < 64 * 1024 * 1024, `heap grew ${(grown / 1048576).toFixed(0)} MiB`);
  // Documents are rebuilt on demand, identical to what ingestion planned.
  const doc = m.getDocument('doc_123456');
  assert.equal(doc?.docId, 'doc_123456');
  assert.equal(
    doc.chunks.reduce((a, c) => a + c.tokens, 0),
    doc.totalTokens,
  );
  assert.equal(m.getDocument('doc_0123456'), undefined);
  assert.equal(m.pickDocument(new Rng(5))?.docId, m.documentIds()[Math.floor(new Rng(5).random() * 300_000)]);
});
