// kvcache_bench.metadata_ops and the console's METADATA OPERATIONS section (issue 34) from counted
// calls: exact rates over the window and per GiB moved, the published schema holds, the histogram
// carries the samples, nothing is printed without a call, and files before 2.8.0 still load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../../src/metrics/latency.js';
import { MetadataStats } from '../../src/metrics/metadata-stats.js';
import type { RunResult } from '../../src/metrics/result.js';
import { formatSummary } from '../../src/report/console.js';
import { metadataOpsLines } from '../../src/report/console-metadata.js';
import { parseRunText } from '../../src/report/html/run-input.js';
import { metadataOpsJson } from '../../src/report/metadata-ops-json.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { ResultsSchema } from '../../src/report/results-schema.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { GiB } from '../../src/util/units.js';
import { runResultFixture } from './fixtures.js';
import { assertValidResults } from './validate-results.js';

/** Four creates (one more refused) and two unlinks, as a flat layout makes them; times under 2.048 ms are exact. */
function counted(): MetadataStats {
  const s = new MetadataStats();
  for (const ms of [0.5, 0.5, 1, 2]) s.record('create', ms, true);
  s.record('create', 0.01, false);
  for (const ms of [0.25, 0.75]) s.record('unlink', ms, true);
  return s;
}

/** The fixture's run (10 s; the storage tier read 4 GiB and wrote 3 GiB, demotions included) with those calls. */
function withMetadata(stats = counted()): RunResult {
  return { ...runResultFixture(), metadataOps: stats.snapshot() };
}

const roundTrip = (doc: ResultsDocument): unknown => JSON.parse(JSON.stringify(doc)) as unknown;

test('metadata_ops: counts, failures, rates over the window and per GiB moved, exact percentiles, valid against the schema', () => {
  const doc = buildResultsJson(withMetadata());
  assertValidResults(roundTrip(doc));
  const m = ResultsSchema.parse(roundTrip(doc)).kvcache_bench.metadata_ops;
  assert.ok(m !== undefined);
  assert.deepEqual([m.create.count, m.create.failed, m.create.per_second, m.create.per_gib_moved], [4, 1, 0.4, 4 / 7]);
  assert.deepEqual(m.create.latency_ms, { mean: 1, p50: 0.5, p95: 2, p99: 2, p999: 2, max: 2 });
  assert.deepEqual([m.unlink.count, m.unlink.failed, m.unlink.per_second, m.unlink.per_gib_moved], [2, 0, 0.2, 2 / 7]);
  assert.deepEqual([m.unlink.latency_ms.p50, m.unlink.latency_ms.p95, m.unlink.latency_ms.mean], [0.25, 0.75, 0.5]);
  for (const op of ['rename', 'link', 'lookup', 'mkdir'] as const) {
    assert.deepEqual([m[op].count, m[op].failed, m[op].per_second, m[op].per_gib_moved], [0, 0, 0, 0], op);
    assert.equal(m[op].latency_ms.p95, 0);
  }
  assert.deepEqual([m.total, m.failed, m.per_second, m.per_gib_moved], [6, 1, 0.6, 6 / 7]);
  const h = LatencyHistogram.decode(m.create.histogram);
  assert.deepEqual([h.count, h.maxMs], [4, 2], 'the histogram holds the carried-out calls, not the refused one');
});

test('nothing moved: per GiB is null; no window: per second 0', () => {
  const m = metadataOpsJson(counted().snapshot(), 0, 0);
  assert.deepEqual([m.create.per_gib_moved, m.per_gib_moved, m.create.per_second, m.per_second], [null, null, 0, 0]);
  assert.deepEqual(metadataOpsJson(counted().snapshot(), 2, GiB / 2).create.per_gib_moved, 8);
});

test('absent without figures (trace mode, hand-made results): no block, no console section', () => {
  const doc = buildResultsJson(runResultFixture());
  assert.equal('metadata_ops' in doc.kvcache_bench, false);
  assert.doesNotMatch(formatSummary(doc, 'latency'), /METADATA/);
});

test('the console: one line per class used (count, /s, p50, p95, p99 ms), failures named, then per GiB moved', () => {
  const doc = buildResultsJson(withMetadata());
  const expected = [
    '',
    '### METADATA OPERATIONS (storage tier; ms) ###',
    '  create: 4 (0.4/s)  p50 0.500  p95 2.000  p99 2.000  (1 failed)',
    '  unlink: 2 (0.2/s)  p50 0.250  p95 0.750  p99 0.750',
    '  per GiB moved: 0.9 (create 0.6, unlink 0.3); 6 in all, 0.6/s',
  ];
  assert.deepEqual(metadataOpsLines(doc.kvcache_bench.metadata_ops), expected);
  const summary = formatSummary(doc, 'latency').split('\n');
  const at = summary.indexOf(expected[1]);
  assert.ok(at > summary.indexOf('### STORAGE TIER LATENCY BREAKDOWN (p95, ms) ###'), 'after the storage latencies');
  assert.deepEqual(summary.slice(at - 1, at + 4), expected);
});

test('the console says nothing when every count is 0 (a slab pool after its lay-out, the memory backend)', () => {
  const doc = buildResultsJson(withMetadata(new MetadataStats()));
  assert.equal(doc.kvcache_bench.metadata_ops?.total, 0);
  assert.deepEqual(metadataOpsLines(doc.kvcache_bench.metadata_ops), []);
  assert.doesNotMatch(formatSummary(doc, 'latency'), /METADATA/);
});

test('a results file of schema 2.7.0 (no metadata_ops) still loads for report and compare', () => {
  const old = JSON.parse(JSON.stringify(buildResultsJson(runResultFixture()))) as { kvcache_bench: Record<string, unknown> };
  old.kvcache_bench.schema_version = '2.7.0';
  const run = parseRunText(JSON.stringify(old), 'old.json');
  assert.equal(run.kvcache_bench.schema_version, '2.7.0');
  assert.equal(run.kvcache_bench.metadata_ops, undefined);
  const now = parseRunText(JSON.stringify(buildResultsJson(withMetadata())), 'new.json');
  assert.equal(now.kvcache_bench.metadata_ops?.create.count, 4);
});
