// The HDR latency histogram: percentile accuracy, exact mean, merge and encode/decode, constant memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyHistogram } from '../../src/metrics/latency.js';

test('percentiles within 0.1 % of the exact values, exact mean', () => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 10000; i++) h.recordMs(i / 10); // 0.1 … 1000 ms
  assert.equal(h.count, 10000);
  assert.ok(Math.abs(h.meanMs - 500.05) < 1e-6);
  for (const [p, exact] of [
    [50, 500],
    [95, 950],
    [99, 990],
  ] as const) {
    assert.ok(Math.abs(h.percentileMs(p) - exact) / exact < 0.002, `p${p}=${h.percentileMs(p)}`);
  }
  assert.ok(Math.abs(h.maxMs - 1000) / 1000 < 0.002);
});

test('empty histogram reports zeros', () => {
  const s = new LatencyHistogram().summary();
  assert.equal(s.count, 0);
  assert.equal(s.p95, 0);
  assert.equal(s.mean, 0);
});

test('merge and encode/decode preserve the distribution', () => {
  const a = new LatencyHistogram();
  const b = new LatencyHistogram();
  for (let i = 0; i < 1000; i++) a.recordMs(1 + (i % 10));
  for (let i = 0; i < 1000; i++) b.recordMs(100 + (i % 10));
  a.add(b);
  assert.equal(a.count, 2000);
  const c = LatencyHistogram.decode(a.encode(), a.meanMs * a.count);
  assert.equal(c.count, 2000);
  assert.equal(c.percentileMs(99), a.percentileMs(99));
  assert.ok(Math.abs(c.meanMs - a.meanMs) < 1e-9);
});

test('memory stays constant: a million samples fit the same histogram', () => {
  const h = new LatencyHistogram();
  for (let i = 0; i < 1_000_000; i++) h.recordMs((i % 5000) / 7);
  assert.equal(h.count, 1_000_000);
  assert.ok(h.encode().length < 64 * 1024);
});
