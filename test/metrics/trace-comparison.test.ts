import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareWithTrace } from '../../src/metrics/trace-comparison.js';
import type { ValidationTraceStats } from '../../src/workload/validation-trace.js';

const trace: ValidationTraceStats = {
  totalRequests: 10,
  cacheHitRate: 0.5,
  readBytes: 2000,
  writeBytes: 1000,
  readWriteRatio: 2,
  bytesPerRequest: 300,
  contextTokens: { mean: 1000, p50: 800, p95: 2000 },
  generationTokensMean: 50,
};

test('every figure within 5 % passes; relative errors are exact', () => {
  const r = compareWithTrace(
    { requests: 20, cacheHitRate: 0.52, readBytes: 4000, writeBytes: 2000, contextTokens: { mean: 1000, p50: 800, p95: 2000 } },
    trace,
  );
  assert.equal(r.passed, true);
  assert.ok(Math.abs((r.comparison.cache_hit_rate?.error_pct ?? -1) - 4) < 1e-9);
  assert.equal(r.comparison.read_write_ratio?.error_pct, 0);
  assert.equal(r.comparison.bytes_per_request?.benchmark, 300);
  assert.equal(r.trace_stats.context_tokens_p95, 2000);
});

test('one figure beyond 5 % fails even when the average error is small (the reference passed on the average)', () => {
  const r = compareWithTrace(
    { requests: 10, cacheHitRate: 0.5, readBytes: 2000, writeBytes: 1000, contextTokens: { mean: 1000, p50: 800, p95: 2200 } },
    trace,
  );
  assert.equal(r.comparison.context_tokens_p95?.within_5pct, false);
  assert.ok(r.avg_error_pct < 5);
  assert.equal(r.passed, false);
});

test('a zero trace figure has no relative error and matches only zero', () => {
  const zero = { ...trace, cacheHitRate: 0 };
  const run = { requests: 10, cacheHitRate: 0, readBytes: 2000, writeBytes: 1000, contextTokens: trace.contextTokens };
  assert.deepEqual(compareWithTrace(run, zero).comparison.cache_hit_rate, { benchmark: 0, trace: 0, error_pct: null, within_5pct: true });
  assert.equal(compareWithTrace({ ...run, cacheHitRate: 0.1 }, zero).comparison.cache_hit_rate?.within_5pct, false);
});
