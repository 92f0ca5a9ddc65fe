// Recorder windows (the autoscaler's windowed percentiles): kept only once taken, each window holds
// the placement writes and hit reads since the previous one, per `<tier>_<op>`.
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
