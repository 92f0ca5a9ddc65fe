// User generation (docs/reference-compat.md#rc-26): types, QoS mix, ranges from the templates, per-user streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';

const DEFAULT_QOS_PROFILES = DEFAULT_SETTINGS.qosProfiles;
import { generateUser, generateUsers, userId } from '../../src/workload/users.js';

test('1000 users with 15 % interactive → between 75 and 225 interactive', () => {
  const users = generateUsers(1000, new Rng(42));
  const interactive = users.filter((u) => u.qos === 'interactive').length;
  assert.ok(interactive >= 75 && interactive <= 225, `${interactive} interactive`);
});

test('10 mixed users, contexts within [512, 25000], ≥ 1 QoS level, fields within their template', () => {
  const users = generateUsers(10, new Rng(7));
  assert.equal(users.length, 10);
  assert.ok(new Set(users.map((u) => u.qos)).size >= 1);
  for (const u of users) {
    assert.ok(u.contextLength >= 512 && u.contextLength <= 25000);
    const t = DEFAULT_SETTINGS.userTemplates[u.userType];
    assert.ok(u.contextLength >= t.contextRange[0] && u.contextLength <= t.contextRange[1]);
    assert.ok(u.generationLength >= t.generationRange[0] && u.generationLength <= t.generationRange[1]);
    assert.ok(u.thinkTimeS >= t.thinkTimeRange[0] && u.thinkTimeS < t.thinkTimeRange[1]);
    assert.equal(u.priority, DEFAULT_QOS_PROFILES[u.qos].priority);
  }
  assert.deepEqual(
    users.map((u) => u.userId),
    Array.from({ length: 10 }, (_, i) => userId(i)),
  );
  assert.equal(userId(7), 'user_0007');
});

test('all three types appear in a larger population', () => {
  const types = new Set(generateUsers(200, new Rng(1)).map((u) => u.userType));
  assert.deepEqual([...types].sort(), ['chatbot', 'coding', 'document']);
});

test('a single user keeps the given id and QoS level', () => {
  const u = generateUser('test_user', new Rng(5), DEFAULT_SETTINGS, 'batch');
  assert.equal(u.userId, 'test_user');
  assert.equal(u.qos, 'batch');
  assert.equal(u.priority, 1);
});

test('per-user streams — a user does not depend on how many users are generated; seeds matter', () => {
  assert.deepEqual(generateUsers(5, new Rng(9)), generateUsers(20, new Rng(9)).slice(0, 5));
  assert.notDeepEqual(generateUsers(20, new Rng(9)), generateUsers(20, new Rng(10)));
});
