// User sessions: request keys (the reference's, without wall-clock time), sizes, phase rule, think time,
// conversation flow, reproducibility, and recovery from a dropped live conversation (docs/reference-compat.md#rc-28).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import type { ModelConfig } from '../../src/model/models.js';
import { ConversationManager } from '../../src/workload/conversation.js';
import { PrefixMatcher } from '../../src/workload/prefix.js';
import { RagDocumentManager } from '../../src/workload/rag.js';
import {
  decodeBatchReads,
  hasDecode,
  hasPrefill,
  phaseFor,
  prefillTokens,
  PREFILL_ONLY_THRESHOLD_TOKENS,
} from '../../src/workload/request.js';
import type { Request } from '../../src/workload/request.js';
import { createSessions, sessionStream, UserSession } from '../../src/workload/session.js';
import { DEFAULT_SETTINGS, settingsFrom } from '../../src/settings/config-keys.js';
import type { Settings } from '../../src/settings/config-keys.js';

const DEFAULT_RAG = DEFAULT_SETTINGS.rag;
import { generateUsers } from '../../src/workload/users.js';
import type { UserProfile } from '../../src/workload/users.js';

function tiny(): ModelConfig {
  const m = BUILTIN_MODELS.get('tiny-1b');
  assert.ok(m);
  return m;
}

function profile(over: Partial<UserProfile> = {}): UserProfile {
  return {
    userId: 'user_0001',
    userType: 'chatbot',
    contextLength: 4000,
    generationLength: 128,
    thinkTimeS: 0.25,
    qos: 'responsive',
    priority: 2,
    ...over,
  };
}

function settingsWith(conv: { end_conversation_probability: number }): Settings {
  return settingsFrom({ conversation: conv });
}

test('phase: prefill-only at ≥ 10,000 context tokens, else both', () => {
  assert.equal(PREFILL_ONLY_THRESHOLD_TOKENS, 10000);
  assert.equal(phaseFor(9999), 'both');
  assert.equal(phaseFor(10000), 'prefill');
  assert.equal(phaseFor(25000), 'prefill');
  assert.ok(hasPrefill('both') && hasDecode('both'));
  assert.ok(hasPrefill('prefill') && !hasDecode('prefill'));
  assert.ok(!hasPrefill('decode') && hasDecode('decode'));
  assert.equal(decodeBatchReads(128, 32), 4);
  assert.equal(decodeBatchReads(129, 32), 5);
  const s = new UserSession({ profile: profile({ contextLength: 20000 }), rng: new Rng(1) });
  let both = 0;
  let prefill = 0;
  for (let i = 0; i < 500; i++) {
    const r = s.nextRequest().request;
    assert.equal(r.phase, r.contextTokens >= 10000 ? 'prefill' : 'both');
    if (r.phase === 'prefill') prefill++;
    else both++;
  }
  assert.ok(both > 0 && prefill > 0);
});

test('keys without multi-turn: <userId>_req_<seq:06d>, turn 1, no conversation (reference used <user>_ctx)', () => {
  const s = new UserSession({ profile: profile(), rng: new Rng(1) });
  const a = s.nextRequest().request;
  const b = s.nextRequest().request;
  assert.equal(a.cacheKey, 'user_0001_req_000000');
  assert.equal(b.cacheKey, 'user_0001_req_000001');
  assert.equal(a.id, a.cacheKey);
  assert.equal(a.turn, 1);
  assert.equal(a.conversationId, undefined);
  assert.deepEqual(a.previousTurnKeys, []);
  assert.equal(a.kind, 'chat');
  assert.equal(s.requestCount, 2);
});

test('keys with multi-turn: <convId>_turn_<n>; previous keys are the earlier turns', () => {
  const conversations = new ConversationManager({ maxTurnsPerConv: 3 });
  const s = new UserSession({
    profile: profile(),
    rng: new Rng(1),
    conversations,
    settings: settingsWith({ end_conversation_probability: 0 }),
  });
  const reqs = Array.from({ length: 7 }, () => s.nextRequest().request);
  assert.deepEqual(
    reqs.map((r) => r.turn),
    [1, 2, 3, 1, 2, 3, 1],
  );
  assert.deepEqual(
    reqs.map((r) => r.conversationId),
    [
      'conv_user_0001_1',
      'conv_user_0001_1',
      'conv_user_0001_1',
      'conv_user_0001_2',
      'conv_user_0001_2',
      'conv_user_0001_2',
      'conv_user_0001_3',
    ],
  );
  for (const r of reqs) {
    assert.equal(r.cacheKey, `${r.conversationId}_turn_${r.turn}`);
    assert.equal(r.previousTurnKeys.length, r.turn - 1);
  }
  assert.deepEqual(reqs[2]?.previousTurnKeys, ['conv_user_0001_1_turn_1', 'conv_user_0001_1_turn_2']);
  assert.equal(
    conversations.contextSize('conv_user_0001_1'),
    reqs.slice(0, 3).reduce((a, r) => a + r.contextTokens + r.generationTokens, 0),
  );
  assert.equal(conversations.stats.ended, 2);
});

