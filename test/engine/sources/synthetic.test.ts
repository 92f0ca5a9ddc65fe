// The default source: synthetic users, the same per seed, and --max-requests split across the first users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syntheticSource } from '../../../src/engine/sources/synthetic.js';
import { parse } from '../../cli/helpers.js';
import { drain, USERS, usersContext } from './helpers.js';

test('synthetic source: nothing to read, no log line, described as synthetic', async () => {
  const { config } = parse([]);
  const opened = await syntheticSource.open(config);
  assert.deepEqual(opened.describe(), { kind: 'synthetic' });
  assert.deepEqual(opened.logLines(), []);
  assert.deepEqual(syntheticSource.inputs(config), []);
  assert.equal(syntheticSource.pick, undefined, 'the default source: no flag picks it');
  assert.equal(syntheticSource.recorded, false);
});

test('synthetic users: user i is the same whenever it is made, from the seed alone', async () => {
  const opened = await syntheticSource.open(parse([]).config);
  const a = opened.users(usersContext(7));
  const b = opened.users(usersContext(7));
  const first = await a.pool(5).next(); // a user beyond --num-users (autoscaling)
  const again = await b.pool(5).next();
  assert.equal(first?.request.userId, 'user_0005');
  assert.deepEqual(first, again);
  assert.equal(a.sourceFailure(), undefined);
  assert.equal(a.conversationsLost(), 0);
});

test('synthetic users with --max-requests: exactly the budget across the first users, fresh sessions beyond them', async () => {
  const opened = await syntheticSource.open(parse([]).config);
  const users = opened.users(usersContext(7, { cfg: { ...USERS, maxRequests: 10 } }));
  let total = 0;
  for (let i = 0; i < USERS.numUsers; i++) {
    const steps = await drain(users.pool(i));
    for (const s of steps) assert.equal(s.request.userId, `user_000${i}`);
    total += steps.length;
  }
  assert.equal(total, 10);
  assert.ok((await users.pool(USERS.numUsers).next()) !== undefined, 'a user added later is a live session');
});
