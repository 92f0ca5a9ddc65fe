import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUsers, buildWorkloadParts } from '../../src/engine/build-workload.js';
import type { UserSwitches } from '../../src/engine/build-workload.js';
import type { StepSource } from '../../src/engine/dispatcher.js';
import { StopController } from '../../src/engine/stop-control.js';
import type { WorkloadSource } from '../../src/engine/workload-source.js';
import { Rng } from '../../src/util/rng.js';
import type { BurstTimelineItem } from '../../src/workload/burstgpt.js';
import type { SessionStep } from '../../src/workload/session.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';
import type { ShareGptDataset } from '../../src/workload/sharegpt.js';
import { TINY } from '../cache/helpers.js';

const SWITCHES = { model: TINY, disableMultiTurn: false, disablePrefixCaching: false, enableRag: false };
const USERS: UserSwitches = { numUsers: 3, maxRequests: 0, requestRate: 0, replayCycles: 1, disableMultiTurn: false };

async function drain(source: StepSource, limit = 1000): Promise<SessionStep[]> {
  const steps: SessionStep[] = [];
  for (let s = await source.next(); s !== undefined && steps.length < limit; s = await source.next()) steps.push(s);
  return steps;
}

test('workload parts: each manager exists only when its feature is on', () => {
  const all = buildWorkloadParts({ ...SWITCHES, enableRag: true }, DEFAULT_SETTINGS);
  assert.ok(all.conversations !== undefined && all.prefix !== undefined && all.rag !== undefined);
  assert.equal(all.settings, DEFAULT_SETTINGS);
  const none = buildWorkloadParts({ ...SWITCHES, disableMultiTurn: true, disablePrefixCaching: true }, DEFAULT_SETTINGS);
  assert.deepEqual(Object.keys(none), ['settings']);
});

test('synthetic users: user i is the same whenever it is made, from the seed alone', async () => {
  const build = () =>
    buildUsers(USERS, buildWorkloadParts(SWITCHES, DEFAULT_SETTINGS), { kind: 'synthetic' }, new Rng(7), new StopController());
  const a = build();
  const b = build();
  const first = await a.pool(5).next(); // a user beyond --num-users (autoscaling)
  const again = await b.pool(5).next();
  assert.equal(first?.request.userId, 'user_0005');
  assert.deepEqual(first, again);
  assert.equal(a.sourceFailure(), undefined);
  assert.equal(a.conversationsLost(), 0);
});

test('synthetic users with --max-requests: exactly the budget across the first users, fresh sessions beyond them', async () => {
  const users = buildUsers(
    { ...USERS, maxRequests: 10 },
    buildWorkloadParts(SWITCHES, DEFAULT_SETTINGS),
    { kind: 'synthetic' },
    new Rng(7),
    new StopController(),
  );
  let total = 0;
  for (let i = 0; i < USERS.numUsers; i++) {
    const steps = await drain(users.pool(i));
    for (const s of steps) assert.equal(s.request.userId, `user_000${i}`);
    total += steps.length;
  }
  assert.equal(total, 10);
  assert.ok((await users.pool(USERS.numUsers).next()) !== undefined, 'a user added later is a live session');
});

test('ShareGPT users: each user claims whole conversations, turns in order', async () => {
  const dataset = {
    conversations: [
      {
        id: 'a',
        turns: [
          { contextTokens: 100, generationTokens: 10 },
          { contextTokens: 200, generationTokens: 20 },
        ],
      },
      { id: 'b', turns: [{ contextTokens: 300, generationTokens: 30 }] },
    ],
    stats: {},
  } as unknown as ShareGptDataset;
  const source: WorkloadSource = { kind: 'sharegpt', path: 'x.json', tokenizer: 'chars', dataset };
  const users = buildUsers(USERS, buildWorkloadParts(SWITCHES, DEFAULT_SETTINGS), source, new Rng(1), new StopController());
  const u0 = users.pool(0);
  const u1 = users.pool(1);
  // Alternate pulls: a user keeps its conversation until its last turn, then claims the next one.
  const pulls = [await u0.next(), await u1.next(), await u0.next(), await u1.next(), await u0.next()];
  const seen = pulls.flatMap((s) =>
    s === undefined
      ? []
      : [{ user: s.request.userId, conv: s.request.conversationId, turn: s.request.turn, context: s.request.contextTokens }],
  );
  assert.equal(seen.length, 3, 'three turns in all, then every user runs dry');
  const a = seen.filter((s) => s.context !== 300);
  assert.deepEqual(
    a.map((s) => s.turn),
    [1, 2],
  );
  assert.equal(new Set(a.map((s) => s.user)).size, 1, 'one user runs the whole conversation');
  assert.equal(new Set(a.map((s) => s.conv)).size, 1);
  const b = seen.find((s) => s.context === 300);
  assert.ok(b !== undefined && b.user !== a[0]?.user, 'the other conversation goes to the other user');
  assert.deepEqual(new Set(seen.map((s) => s.user)), new Set(['dataset_user_0', 'dataset_user_1']));
});

test('BurstGPT users: a trace failing mid-run ends the source and stops the run as failed', async () => {
  const boom = new Error('bad row');
  let pulled = 0;
  const items: AsyncIterator<BurstTimelineItem> = {
    next: async () => {
      if (pulled++ > 0) throw boom;
      return {
        done: false,
        value: {
          row: { timestampS: 0, requestTokens: 50, responseTokens: 5, totalTokens: 55, file: 'f', line: 2 },
          pass: 0,
          index: 0,
          scheduledAtMs: 0,
        },
      };
    },
  };
  const source = { kind: 'burstgpt', files: ['f'], stats: {}, items } as unknown as WorkloadSource;
  const stop = new StopController();
  const users = buildUsers(USERS, buildWorkloadParts(SWITCHES, DEFAULT_SETTINGS), source, new Rng(1), stop);
  const steps = await drain(users.pool(0));
  assert.deepEqual(
    steps.map((s) => [s.request.userId, s.request.contextTokens]),
    [['trace_user_0', 50]],
  );
  assert.equal(users.sourceFailure(), boom);
  assert.equal(stop.reason('workload_complete'), 'failed');
  assert.equal(stop.failure, undefined, 'a source failure is not a request failure');
  assert.equal(await users.pool(1).next(), undefined, 'the source stays ended for every user');
});
