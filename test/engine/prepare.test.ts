import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildWorkloadParts } from '../../src/engine/build-workload.js';
import {
  MIN_PREPARATION_SEC,
  PREPARE_ENTRY_TOKENS,
  PREPOP_ENTRIES_PER_USER,
  preparationBudgetMs,
  prepareStorage,
} from '../../src/engine/prepare.js';
import type { PrepareInputs, PrepareProgress } from '../../src/engine/prepare.js';
import { Rng } from '../../src/util/rng.js';
import { GiB } from '../../src/util/units.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';
import { makeCache, TINY, TINY_BPT } from '../cache/helpers.js';

const OFF = {
  enableRag: false,
  ragNumDocs: 0,
  decodeOnly: false,
  numUsers: 1,
  precondition: false,
  preconditionSizeGb: 0,
  preconditionThreads: 1,
};

function inputs(cfg: Partial<PrepareInputs['cfg']>, storageBytes = Infinity): { p: PrepareInputs; log: string[] } {
  const { cache, rec } = makeCache({ kind: 'null', storageBytes });
  const c = { ...OFF, ...cfg };
  const workload = buildWorkloadParts(
    { model: TINY, disableMultiTurn: false, disablePrefixCaching: false, enableRag: c.enableRag },
    DEFAULT_SETTINGS,
  );
  const log: string[] = [];
  return { p: { cfg: c, cache, recorder: rec, workload, ragRng: new Rng(3), log: (l) => log.push(l), now: () => 0 }, log };
}

test('prepare: RAG documents are written before the measurement and their traffic is wiped', async () => {
  const { p, log } = inputs({ enableRag: true, ragNumDocs: 3 });
  const r = await prepareStorage(p);
  assert.deepEqual(r, { prepopulatedKeys: [], warnings: [] });
  assert.equal(p.workload.rag?.documentCount, 3);
  assert.ok(p.cache.entries.count('storage') > 0);
  assert.equal(p.recorder.counters.writeOperations, 0);
  assert.equal(p.recorder.traffic.storage.writeBytes, 0);
  assert.deepEqual(log, ['RAG: ingested 3 documents']);
});

test('prepare: decode-only pre-populates 10 entries per user and every shared prompt', async () => {
  const { p } = inputs({ decodeOnly: true, numUsers: 2 });
  const r = await prepareStorage(p);
  assert.deepEqual(
    r.prepopulatedKeys,
    Array.from({ length: 2 * PREPOP_ENTRIES_PER_USER }, (_, i) => `prepop_${i}`),
  );
  const prompts = p.workload.prefix?.prompts ?? [];
  assert.ok(prompts.length > 0);
  for (const prompt of prompts) assert.equal(p.cache.locate(prompt.key), 'storage');
  assert.equal(p.cache.entries.count('storage'), 2 * PREPOP_ENTRIES_PER_USER + prompts.length);
  assert.equal(p.recorder.counters.prefillWrites, 0, 'wiped');
});

test('prepare: preconditioning writes its target, or is skipped with a warning when the capacity is unknown', async () => {
  const entryBytes = PREPARE_ENTRY_TOKENS * TINY_BPT;
  const sized = inputs({ precondition: true, preconditionSizeGb: (2.5 * entryBytes) / GiB });
  assert.deepEqual(await prepareStorage(sized.p), { prepopulatedKeys: [], warnings: [] });
  assert.deepEqual(
    [...sized.p.cache.entries.lruOrder('storage')].map((e) => e.key),
    ['precond_0', 'precond_1', 'precond_2'],
  );
  assert.equal(sized.p.recorder.counters.totalWriteBytes, 0, 'wiped');

  const unknown = inputs({ precondition: true });
  const r = await prepareStorage(unknown.p);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0] ?? '', /^preconditioning skipped: the storage capacity is unknown/);
  assert.equal(unknown.p.cache.entries.count('storage'), 0);
});

/** A signal aborted once `count` more cache allocations have been made through `p.cache`. */
function abortAfterAllocations(p: PrepareInputs, count: number): AbortSignal {
  const ctrl = new AbortController();
  const allocate = p.cache.allocate.bind(p.cache);
  let left = count;
  p.cache.allocate = (...args) => {
    if (--left <= 0) ctrl.abort();
    return allocate(...args);
  };
  return ctrl.signal;
}

test('prepare: the deadline stops RAG ingestion between documents, with a warning saying how far it got', async () => {
  const { p, log } = inputs({ enableRag: true, ragNumDocs: 1_000_000 });
  const chunksOfFirst = p.workload.rag?.ingest(new Rng(3)).document.chunks.length ?? 0; // same draw as the run's first document
  const fresh = inputs({ enableRag: true, ragNumDocs: 1_000_000 });
  const deadline = abortAfterAllocations(fresh.p, chunksOfFirst);
  const r = await prepareStorage({ ...fresh.p, deadline });
  assert.equal(fresh.p.workload.rag?.documentCount, 1);
  assert.deepEqual(r.warnings, ['RAG ingestion: 1 of 1000000 documents ingested, stopped at the preparation deadline (--duration)']);
  assert.deepEqual(fresh.log, ['RAG: ingested 1 documents']);
  assert.equal(log.length, 0);
});

