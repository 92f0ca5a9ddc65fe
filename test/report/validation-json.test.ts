// The `validation` key and the VALIDATION console block, from a hand-made result and trace figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildResultsJson } from '../../src/report/results-json.js';
import { formatSummary, validationBlock } from '../../src/report/console.js';
import type { ValidationTraceStats } from '../../src/workload/validation-trace.js';
import { GiB } from '../../src/util/units.js';
import { runResultFixture } from './fixtures.js';
import { assertValidResults } from './validate-results.js';

// The fixture's run: hit rate 30/40 = 0.75, 3 GiB read and 2 GiB written (cache_stats totals), 4 completed
// requests, each with 1,000 context tokens.
const trace: ValidationTraceStats = {
  totalRequests: 8,
  cacheHitRate: 0.8,
  readBytes: 6 * GiB,
  writeBytes: 4 * GiB,
  readWriteRatio: 1.5,
  bytesPerRequest: 1.25 * GiB,
  contextTokens: { mean: 1000, p50: 1000, p95: 1000 },
  generationTokensMean: 100,
};

test('no --validation-trace: no validation key', () => {
  assert.equal('validation' in buildResultsJson(runResultFixture()), false);
});

test('the run against the trace: the reference fields, every figure, exact errors, schema-valid', () => {
  const doc = buildResultsJson({ ...runResultFixture(), validationTrace: { path: 'real.json', stats: trace } });
  assertValidResults(doc);
  const v = doc.validation;
  assert.ok(v !== undefined);
  assert.equal(v.trace_file, 'real.json');
  const hit = v.comparison.cache_hit_rate;
  assert.deepEqual([hit?.benchmark, hit?.trace, hit?.within_5pct], [0.75, 0.8, false]);
  assert.ok(Math.abs((hit?.error_pct ?? 0) - 6.25) < 1e-9, 'error |0.75 − 0.8| ÷ 0.8 = 6.25 %');
  assert.deepEqual(v.comparison.read_write_ratio, { benchmark: 1.5, trace: 1.5, error_pct: 0, within_5pct: true });
  assert.deepEqual(v.comparison.bytes_per_request, { benchmark: 1.25 * GiB, trace: 1.25 * GiB, error_pct: 0, within_5pct: true });
  assert.equal(v.comparison.context_tokens_p95?.benchmark, 1000);
  assert.equal(v.passed, false);
  assert.ok(Math.abs(v.avg_error_pct - 6.25 / 6) < 1e-9, 'the mean of 6.25 and five zeros');
  assert.equal(v.trace_stats.total_requests, 8);

  const lines = validationBlock(v);
  assert.equal(lines[1], '### VALIDATION (vs real.json: 8 requests) ###');
  assert.equal(lines[2], '  [X] cache_hit_rate: run 0.750   trace 0.800   error 6.3 %');
  assert.equal(lines.at(-1), "  Overall: FAIL (every figure within 5 %; mean error 1.0 %, the reference's criterion)");
  assert.ok(formatSummary(doc, 'latency').includes('### VALIDATION (vs real.json: 8 requests) ###'));
});
