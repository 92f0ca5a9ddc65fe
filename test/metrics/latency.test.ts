// The HDR latency histogram: percentile accuracy, exact mean, merge and encode/decode, constant memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import hdr from 'hdr-histogram-js';
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

test('small samples counted aside and folded in later give the histogram of recording each one (lossless)', () => {
  // Samples below 2048 µs are counted in an array and added at the first read; the result must be the
  // very histogram the library makes from the samples one by one: same encoding, count, max, percentiles.
  const sample = fc.oneof(
    fc.double({ min: 0, max: 0.003, noNaN: true }),
    fc.double({ min: 0, max: 2.5, noNaN: true }),
    fc.double({ min: 2, max: 5000, noNaN: true }),
  );
  fc.assert(
    fc.property(fc.array(sample, { minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: 400 }), (samples, readAt) => {
      const ours = new LatencyHistogram();
      const direct = hdr.build({
        bitBucketSize: 32,
        lowestDiscernibleValue: 1,
        highestTrackableValue: 3_600_000_000,
        numberOfSignificantValueDigits: 3,
        autoResize: true,
        useWebAssembly: false,
      });
      samples.forEach((ms, i) => {
        if (i === readAt) ours.percentileMs(50); // a read in the middle folds what is pending; recording goes on
        ours.recordMs(ms);
        direct.recordValue(Math.min(3_600_000_000, Math.max(1, ms < 0.0015 ? 1 : Math.round(ms * 1000))));
      });
      assert.equal(ours.count, samples.length);
      assert.equal(ours.maxMs, direct.maxValue / 1000);
      for (const p of [0, 50, 90, 99, 99.9, 100]) assert.equal(ours.percentileMs(p), direct.getValueAtPercentile(p) / 1000);
      assert.equal(ours.encode(), hdr.encodeIntoCompressedBase64(direct));
    }),
    { numRuns: 200 },
  );
});

test('reset empties the samples counted aside too', () => {
  const h = new LatencyHistogram();
  for (let i = 0; i < 100; i++) h.recordMs(0.05);
  h.reset();
  assert.equal(h.count, 0);
  h.recordMs(1);
  assert.equal(h.count, 1);
  assert.equal(h.percentileMs(0), 1); // the 0.05 ms samples are gone, not folded in at this read
});