test('prepare: an interrupt stops pre-population and preconditioning; no deadline warning', async () => {
  const { p } = inputs({ decodeOnly: true, numUsers: 100, precondition: true, preconditionSizeGb: 1 });
  const interrupt = abortAfterAllocations(p, 3);
  const r = await prepareStorage({ ...p, interrupt, deadline: new AbortController().signal });
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.prepopulatedKeys, ['prepop_0', 'prepop_1', 'prepop_2'], 'the allocation that saw the interrupt was the last');
  assert.equal(p.cache.entries.count('storage'), r.prepopulatedKeys.length, 'no preconditioning entry after the interrupt');
});

test('prepare: a deadline already past skips everything, each step saying so', async () => {
  const { p } = inputs({ decodeOnly: true, numUsers: 2, precondition: true, preconditionSizeGb: 1 });
  const r = await prepareStorage({ ...p, deadline: AbortSignal.abort() });
  assert.deepEqual(r.prepopulatedKeys, []);
  assert.deepEqual(r.warnings, [
    'pre-population: 0 of 20 entries written, stopped at the preparation deadline (--duration)',
    'preconditioning: 0.00 of 1.00 GiB written, stopped at the preparation deadline (--duration)',
  ]);
  assert.equal(p.cache.entries.count('storage'), 0);
});

test('prepare: the budget is the measured duration again, at least a minute', () => {
  assert.equal(preparationBudgetMs(300), 300_000);
  assert.equal(preparationBudgetMs(2), MIN_PREPARATION_SEC * 1000);
  assert.equal(MIN_PREPARATION_SEC, 60);
});

test('prepare: progress events of each step, exact counts (start, one per unit, finished)', async () => {
  const { p } = inputs({ enableRag: true, ragNumDocs: 3, decodeOnly: true, numUsers: 1 });
  const events: PrepareProgress[] = [];
  await prepareStorage({ ...p, onProgress: (e) => events.push(e) });
  const rag = events.filter((e) => e.phase === 'rag_ingestion');
  assert.deepEqual(
    rag.map((e) => [e.done, e.total, e.unit, e.finished]),
    [
      [0, 3, 'documents', false],
      [1, 3, 'documents', false],
      [2, 3, 'documents', false],
      [3, 3, 'documents', false],
      [3, 3, 'documents', true],
    ],
  );
  const prepop = events.filter((e) => e.phase === 'prepopulation');
  assert.equal(prepop.length, PREPOP_ENTRIES_PER_USER + 2);
  assert.deepEqual(
    prepop.map((e) => e.done),
    [0, ...Array.from({ length: PREPOP_ENTRIES_PER_USER }, (_, i) => i + 1), PREPOP_ENTRIES_PER_USER],
  );
  assert.deepEqual(prepop.at(-1), { phase: 'prepopulation', done: 10, total: 10, unit: 'entries', finished: true });
  // Steps run in order, never interleaved.
  assert.deepEqual([...new Set(events.map((e) => e.phase))], ['rag_ingestion', 'prepopulation']);
});

test('prepare: preconditioning progress counts bytes up to its target', async () => {
  const entryBytes = PREPARE_ENTRY_TOKENS * TINY_BPT;
  const { p } = inputs({ precondition: true, preconditionSizeGb: (2.5 * entryBytes) / GiB });
  const events: PrepareProgress[] = [];
  await prepareStorage({ ...p, onProgress: (e) => events.push(e) });
  assert.deepEqual(
    events.map((e) => [e.done / entryBytes, e.finished]),
    [
      [0, false],
      [1, false],
      [2, false],
      [3, false],
      [3, true],
    ],
  );
  assert.equal(events[0]?.total, 2.5 * entryBytes);
});

test('prepare: an interrupt during RAG ingestion stops between the chunks of a document, not at its end', async () => {
  const { p, log } = inputs({ enableRag: true, ragNumDocs: 1000 });
  const interrupt = new AbortController();
  const cache = p.cache;
  const allocate = cache.allocate.bind(cache);
  let writes = 0;
  // The interrupt lands while the first document's first chunk is being written.
  cache.allocate = (key, tokens, phase) => {
    if (++writes === 1) interrupt.abort();
    return allocate(key, tokens, phase);
  };
  const r = await prepareStorage({ ...p, interrupt: interrupt.signal });
  assert.deepEqual(r, { prepopulatedKeys: [], warnings: [] }, 'an interrupt needs no warning: the run says it was interrupted');
  assert.equal(writes, 1);
  assert.equal(cache.entries.count('storage'), 1);
  assert.ok((p.workload.rag?.documentCount ?? 0) === 1 && log[0] === 'RAG: ingested 1 documents', log.join('\n'));
});
