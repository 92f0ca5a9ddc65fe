// Recorder and RequestMetrics snapshots: the plain data the reporters read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storageHealth } from '../../src/metrics/cache-stats.js';
import { LatencyHistogram } from '../../src/metrics/latency.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { RequestMetrics } from '../../src/metrics/request-metrics.js';

test('recorder snapshot: plain copies, only histograms with samples, in creation order', () => {
  const rec = new Recorder();
  rec.latency('never_used');
  for (let i = 1; i <= 100; i++) rec.recordIo('storage', 'read', { totalMs: i, deviceMs: i - 0.5, hostMs: 0.5 });
  rec.recordIo('cpu', 'write', { totalMs: 2, deviceMs: 2, hostMs: 0 });
  rec.counters.cacheHits = 3;
  rec.traffic.storage.readBytes = 4096;
  const s = rec.snapshot();
  assert.deepEqual(Object.keys(s.latencies), ['storage_read', 'storage_read_device', 'storage_read_host', 'cpu_write']);
  const live = rec.latency('storage_read');
  assert.deepEqual(s.latencies.storage_read, { ...live.summary(), encoded: live.encode() });
  assert.equal(s.latencies.storage_read?.count, 100);
  assert.equal(LatencyHistogram.decode(s.latencies.storage_read?.encoded ?? '').percentileMs(95), live.percentileMs(95));

  rec.recordIo('storage', 'read', { totalMs: 1000, deviceMs: 1000, hostMs: 0 });
  rec.counters.cacheHits++;
  rec.traffic.storage.readBytes = 0;
  assert.equal(s.latencies.storage_read?.count, 100, 'later operations do not change a snapshot');
  assert.equal(s.counters.cacheHits, 3);
  assert.equal(s.traffic.storage.readBytes, 4096);
});

test('storage health from a snapshot: the CPU criterion merges read and write latencies exactly', () => {
  const rec = new Recorder();
  for (let i = 1; i <= 50; i++) rec.recordIo('cpu', 'read', { totalMs: i * 3, deviceMs: i * 3, hostMs: 0 });
  for (let i = 1; i <= 50; i++) rec.recordIo('cpu', 'write', { totalMs: i * 0.7, deviceMs: i * 0.7, hostMs: 0 });
  const both = new LatencyHistogram();
  both.add(rec.latency('cpu_read'));
  both.add(rec.latency('cpu_write'));
  const cpu = storageHealth(rec.snapshot(), 'latency', 1).criteria.find((c) => c.name === 'CPU RAM P95 < 150ms');
  assert.equal(cpu?.actual, both.percentileMs(95));
  assert.equal(cpu?.passed, both.percentileMs(95) < 150);
});

test('request metrics snapshot: counts, distributions, QoS block and raw samples as plain copies', () => {
  const m = new RequestMetrics({ batch: { targetP95Ms: 10 } }, true);
  m.record({
    qos: 'batch',
    e2eMs: 20,
    queueMs: 1,
    storageMs: 5,
    generationMs: 0,
    prefillMs: 4,
    generatedTokens: 7,
    contextTokens: 300,
    multiTurnHits: 1,
    multiTurnMisses: 0,
  });
  m.recordAborted(0, 2);
  const s = m.snapshot();
  assert.equal(s.requestsCompleted, 1);
  assert.equal(s.requestsAborted, 1);
  assert.equal(s.tokensGenerated, 7);
  assert.equal(s.multiTurnMisses, 2);
  assert.equal(s.prefill.count, 1);
  assert.equal(s.decode.count, 0);
  assert.deepEqual(s.contextTokens, { count: 1, mean: 300, p50: 300, p95: 300, max: 300 });
  assert.deepEqual(s.qos, m.qos.metrics());
  assert.deepEqual(s.raw, { end_to_end_latencies: [0.02], storage_latencies: [0.005], generation_latencies: [0] });
  m.record({
    qos: 'batch',
    e2eMs: 1,
    queueMs: 0,
    storageMs: 1,
    generationMs: 0,
    generatedTokens: 1,
    contextTokens: 9,
    multiTurnHits: 0,
    multiTurnMisses: 0,
  });
  assert.equal(s.raw?.end_to_end_latencies.length, 1);
  assert.equal(s.e2e.count, 1);
  assert.equal(new RequestMetrics({}, false).snapshot().raw, undefined);
});

test('context tokens: exact mean and nearest-rank p50/p95 over completed requests; reset clears them', () => {
  const m = new RequestMetrics({ batch: { targetP95Ms: 10 } }, false);
  const rec = (contextTokens: number): void =>
    m.record({
      qos: 'batch',
      e2eMs: 1,
      queueMs: 0,
      storageMs: 1,
      generationMs: 0,
      generatedTokens: 1,
      contextTokens,
      multiTurnHits: 0,
      multiTurnMisses: 0,
    });
  // 20 requests: 1..20 tokens, with 5 given twice more (22 samples in all).
  for (let t = 1; t <= 20; t++) rec(t);
  rec(5);
  rec(5);
  m.recordAborted(0, 0); // not completed: its context is not counted
  // sorted: 1 2 3 4 5 5 5 6 … 20; rank ⌈0.5·22⌉ = 11 → 9; rank ⌈0.95·22⌉ = 21 → 19
  assert.deepEqual(m.snapshot().contextTokens, { count: 22, mean: (210 + 10) / 22, p50: 9, p95: 19, max: 20 });
  m.reset();
  assert.deepEqual(m.snapshot().contextTokens, { count: 0, mean: 0, p50: 0, p95: 0, max: 0 });
});