test('conversation end probability: 1 → always a new conversation; 0.2 → mean turn about 5', () => {
  const always = new UserSession({
    profile: profile(),
    rng: new Rng(2),
    conversations: new ConversationManager(),
    settings: settingsWith({ end_conversation_probability: 1 }),
  });
  for (let i = 0; i < 20; i++) assert.equal(always.nextRequest().request.turn, 1);
  const s = new UserSession({ profile: profile(), rng: new Rng(3), conversations: new ConversationManager() });
  let sum = 0;
  const n = 20000;
  for (let i = 0; i < n; i++) sum += s.nextRequest().request.turn;
  const mean = sum / n;
  assert.ok(mean > 4.6 && mean < 5.4, `mean turn ${mean}`);
});

test('sizes, think time and the session timeline', () => {
  const p = profile({ contextLength: 1000, generationLength: 7, thinkTimeS: 0.5 });
  const s = new UserSession({ profile: p, rng: new Rng(4), startAtMs: 1000 });
  let last = 1000;
  for (let i = 0; i < 2000; i++) {
    const { thinkTimeS, request } = s.nextRequest();
    assert.ok(request.contextTokens >= 250 && request.contextTokens <= 1000);
    assert.ok(request.generationTokens >= 1 && request.generationTokens <= 7);
    assert.ok(thinkTimeS >= 0.4 && thinkTimeS < 0.6);
    assert.ok(Math.abs(request.scheduledAtMs - (last + thinkTimeS * 1000)) < 1e-6);
    last = request.scheduledAtMs;
    assert.equal(request.qos, 'responsive');
    assert.equal(request.priority, 2);
  }
  assert.equal(s.timeMs, last);
  const one = new UserSession({ profile: profile({ contextLength: 1, generationLength: 1 }), rng: new Rng(4) }).nextRequest().request;
  assert.equal(one.contextTokens, 1);
  assert.equal(one.generationTokens, 1);
});

function runAll(seed: number): Request[] {
  const rng = new Rng(seed);
  const users = generateUsers(20, rng);
  const rag = new RagDocumentManager(tiny());
  rag.planIngest(10, rng.fork('rag'));
  const sessions = createSessions(users, rng, {
    conversations: new ConversationManager(),
    prefix: new PrefixMatcher(24576),
    rag,
  });
  const out: Request[] = [];
  for (let i = 0; i < 50; i++) {
    for (const s of sessions) {
      const step = s.nextRequest();
      out.push(step.request);
      if (step.ragRequest !== undefined) out.push(step.ragRequest);
    }
  }
  return out;
}

test('reproducibility: same seed → identical sequences (20 users × 50 requests); another seed differs', () => {
  const a = runAll(42);
  const b = runAll(42);
  assert.ok(a.length >= 1000);
  assert.deepEqual(a, b);
  assert.notDeepEqual(runAll(43), a);
  assert.ok(a.some((r) => r.kind === 'rag'));
  assert.ok(a.some((r) => r.systemPrompt !== undefined));
  assert.ok(a.some((r) => r.ragRetrieval !== undefined));
  assert.ok(a.some((r) => r.turn > 1));
  assert.equal(new Set(a.map((r) => r.id)).size, a.length);
});

test('session streams are independent of the profile stream', () => {
  const rng = new Rng(5);
  assert.notEqual(sessionStream(rng, 'user_0000').random(), rng.fork('user_0000').random());
});

