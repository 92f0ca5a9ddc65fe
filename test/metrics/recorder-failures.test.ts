// The recorder's honest accounting: only completed I/O counts in the reference's counters and the
// per-tier traffic; failures are kept per tier, operation and error class; cut-short operations add
// the bytes that moved but no operation; refused allocations are apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Recorder, failureClassOf } from '../../src/metrics/recorder.js';
import { timing } from '../../src/tiers/backend.js';

const errno = (code: string): Error => Object.assign(new Error(code), { code });

test('errno classes: the five a storage user acts on, everything else as other', () => {
  for (const c of ['ENOSPC', 'EDQUOT', 'EIO', 'EEXIST'] as const) assert.equal(failureClassOf(errno(c)), c);
  assert.equal(failureClassOf(errno('EACCES')), 'other');
  assert.equal(failureClassOf(new Error('no code')), 'other');
  assert.equal(failureClassOf('a string'), 'other');
});

test('a placement counts when it completed; a failure adds nothing but its failure count', () => {
  const r = new Recorder();
  r.recordPlacement('storage', 1000, 10, timing(1, 2), true);
  r.recordPlacement('storage', 500, 5, timing(1, 2), false);
  r.recordFailure('storage', 'placement_write', 'ENOSPC');
  r.recordFailure('storage', 'placement_write', 'ENOSPC');
  r.recordFailure('cpu', 'hit_read', 'other');
  const s = r.snapshot();
  assert.deepEqual(
    { w: s.counters.writeOperations, b: s.counters.totalWriteBytes, p: s.counters.prefillWrites, t: s.counters.storageTokensProcessed },
    { w: 2, b: 1500, p: 1, t: 15 },
  );
  assert.equal(s.traffic.storage.writeBytes, 1500);
  assert.equal(s.traffic.storage.failedOps, 2);
  assert.equal(s.traffic.cpu.failedOps, 1);
  assert.deepEqual(s.failures, [
    { tier: 'storage', operation: 'placement_write', error: 'ENOSPC', count: 2 },
    { tier: 'cpu', operation: 'hit_read', error: 'other', count: 1 },
  ]);
});

test('cut short by the end of the run: the bytes that moved count, the operation does not', () => {
  const r = new Recorder();
  r.recordPlacementStopped('storage', 4096);
  r.recordHitReadStopped('storage', 8192);
  r.recordDemotionStopped('cpu', 'storage', 100);
  const s = r.snapshot();
  assert.equal(s.counters.totalWriteBytes, 4096);
  assert.equal(s.counters.totalReadBytes, 8192);
  assert.equal(s.counters.writeOperations + s.counters.readOperations + s.counters.cacheHits + s.counters.prefillWrites, 0);
  assert.equal(s.traffic.storage.writeBytes, 4096);
  assert.equal(s.traffic.storage.readBytes, 8192);
  assert.equal(s.traffic.storage.demoteInBytes, 100);
  assert.equal(s.traffic.cpu.demoteOutBytes, 100);
  assert.equal(s.traffic.storage.writeOps + s.traffic.storage.readOps + s.traffic.storage.demoteInOps, 0);
  assert.equal(s.traffic.storage.abortedOps, 3);
});

test('a hit counts when its read completed, with its bytes, tokens and kind', () => {
  const r = new Recorder();
  r.recordHitRead('storage', 2048, 20, 'multi_turn', true, timing(0, 1));
  const c = r.snapshot().counters;
  assert.deepEqual(
    [c.cacheHits, c.multiTurnHits, c.decodeReads, c.readOperations, c.totalReadBytes, c.storageTokensProcessed],
    [1, 1, 1, 1, 2048, 20],
  );
  assert.equal(r.latency('storage_read').count, 1);
});

test('refused allocations are counted apart, and reset clears failures too', () => {
  const r = new Recorder();
  r.recordAllocationRefused(300);
  r.recordAllocationRefused(200);
  r.recordFailure('storage', 'delete', 'EIO');
  assert.deepEqual(r.snapshot().refusedAllocations, { count: 2, bytes: 500 });
  assert.equal(r.snapshot().counters.writeOperations, 0);
  r.reset();
  assert.deepEqual(r.snapshot().failures, []);
  assert.deepEqual(r.snapshot().refusedAllocations, { count: 0, bytes: 0 });
});
