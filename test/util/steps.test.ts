// Step functions (util/steps.ts): synchronous until a real wait, errors delivered where they belong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drive, settle, wait } from '../../src/util/steps.js';
import type { Steps } from '../../src/util/steps.js';

function* plain(x: number): Steps<number> {
  const a = yield* wait(x + 1);
  return a * 2;
}

function* waits(x: number): Steps<number> {
  const a = yield* wait(Promise.resolve(x + 1));
  const b = (yield Promise.resolve(a * 2)) as number;
  return b + 1;
}

test('a computation that never waits returns its value synchronously', () => {
  assert.equal(drive(plain(4)), 10);
});

test('a computation that waits returns a promise of its final value', async () => {
  const out = drive(waits(4));
  assert.ok(out instanceof Promise);
  assert.equal(await out, 11);
});

test('a rejected wait is thrown at the yield, where the computation may catch it', async () => {
  function* recovers(): Steps<string> {
    try {
      yield Promise.reject(new Error('boom'));
      return 'not reached';
    } catch (e) {
      return `caught ${(e as Error).message}`;
    }
  }
  assert.equal(await settle(recovers()), 'caught boom');
});

test('errors propagate: synchronously from drive, as rejections from settle, and after a wait', async () => {
  // eslint-disable-next-line require-yield -- a step function that throws before its first yield
  function* throwsNow(): Steps<number> {
    throw new Error('now');
  }
  function* throwsLater(): Steps<number> {
    yield Promise.resolve();
    throw new Error('later');
  }
  assert.throws(() => drive(throwsNow()), /now/);
  await assert.rejects(settle(throwsNow()), /now/);
  await assert.rejects(settle(throwsLater()), /later/);
});

test('finally blocks run whether the computation finished synchronously or after waits', async () => {
  const log: string[] = [];
  function* guarded(waitFirst: boolean): Steps<void> {
    try {
      if (waitFirst) yield Promise.resolve();
      log.push(`body ${waitFirst}`);
    } finally {
      log.push(`finally ${waitFirst}`);
    }
  }
  assert.equal(drive(guarded(false)), undefined, 'no wait: drive finishes synchronously');
  await settle(guarded(true));
  assert.deepEqual(log, ['body false', 'finally false', 'body true', 'finally true']);
});
