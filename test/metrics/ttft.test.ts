// TtftMetrics from three hand-made requests: counts, sums, the offload-lost count, per-class split,
// power-of-two context bins and the speedup / delivered-bandwidth histograms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contextBinOf, TtftMetrics } from '../../src/metrics/ttft.js';
import type { TtftSample } from '../../src/metrics/ttft.js';
import { ttftSample } from './ttft-sample.js';

// A: no hit. B: 2,000 of 3,000 tokens loaded in 10 ms, TTFT 40 vs 80 ms (speedup 2). C: 1,000 loaded
// in 100 ms, TTFT 150 vs 100 ms: loading lost (speedup 2/3).
const A: TtftSample = ttftSample({ promptTokens: 1000 });
const B: TtftSample = {
  qos: 'batch',
  promptTokens: 3000,
  hitTokens: 2000,
  hitBytes: 200_000,
  hitLoadMs: 10,
  offloadMs: 40,
  recomputeMs: 80,
  hitComputeMs: 45,
};
const C: TtftSample = {
  qos: 'interactive',
  promptTokens: 3000,
  hitTokens: 1000,
  hitBytes: 100_000,
  hitLoadMs: 100,
  offloadMs: 150,
  recomputeMs: 100,
  hitComputeMs: 20,
};

function recorded(): ReturnType<TtftMetrics['snapshot']> {
  const m = new TtftMetrics();
  for (const s of [A, B, C]) m.record(s);
  return m.snapshot();
}

test('overall: counts, sums and the requests where loading lost', () => {
  const o = recorded().overall;
  assert.deepEqual(
    [o.requests, o.requestsWithHits, o.loadSlower, o.promptTokens, o.hitTokens, o.hitBytes, o.hitLoadMs, o.hitComputeMs],
    [3, 2, 1, 7000, 3000, 300_000, 110, 65],
  );
  assert.equal(o.offload.count, 3);
  assert.equal(o.recompute.count, 3);
  assert.ok(Math.abs(o.offload.mean - 80) < 1e-9); // (50 + 40 + 150) / 3
  assert.ok(Math.abs(o.recompute.mean - 230 / 3) < 1e-9);
  // Speedup and delivered bandwidth only for requests with hits: B 2.0 and C 0.667; B 20 MB/s, C 1 MB/s.
  assert.equal(o.speedup.count, 2);
  assert.ok(Math.abs(o.speedup.mean - (2 + 100 / 150) / 2) < 1e-9);
  assert.equal(o.deliveredMBps.count, 2);
  assert.ok(Math.abs(o.deliveredMBps.max - 20) < 0.02);
});

test('per QoS class, sorted by name', () => {
  const s = recorded();
  assert.deepEqual(Object.keys(s.byQos), ['batch', 'interactive']);
  assert.deepEqual([s.byQos.batch.requests, s.byQos.batch.requestsWithHits, s.byQos.batch.loadSlower], [2, 1, 0]);
  assert.deepEqual([s.byQos.interactive.requests, s.byQos.interactive.requestsWithHits, s.byQos.interactive.loadSlower], [1, 1, 1]);
});

test('context bins: powers of two of the prompt length, only those with requests', () => {
  assert.deepEqual(recorded().byContext, [
    {
      fromTokens: 512,
      toTokens: 1024,
      requests: 1,
      requestsWithHits: 0,
      loadSlower: 0,
      offloadMsSum: 50,
      recomputeMsSum: 50,
      hitBytes: 0,
      hitLoadMs: 0,
      hitComputeMs: 0,
    },
    {
      fromTokens: 2048,
      toTokens: 4096,
      requests: 2,
      requestsWithHits: 2,
      loadSlower: 1,
      offloadMsSum: 190,
      recomputeMsSum: 180,
      hitBytes: 300_000,
      hitLoadMs: 110,
      hitComputeMs: 65,
    },
  ]);
  assert.deepEqual(contextBinOf(0), { fromTokens: 0, toTokens: 2 });
  assert.deepEqual(contextBinOf(1), { fromTokens: 0, toTokens: 2 });
  assert.deepEqual(contextBinOf(2), { fromTokens: 2, toTokens: 4 });
  assert.deepEqual(contextBinOf(8191), { fromTokens: 4096, toTokens: 8192 });
  assert.deepEqual(contextBinOf(8192), { fromTokens: 8192, toTokens: 16384 });
});

test('no request: empty snapshot', () => {
  const s = new TtftMetrics().snapshot();
  assert.equal(s.overall.requests, 0);
  assert.deepEqual(s.byQos, {});
  assert.deepEqual(s.byContext, []);
});
