// The merged metadata figures (issue 34): two ranks' calls summed, their rates summed (they ran at
// once) and averaged over trials (which ran one after the other), latencies pooled from both ranks'
// histograms, per GiB over both ranks' bytes; the summary the reports read carries them, and a rank's
// undecodable histogram costs only its samples.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataStats } from '../../src/metrics/metadata-stats.js';
import { badMetadataHistograms, mergedMetadata } from '../../src/mlperf/merge-metadata.js';
import { mergeRun } from '../../src/mlperf/merge.js';
import type { TrialInput } from '../../src/mlperf/merge.js';
import { summaryLines } from '../../src/mlperf/summary-text.js';
import { ReportSummarySchema } from '../../src/report/html/summary-input.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { runResultFixture } from '../report/fixtures.js';

/** A rank's results (the fixture: a 10 s window, 7 GiB moved) with these calls. */
function rank(creates: readonly number[], failedUnlinks = 0): ResultsDocument {
  const s = new MetadataStats();
  for (const ms of creates) s.record('create', ms, true);
  for (let i = 0; i < failedUnlinks; i++) s.record('unlink', 5, false);
  return JSON.parse(JSON.stringify(buildResultsJson({ ...runResultFixture(), metadataOps: s.snapshot() }))) as ResultsDocument;
}

test('two ranks: counts and rates summed, per GiB over both, percentiles of every call pooled', () => {
  const m = mergedMetadata([rank([1, 1, 1]), rank([2], 1)]);
  assert.ok(m !== null);
  assert.equal(m.ranks, 2);
  assert.deepEqual([m.create.count, m.create.failed, m.create.per_second, m.create.per_gib_moved], [4, 0, 0.4, 4 / 14]);
  assert.equal(m.create.latency.count, 4);
  assert.equal(m.create.latency.p50_ms, 1);
  assert.equal(m.create.latency.p99_ms, 2, "rank 1's slow create: the 4th of the 4 calls pooled");
  assert.deepEqual([m.unlink.count, m.unlink.failed, m.unlink.latency.count, m.unlink.latency.p95_ms], [0, 1, 0, null]);
  assert.deepEqual([m.total, m.failed, m.per_second, m.per_gib_moved], [4, 1, 0.4, 4 / 14]);
});

test('trials: counts over every trial, rates the mean of the trials’ summed rates', () => {
  const m = mergedMetadata([rank([1, 1]), rank([1, 1]), rank([1, 1, 1, 1]), rank([])], 2);
  assert.deepEqual([m?.create.count, m?.create.per_second, m?.per_second], [8, 0.4, 0.4]);
});

test('no rank with the block (trace mode, files before 2.8.0): null; the merged summary says so', () => {
  const plain = JSON.parse(JSON.stringify(buildResultsJson(runResultFixture()))) as ResultsDocument;
  assert.equal(mergedMetadata([plain]), null);
});

test('an undecodable histogram: named for the merge notes, left out of the percentiles, its count kept', () => {
  const bad = rank([2, 2]);
  const m0 = bad.kvcache_bench.metadata_ops;
  assert.ok(m0 !== undefined);
  const broken = { ...bad, kvcache_bench: { ...bad.kvcache_bench, metadata_ops: { ...m0, create: { ...m0.create, histogram: 'AAAA' } } } };
  assert.deepEqual(badMetadataHistograms(broken), [
    'metadata_ops.create.histogram left out of the pooled percentiles (not a compressed HdrHistogram (V2) encoding)',
  ]);
  const m = mergedMetadata([broken, rank([1])]);
  assert.deepEqual([m?.create.count, m?.create.latency.count, m?.create.latency.p95_ms], [3, 1, 1]);
});

test('the merged summary: per trial and per option, read back by the reports, printed on the console', () => {
  const trial = (n: number, docs: ResultsDocument[]): TrialInput => ({
    option: '1',
    trial: n,
    dir: `option_1/trial_${n}`,
    files: docs.map((doc, r) => ({ rank: r, path: `option_1/trial_${n}/rank_${r}/r.json`, doc })),
    missing: [],
  });
  const summary = mergeRun([trial(1, [rank([1, 1, 1]), rank([2])]), trial(2, [rank([1]), rank([1])])], {
    runDatetime: '2026-11-27T00:00:00.000Z',
    npernode: 2,
    hostCount: 1,
    totalRanks: 2,
    trialsPerOption: 2,
    division: 'open',
    systemName: null,
  });
  const o = summary.options['1'];
  assert.deepEqual(
    o.kvcache_bench.trials.map((t) => [t.metadata_ops?.create.count, t.metadata_ops?.create.per_second]),
    [
      [4, 0.4],
      [2, 0.2],
    ],
  );
  assert.deepEqual([o.kvcache_bench.metadata_ops?.create.count, o.kvcache_bench.metadata_ops?.create.per_second], [6, 0.3]);
  const read = ReportSummarySchema.parse(JSON.parse(JSON.stringify(summary)));
  const merged = read.options['1'].kvcache_bench.metadata_ops;
  assert.deepEqual([merged?.create.count, merged?.create.latency.p50_ms, merged?.per_gib_moved], [6, 1, 6 / 28]);
  assert.ok(summaryLines(summary, 's.json').includes('  metadata ops (4 rank(s)): create 6 (0.3/s, p95 2.000 ms); 0.2 per GiB moved'));
});