test('a dropped live conversation does not throw: the session starts a fresh one (RC-28)', () => {
  const conversations = new ConversationManager({ maxConversations: 1 });
  const settings = settingsWith({ end_conversation_probability: 0 });
  const a = new UserSession({ profile: profile({ userId: 'user_a' }), rng: new Rng(6), conversations, settings });
  const b = new UserSession({ profile: profile({ userId: 'user_b' }), rng: new Rng(7), conversations, settings });
  const a1 = a.nextRequest();
  assert.equal(a1.request.conversationId, 'conv_user_a_1');
  assert.equal(a.nextRequest().request.turn, 2);
  b.nextRequest(); // the limit of 1 drops user_a's open conversation
  assert.ok(!conversations.isLive('conv_user_a_1'));
  const a3 = a.nextRequest();
  assert.equal(a3.conversationLost, true);
  assert.equal(a3.request.conversationId, 'conv_user_a_2');
  assert.equal(a3.request.turn, 1);
  assert.deepEqual(a3.request.previousTurnKeys, []);
  assert.equal(a3.request.cacheKey, 'conv_user_a_2_turn_1');
  assert.equal(a.conversationsLost, 1);
  assert.equal(a.currentConversation, 'conv_user_a_2');
  const a4 = a.nextRequest();
  assert.equal(a4.conversationLost, false);
  assert.equal(a4.request.turn, 2);
});

test('prefix draws: attached to requests; prefill tokens exclude the shared prefix', () => {
  const prefix = new PrefixMatcher(24576, { systemPromptHitProbability: 1, minPrefixLength: 50, maxPrefixEntries: 1000 });
  const s = new UserSession({ profile: profile(), rng: new Rng(8), prefix });
  for (let i = 0; i < 20; i++) {
    const r = s.nextRequest().request;
    assert.ok(r.systemPrompt !== undefined);
    assert.equal(prefillTokens(r), r.contextTokens - r.systemPrompt.tokens);
  }
  assert.equal(prefix.stats.prefixHits + prefix.stats.prefixMisses, 0, 'drawing does not account');
  const none = new UserSession({ profile: profile(), rng: new Rng(8) }).nextRequest().request;
  assert.equal(none.systemPrompt, undefined);
  assert.equal(prefillTokens(none), none.contextTokens);
});

test('RAG: with probability 1 every request reads chunks and brings a decode request on rag_<docId>', () => {
  const rag = new RagDocumentManager(tiny(), { ...DEFAULT_RAG, requestProbability: 1 });
  const settings = settingsFrom({ rag: { request_probability: 1 } });
  const empty = new UserSession({ profile: profile(), rng: new Rng(9), rag, settings }).nextRequest();
  assert.equal(empty.ragRequest, undefined, 'no documents ingested yet');
  rag.planIngest(3, new Rng(10));
  const s = new UserSession({ profile: profile(), rng: new Rng(9), rag, settings });
  for (let i = 0; i < 20; i++) {
    const { request, ragRequest } = s.nextRequest();
    assert.ok(request.ragRetrieval !== undefined);
    assert.equal(request.ragRetrieval.chunks.length, 5);
    assert.ok(ragRequest !== undefined);
    assert.equal(ragRequest.kind, 'rag');
    assert.equal(ragRequest.phase, 'decode');
    assert.match(ragRequest.cacheKey, /^rag_doc_000[0-2]$/);
    assert.match(ragRequest.id, /^user_0001_rag_\d{6}$/);
    assert.ok(ragRequest.generationTokens >= 50 && ragRequest.generationTokens <= 200);
    assert.ok(ragRequest.contextTokens > 0 && ragRequest.contextTokens <= 5 * 512);
    assert.equal(ragRequest.scheduledAtMs, request.scheduledAtMs);
    assert.equal(ragRequest.priority, request.priority);
  }
});

test('many users over a small conversation limit: drops are survived, every request is valid', () => {
  const rng = new Rng(13);
  const conversations = new ConversationManager({ maxConversations: 15 });
  const sessions = createSessions(generateUsers(20, rng), rng, { conversations });
  let lost = 0;
  for (let i = 0; i < 50; i++) {
    for (const s of sessions) {
      const { request, conversationLost } = s.nextRequest();
      if (conversationLost) lost++;
      assert.equal(request.cacheKey, `${request.conversationId}_turn_${request.turn}`);
      assert.equal(request.previousTurnKeys.length, request.turn - 1);
    }
  }
  assert.ok(lost > 0);
  assert.ok(conversations.size <= 15);
  assert.ok(conversations.stats.droppedLive >= lost);
});
