// storage_health: the reference's verdict, with no verdict without samples (INCOMPLETE), demotion
// writes judged with placement writes, and never PASS in trace mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storageHealth } from '../../src/metrics/cache-stats.js';
import { StorageHealthSchema } from '../../src/metrics/cache-stats-schema.js';
import { LatencyHistogram } from '../../src/metrics/latency.js';
import { Recorder } from '../../src/metrics/recorder.js';
import type { TierOp } from '../../src/metrics/recorder.js';
import type { TierName } from '../../src/tiers/backend.js';
import { GiB } from '../../src/util/units.js';

const WRITE = 'Storage Tier Write Device P95 < 500ms';
const READ = 'Storage Tier Read Device P95 < 200ms';
const HIT = 'Cache Hit Rate > 30%';

/** `n` operations of `tier`/`op` whose device part takes `deviceMs` (host 0.25 ms on top). */
function record(rec: Recorder, tier: TierName, op: TierOp, n: number, deviceMs: number): void {
  for (let i = 0; i < n; i++) rec.recordIo(tier, op, { totalMs: deviceMs + 0.25, deviceMs, hostMs: 0.25 });
}

test('no samples: every criterion is listed with actual and passed null, and the status is INCOMPLETE', () => {
  const h = storageHealth(new Recorder().snapshot(), 'latency', 1);
  assert.deepEqual(h, {
    overall_status: 'INCOMPLETE',
    criteria: [
      { name: WRITE, target: 500, actual: null, unit: 'ms', passed: null, samples: 0 },
      { name: READ, target: 200, actual: null, unit: 'ms', passed: null, samples: 0 },
      { name: HIT, target: 0.3, actual: null, unit: 'ratio', passed: null, samples: 0 },
    ],
    passed_count: 0,
    total_count: 3,
  });
  assert.equal(StorageHealthSchema.safeParse(h).success, true);
});

test('enough samples: PASS when every criterion passes, FAIL when one fails', () => {
  const rec = new Recorder();
  record(rec, 'storage', 'write', 20, 1.5);
  record(rec, 'storage', 'read', 20, 1.25);
  rec.counters.cacheHits = 9;
  rec.counters.cacheMisses = 1;
  assert.deepEqual(storageHealth(rec.snapshot(), 'latency', 1), {
    overall_status: 'PASS',
    criteria: [
      { name: WRITE, target: 500, actual: 1.5, unit: 'ms', passed: true, samples: 20 },
      { name: READ, target: 200, actual: 1.25, unit: 'ms', passed: true, samples: 20 },
      { name: HIT, target: 0.3, actual: 0.9, unit: 'ratio', passed: true, samples: 10 },
    ],
    passed_count: 3,
    total_count: 3,
  });
  rec.counters.cacheHits = 1;
  rec.counters.cacheMisses = 9;
  const h = storageHealth(rec.snapshot(), 'latency', 1);
  assert.equal(h.overall_status, 'FAIL');
  assert.equal(h.passed_count, 2);
});

test('a p95 on 19 samples is not judged (INCOMPLETE); on 20 it is', () => {
  const rec = new Recorder();
  record(rec, 'storage', 'write', 19, 1.5);
  record(rec, 'storage', 'read', 20, 1.25);
  rec.counters.cacheHits = 5;
  const write = (): unknown => storageHealth(rec.snapshot(), 'latency', 1).criteria[0];
  assert.deepEqual(write(), { name: WRITE, target: 500, actual: null, unit: 'ms', passed: null, samples: 19 });
  assert.equal(storageHealth(rec.snapshot(), 'latency', 1).overall_status, 'INCOMPLETE');
  record(rec, 'storage', 'write', 1, 1.5);
  assert.deepEqual(write(), { name: WRITE, target: 500, actual: 1.5, unit: 'ms', passed: true, samples: 20 });
  assert.equal(storageHealth(rec.snapshot(), 'latency', 1).overall_status, 'PASS');
});

test('FAIL outranks INCOMPLETE: a judged failure is a fact whatever could not be judged', () => {
  const rec = new Recorder();
  record(rec, 'storage', 'read', 20, 1.25);
  rec.counters.cacheMisses = 10; // hit rate 0: fails
  const h = storageHealth(rec.snapshot(), 'latency', 1);
  assert.deepEqual(
    h.criteria.map((c) => c.passed),
    [null, true, false],
  );
  assert.equal(h.overall_status, 'FAIL');
});

