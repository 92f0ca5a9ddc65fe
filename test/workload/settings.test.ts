// Workload settings: the default QoS targets, and overrides that replace only the fields given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { DEFAULT_QOS_PROFILES, QOS_LEVELS, resolveWorkloadSettings } from '../../src/workload/settings.js';
import { generateUsers } from '../../src/workload/users.js';

test('QoS targets — interactive p95 50 ms, tails strictly increasing, all four defined everywhere', () => {
  assert.equal(DEFAULT_QOS_PROFILES.interactive.targetP95Ms, 50);
  for (const level of QOS_LEVELS) {
    const p = DEFAULT_QOS_PROFILES[level];
    for (const v of [p.targetP95Ms, p.targetP99Ms, p.targetP999Ms, p.targetP9999Ms]) assert.ok(Number.isFinite(v) && v > 0);
    assert.ok(p.targetP99Ms > p.targetP95Ms);
    assert.ok(p.targetP999Ms > p.targetP99Ms);
    assert.ok(p.targetP9999Ms > p.targetP999Ms);
    assert.equal(p.level, level);
  }
  const r = DEFAULT_QOS_PROFILES.responsive;
  assert.deepEqual([r.targetP95Ms, r.targetP99Ms, r.targetP999Ms, r.targetP9999Ms], [100, 200, 350, 500]);
  const b = DEFAULT_QOS_PROFILES.batch;
  assert.deepEqual([b.targetP95Ms, b.targetP99Ms, b.targetP999Ms, b.targetP9999Ms], [1000, 5000, 7500, 10000]);
});

test('overrides replace only the given fields; templates drive user draws', () => {
  const s = resolveWorkloadSettings({
    userTemplates: { chatbot: { contextRange: [256, 1024] } },
    conversation: { maxTurnsPerConv: 7 },
    qosProfiles: { batch: { priority: 0 } },
  });
  assert.deepEqual(s.userTemplates.chatbot.contextRange, [256, 1024]);
  assert.deepEqual(s.userTemplates.chatbot.generationRange, [50, 200]);
  assert.equal(s.conversation.maxTurnsPerConv, 7);
  assert.equal(s.conversation.maxConversations, 1000);
  assert.equal(s.qosProfiles.batch.priority, 0);
  assert.equal(s.qosProfiles.batch.targetP95Ms, 1000);
  assert.equal(s.rag.maxChunkBytes, 268435456);
  assert.equal(s.decode.batchSize, 32);
  assert.equal(s.prefixCache.systemPromptHitProbability, 0.2);
  for (const u of generateUsers(100, new Rng(2), s)) {
    if (u.userType === 'chatbot') assert.ok(u.contextLength >= 256 && u.contextLength <= 1024);
  }
});
