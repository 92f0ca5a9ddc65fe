// The recorder: total, host and device latency per tier and operation, reset, and the windows of the
// per-consumer interval windows (each holding the selected operations since its own last take).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Recorder } from '../../src/metrics/recorder.js';
import { timing } from '../../src/tiers/backend.js';

const READS_AND_WRITES = {
  storage_read: [['storage', 'read']],
  cpu_write: [['cpu', 'write']],
} as const;

test('a window holds what was recorded since its previous take, from the moment it opened', () => {
  const rec = new Recorder();
  rec.recordIo('storage', 'read', timing(1, 9)); // before any window: only the run-long histogram
  const w = rec.openWindow(READS_AND_WRITES);
  assert.equal(w.take().size, 0, 'nothing recorded since the window opened');
  rec.recordIo('storage', 'read', timing(0, 20));
  rec.recordIo('storage', 'read', timing(0, 40));
  rec.recordIo('cpu', 'write', timing(0, 1));
  rec.recordIo('storage', 'demote_write', timing(0, 5)); // not selected
  const taken = w.take();
  assert.deepEqual([...taken.keys()].sort(), ['cpu_write', 'storage_read']);
  assert.equal(taken.get('storage_read')?.count, 2);
  assert.equal(taken.get('storage_read')?.maxMs, 40);
  assert.equal(w.take().size, 0, 'the next window starts empty');
  assert.equal(rec.latency('storage_read').count, 3, 'the run-long histogram keeps everything');
});

test('windows are per consumer: one take never empties another window', () => {
  const rec = new Recorder();
  const a = rec.openWindow(READS_AND_WRITES);
  const b = rec.openWindow({
    storage_all_writes: [
      ['storage', 'write'],
      ['storage', 'demote_write'],
    ],
  });
  rec.recordIo('storage', 'read', timing(0, 3));
  rec.recordIo('storage', 'write', timing(0, 7));
  rec.recordIo('storage', 'demote_write', timing(0, 11));
  assert.equal(a.take().get('storage_read')?.count, 1);
  rec.recordIo('storage', 'write', timing(0, 13));
  const fromB = b.take();
  assert.equal(fromB.get('storage_all_writes')?.count, 3, "b still holds what a's take came after, and both write kinds");
  assert.equal(a.take().size, 0, 'a selects no storage writes');
  rec.closeWindow(a);
  rec.recordIo('storage', 'read', timing(0, 3));
  assert.equal(a.take().size, 0, 'a closed window collects nothing');
});

test('a window reuses its histograms: two per name, however many takes', () => {
  const rec = new Recorder();
  const w = rec.openWindow(READS_AND_WRITES);
  for (let i = 0; i < 600; i++) {
    rec.recordIo('storage', 'read', timing(0, 1 + (i % 7)));
    const taken = w.take();
    assert.equal(taken.get('storage_read')?.count, 1, `take ${i} holds exactly its own sample`);
  }
  assert.equal(w.histogramsCreated, 2);
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