test('demotion writes into storage count for the write criterion, merged with placement writes', () => {
  const rec = new Recorder();
  record(rec, 'storage', 'demote_write', 30, 1.75); // a run whose storage writes are all demotions
  record(rec, 'storage', 'read', 20, 1.25);
  rec.counters.cacheHits = 5;
  assert.deepEqual(storageHealth(rec.snapshot(), 'latency', 1).criteria[0], {
    name: WRITE,
    target: 500,
    actual: 1.75,
    unit: 'ms',
    passed: true,
    samples: 30,
  });
  // 30 placement writes at 1 ms and 30 demotions at 600 ms: the p95 is a demotion's, over 500 ms.
  record(rec, 'storage', 'write', 30, 1);
  for (let i = 0; i < 30; i++) rec.recordIo('storage', 'demote_write', { totalMs: 600, deviceMs: 600, hostMs: 0 });
  const both = new LatencyHistogram();
  for (let i = 0; i < 30; i++) both.recordMs(1);
  for (let i = 0; i < 30; i++) both.recordMs(1.75);
  for (let i = 0; i < 30; i++) both.recordMs(600);
  const w = storageHealth(rec.snapshot(), 'latency', 1).criteria[0];
  assert.equal(w?.samples, 90);
  assert.equal(w?.actual, both.percentileMs(95));
  assert.equal(w?.passed, false);
});

test('trace mode: nothing timed is judged (samples 0), so the status is never PASS', () => {
  const rec = new Recorder();
  record(rec, 'storage', 'write', 50, 0);
  record(rec, 'storage', 'read', 50, 0);
  record(rec, 'cpu', 'read', 50, 0);
  rec.counters.cacheHits = 9;
  rec.counters.cacheMisses = 1;
  const h = storageHealth(rec.snapshot(), 'latency', 1, { traceMode: true });
  assert.deepEqual(
    h.criteria.map((c) => [c.name, c.actual, c.passed, c.samples]),
    [
      [WRITE, null, null, 0],
      [READ, null, null, 0],
      ['CPU RAM P95 < 150ms', null, null, 0],
      [HIT, 0.9, true, 10],
    ],
  );
  assert.equal(h.overall_status, 'INCOMPLETE');
  const t = storageHealth(rec.snapshot(), 'throughput', 1, { traceMode: true });
  assert.equal(t.overall_status, 'INCOMPLETE');
});

test('the CPU criterion is listed, unjudged, when the CPU tier exists but saw no operation', () => {
  const rec = new Recorder();
  const names = (cpuTier: boolean): string[] => storageHealth(rec.snapshot(), 'latency', 1, { cpuTier }).criteria.map((c) => c.name);
  assert.deepEqual(names(false), [WRITE, READ, HIT]);
  assert.deepEqual(names(true), [WRITE, READ, 'CPU RAM P95 < 150ms', HIT]);
});

test('throughput profile: both bandwidths listed; one with fewer than 20 completed transfers is unjudged', () => {
  const rec = new Recorder();
  rec.traffic.storage.readBytes = GiB;
  record(rec, 'storage', 'read', 20, 1);
  const h = storageHealth(rec.snapshot(), 'throughput', 2);
  assert.deepEqual(h, {
    overall_status: 'INCOMPLETE',
    criteria: [
      { name: 'Storage KV Read Bandwidth', target: 0, actual: 0.5, unit: 'GiB/s', passed: true, samples: 20 },
      { name: 'Storage KV Write Bandwidth', target: 0, actual: null, unit: 'GiB/s', passed: null, samples: 0 },
    ],
    passed_count: 1,
    total_count: 2,
  });
  rec.traffic.storage.demoteInBytes = GiB; // demotions into storage are storage writes
  record(rec, 'storage', 'demote_write', 19, 1);
  assert.equal(storageHealth(rec.snapshot(), 'throughput', 2).criteria[1]?.samples, 19);
  assert.equal(storageHealth(rec.snapshot(), 'throughput', 2).overall_status, 'INCOMPLETE');
  record(rec, 'storage', 'demote_write', 1, 1);
  assert.equal(storageHealth(rec.snapshot(), 'throughput', 2).criteria[1]?.actual, 0.5);
  assert.equal(storageHealth(rec.snapshot(), 'throughput', 2).overall_status, 'PASS');
});
