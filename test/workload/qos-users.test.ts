// QoS classes (reference-tests §3), user generation (§5 users, §6) and settings resolution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { drawQos, isQosLevel, qosForDraw, qosPriority } from '../../src/workload/qos.js';
import { DEFAULT_SETTINGS, settingsFrom } from '../../src/settings/config-keys.js';
import { QOS_LEVELS } from '../../src/settings/choices.js';

const DEFAULT_QOS_PROFILES = DEFAULT_SETTINGS.qosProfiles;
import { generateUser, generateUsers, userId } from '../../src/workload/users.js';

test('qos: three levels with priorities 3/2/1', () => {
  assert.equal(QOS_LEVELS.length, 3);
  assert.deepEqual(Object.keys(DEFAULT_QOS_PROFILES).sort(), ['batch', 'interactive', 'responsive']);
  assert.equal(qosPriority('interactive'), 3);
  assert.equal(qosPriority('responsive'), 2);
  assert.equal(qosPriority('batch'), 1);
  assert.ok(isQosLevel('batch'));
  assert.ok(!isQosLevel('bulk'));
});

test('qos: targets — interactive p95 50 ms, tails strictly increasing, all four defined everywhere', () => {
  assert.equal(DEFAULT_QOS_PROFILES.interactive.targetLatencyP95Ms, 50);
  for (const level of QOS_LEVELS) {
    const p = DEFAULT_QOS_PROFILES[level];
    for (const v of [p.targetLatencyP95Ms, p.targetLatencyP99Ms, p.targetLatencyP999Ms, p.targetLatencyP9999Ms]) assert.ok(Number.isFinite(v) && v > 0);
    assert.ok(p.targetLatencyP99Ms > p.targetLatencyP95Ms);
    assert.ok(p.targetLatencyP999Ms > p.targetLatencyP99Ms);
    assert.ok(p.targetLatencyP9999Ms > p.targetLatencyP999Ms);
  }
  const r = DEFAULT_QOS_PROFILES.responsive;
  assert.deepEqual([r.targetLatencyP95Ms, r.targetLatencyP99Ms, r.targetLatencyP999Ms, r.targetLatencyP9999Ms], [100, 200, 350, 500]);
  const b = DEFAULT_QOS_PROFILES.batch;
  assert.deepEqual([b.targetLatencyP95Ms, b.targetLatencyP99Ms, b.targetLatencyP999Ms, b.targetLatencyP9999Ms], [1000, 5000, 7500, 10000]);
});

test('qos: assignment thresholds 0.15 / 0.50', () => {
  assert.equal(qosForDraw(0), 'interactive');
  assert.equal(qosForDraw(0.1499), 'interactive');
  assert.equal(qosForDraw(0.15), 'responsive');
  assert.equal(qosForDraw(0.4999), 'responsive');
  assert.equal(qosForDraw(0.5), 'batch');
  assert.equal(qosForDraw(0.999), 'batch');
  assert.equal(qosForDraw(0.3, { interactiveProbability: 0.4, responsiveThreshold: 0.6 }), 'interactive');
  const rng = new Rng(3);
  const counts = { interactive: 0, responsive: 0, batch: 0 };
  for (let i = 0; i < 20000; i++) counts[drawQos(rng)]++;
  assert.ok(Math.abs(counts.interactive / 20000 - 0.15) < 0.015);
  assert.ok(Math.abs(counts.responsive / 20000 - 0.35) < 0.02);
});

test('users: 1000 users with 15 % interactive → between 75 and 225 interactive', () => {
  const users = generateUsers(1000, new Rng(42));
  const interactive = users.filter((u) => u.qos === 'interactive').length;
  assert.ok(interactive >= 75 && interactive <= 225, `${interactive} interactive`);
});

test('users: 10 mixed users, contexts within [512, 25000], ≥ 1 QoS level, fields within their template', () => {
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
  assert.deepEqual(users.map((u) => u.userId), Array.from({ length: 10 }, (_, i) => userId(i)));
  assert.equal(userId(7), 'user_0007');
});

test('users: all three types appear in a larger population', () => {
  const types = new Set(generateUsers(200, new Rng(1)).map((u) => u.userType));
  assert.deepEqual([...types].sort(), ['chatbot', 'coding', 'document']);
});

test('users: a single user keeps the given id and QoS level', () => {
  const u = generateUser('test_user', new Rng(5), DEFAULT_SETTINGS, 'batch');
  assert.equal(u.userId, 'test_user');
  assert.equal(u.qos, 'batch');
  assert.equal(u.priority, 1);
});

test('users: per-user streams — a user does not depend on how many users are generated; seeds matter', () => {
  assert.deepEqual(generateUsers(5, new Rng(9)), generateUsers(20, new Rng(9)).slice(0, 5));
  assert.notDeepEqual(generateUsers(20, new Rng(9)), generateUsers(20, new Rng(10)));
});

test('settings: overrides replace only the given fields; templates drive user draws', () => {
  const s = settingsFrom({
    user_templates: { chatbot: { context_range: [256, 1024] } },
    conversation: { max_turns_per_conv: 7 },
    qos_profiles: { batch: { priority: 0 } },
  });
  assert.deepEqual(s.userTemplates.chatbot.contextRange, [256, 1024]);
  assert.deepEqual(s.userTemplates.chatbot.generationRange, [50, 200]);
  assert.equal(s.conversation.maxTurnsPerConv, 7);
  assert.equal(s.conversation.maxConversations, 1000);
  assert.equal(s.qosProfiles.batch.priority, 0);
  assert.equal(s.qosProfiles.batch.targetLatencyP95Ms, 1000);
  assert.equal(s.rag.maxChunkBytes, 268435456);
  assert.equal(s.decode.batchSize, 32);
  assert.equal(s.prefixCache.systemPromptHitProbability, 0.2);
  for (const u of generateUsers(100, new Rng(2), s)) {
    if (u.userType === 'chatbot') assert.ok(u.contextLength >= 256 && u.contextLength <= 1024);
  }
});
