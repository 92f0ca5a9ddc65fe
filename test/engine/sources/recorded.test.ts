// Users over a pulled timeline (shared by the recorded sources): one item per pull, a failing timeline
// ends for every user and stops the run as failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pulledUsers } from '../../../src/engine/sources/recorded.js';
import type { RecordedShape } from '../../../src/engine/sources/recorded.js';
import { StopController } from '../../../src/engine/stop-control.js';
import { drain, usersContext } from './helpers.js';

const shape = (n: number): RecordedShape => ({
  id: `r${n}`,
  userId: 'u',
  contextTokens: n,
  generationTokens: 1,
  cacheKey: `r${n}`,
  turn: 1,
  previousTurnKeys: [],
  scheduledAtMs: n,
});

test('pulled users: a timeline failing mid-run ends the source for every user', async () => {
  const boom = new Error('bad row');
  let pulled = 0;
  const items: AsyncIterator<number> = {
    next: async () => {
      if (pulled++ > 0) throw boom;
      return { done: false, value: 50 };
    },
  };
  const stop = new StopController();
  const failures: unknown[] = [];
  const c = usersContext(1);
  const pool = pulledUsers(items, shape, { ...c.parts, rng: c.rng, multiTurn: true }, (e) => {
    failures.push(e);
    stop.stopWith('failed');
  });
  const steps = await drain(pool(0));
  assert.deepEqual(
    steps.map((s) => [s.request.id, s.request.contextTokens, s.request.scheduledAtMs, s.thinkTimeS]),
    [['r50', 50, 50, 0]],
  );
  assert.deepEqual(failures, [boom]);
  assert.equal(stop.reason('workload_complete'), 'failed');
  assert.equal(await pool(1).next(), undefined, 'the source stays ended for every user');
  assert.equal(pulled, 2, 'an ended timeline is not pulled again');
});

test('pulled users: a timeline that runs out ends every user', async () => {
  const c = usersContext(1);
  async function* three(): AsyncGenerator<number> {
    yield* [1, 2, 3];
  }
  const pool = pulledUsers(three(), shape, { ...c.parts, rng: c.rng, multiTurn: true }, () => assert.fail('no error'));
  const [u0, u1] = [pool(0), pool(1)];
  const pulls = [await u0.next(), await u1.next(), await u0.next(), await u1.next(), await u0.next()];
  assert.deepEqual(
    pulls.map((s) => s?.request.id),
    ['r1', 'r2', 'r3', undefined, undefined],
  );
});
