import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StopController } from '../../src/engine/stop-control.js';

test('stop controller: the first reason is kept, the stop hook runs once', () => {
  let stops = 0;
  const stop = new StopController(() => stops++);
  assert.equal(stop.stopped, false);
  assert.equal(stop.reason('workload_complete'), 'workload_complete');
  stop.stopWith('duration');
  stop.stopWith('max_requests');
  stop.stopWith('interrupted');
  assert.equal(stop.stopped, true);
  assert.equal(stop.signal.aborted, true);
  assert.equal(stop.reason('workload_complete'), 'duration');
  assert.equal(stops, 1);
});

test('stop controller: fail keeps the first error and stops as failed unless already stopping', () => {
  const stop = new StopController();
  const first = new Error('first');
  stop.fail(first);
  stop.fail(new Error('second'));
  assert.equal(stop.failure, first);
  assert.equal(stop.reason('max_requests'), 'failed');

  const late = new StopController();
  late.stopWith('duration');
  late.fail(first);
  assert.equal(late.failure, first, 'the error is kept even when the run was already stopping');
  assert.equal(late.reason('max_requests'), 'duration');
});

test('stop controller: follows an interrupt until detached; an interrupt given before stops at once', () => {
  const interrupt = new AbortController();
  const stop = new StopController();
  const unfollow = stop.follow(interrupt.signal);
  interrupt.abort();
  assert.equal(stop.reason('duration'), 'interrupted');

  const detached = new StopController();
  const later = new AbortController();
  detached.follow(later.signal)();
  later.abort();
  assert.equal(detached.stopped, false);
  unfollow();

  const early = new StopController();
  early.follow(AbortSignal.abort());
  assert.equal(early.reason('duration'), 'interrupted');
  const detach = new StopController().follow(undefined); // nothing to follow: detaching is a no-op
  assert.doesNotThrow(detach);
});
