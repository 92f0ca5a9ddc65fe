// Settings from the config-key table: the default QoS targets, and overrides that replace only the fields given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { DEFAULT_SETTINGS, settingsFrom } from '../../src/settings/config-keys.js';
import { QOS_LEVELS } from '../../src/settings/choices.js';

const DEFAULT_QOS_PROFILES = DEFAULT_SETTINGS.qosProfiles;
import { generateUsers } from '../../src/workload/users.js';

test('QoS targets — interactive p95 50 ms, tails strictly increasing, all four defined everywhere', () => {
  assert.equal(DEFAULT_QOS_PROFILES.interactive.targetLatencyP95Ms, 50);
  for (const level of QOS_LEVELS) {
    const p = DEFAULT_QOS_PROFILES[level];
    for (const v of [p.targetLatencyP95Ms, p.targetLatencyP99Ms, p.targetLatencyP999Ms, p.targetLatencyP9999Ms])
      assert.ok(Number.isFinite(v) && v > 0);
    assert.ok(p.targetLatencyP99Ms > p.targetLatencyP95Ms);
    assert.ok(p.targetLatencyP999Ms > p.targetLatencyP99Ms);
    assert.ok(p.targetLatencyP9999Ms > p.targetLatencyP999Ms);
  }
  const r = DEFAULT_QOS_PROFILES.responsive;
  assert.deepEqual([r.targetLatencyP95Ms, r.targetLatencyP99Ms, r.targetLatencyP999Ms, r.targetLatencyP9999Ms], [100, 200, 350, 500]);
  const b = DEFAULT_QOS_PROFILES.batch;
  assert.deepEqual([b.targetLatencyP95Ms, b.targetLatencyP99Ms, b.targetLatencyP999Ms, b.targetLatencyP9999Ms], [1000, 5000, 7500, 10000]);
});

test('overrides replace only the given fields; templates drive user draws', () => {
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
