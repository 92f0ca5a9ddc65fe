// The recorder: total, host and device latency per tier and operation, reset, and the windows of the
// autoscaler (kept only once taken, each holding the placement writes and hit reads since the last).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Recorder } from '../../src/metrics/recorder.js';
import { timing } from '../../src/tiers/backend.js';

test('windows start with the first takeWindow and hold what was recorded since the previous one', () => {
  const rec = new Recorder();
  rec.recordIo('storage', 'read', timing(1, 9));
  assert.equal(rec.takeWindow().size, 0, 'nothing is windowed before the first take');
  rec.recordIo('storage', 'read', timing(0, 20));
  rec.recordIo('storage', 'read', timing(0, 40));
  rec.recordIo('cpu', 'write', timing(0, 1));
  rec.recordIo('storage', 'demote_write', timing(0, 5)); // demotions are not windowed
  const w = rec.takeWindow();
  assert.deepEqual([...w.keys()].sort(), ['cpu_write', 'storage_read']);
  assert.equal(w.get('storage_read')?.count, 2);
  assert.equal(rec.takeWindow().size, 0, 'the next window starts empty');
  assert.equal(rec.latency('storage_read').count, 3, 'the run-long histogram keeps everything');
});

test('recorder keeps total, host and device per tier and op, and resets', () => {
  const r = new Recorder();
  r.recordIo('storage', 'write', { totalMs: 3, hostMs: 1, deviceMs: 2 });
  assert.equal(r.latency('storage_write').count, 1);
  assert.ok(Math.abs(r.latency('storage_write_device').meanMs - 2) < 1e-9);
  assert.ok(Math.abs(r.latency('storage_write_host').meanMs - 1) < 1e-9);
  r.counters.cacheHits = 5;
  r.traffic.cpu.readBytes = 10;
  r.reset();
  assert.equal(r.counters.cacheHits, 0);
  assert.equal(r.traffic.cpu.readBytes, 0);
  assert.equal(r.latencyIfAny('storage_write'), undefined);
});
