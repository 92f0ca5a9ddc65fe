// Conversation manager (the reference's defaults and tests) and the dropped-live-conversation fix (docs/reference-compat.md#rc-28).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversationManager } from '../../src/workload/conversation.js';

test('conversation: defaults 1000 / 50; explicit values win', () => {
  const d = new ConversationManager();
  assert.equal(d.maxConversations, 1000);
  assert.equal(d.maxTurnsPerConv, 50);
  const e = new ConversationManager({ maxConversations: 42, maxTurnsPerConv: 7 });
  assert.equal(e.maxConversations, 42);
  assert.equal(e.maxTurnsPerConv, 7);
  assert.throws(() => new ConversationManager({ maxConversations: 0 }), RangeError);
});

test('conversation: limit kept; id starts conv_user_1_; turn numbers and keys', () => {
  const m = new ConversationManager({ maxConversations: 5 });
  assert.equal(m.maxConversations, 5);
  const id = m.start('user_1');
  assert.ok(id.startsWith('conv_user_1_'));
  assert.ok(m.isLive(id));
  assert.equal(m.activeConversation('user_1'), id);
  assert.equal(m.turnNumber(id), 0);
  const t1 = m.addTurn(id, 100, 50);
  assert.deepEqual(t1, { ok: true, turn: 1, key: `${id}_turn_1` });
  const t2 = m.addTurn(id, 200, 100);
  assert.ok(t2.ok);
  assert.equal(t2.turn, 2);
  assert.equal(m.contextSize(id), 450);
  assert.deepEqual(m.previousTurnKeys(id, 2), [`${id}_turn_1`]);
  assert.deepEqual(m.previousTurnKeys(id), [`${id}_turn_1`]);
  assert.deepEqual(m.previousTurnKeys(id, 1), []);
  m.addTurn(id);
  assert.deepEqual(m.previousTurnKeys(id), [`${id}_turn_1`, `${id}_turn_2`]);
});

test('conversation: ids are reproducible (per-user counter, no wall clock)', () => {
  const a = new ConversationManager();
  const b = new ConversationManager();
  const ids = (m: ConversationManager): string[] => [m.start('u'), m.start('v'), m.start('u')];
  assert.deepEqual(ids(a), ids(b));
  assert.deepEqual(ids(new ConversationManager()), ['conv_u_1', 'conv_v_1', 'conv_u_2']);
});

test('conversation: 10 starts with limit 5 leave at most 5, the oldest dropped', () => {
  const m = new ConversationManager({ maxConversations: 5 });
  const ids = Array.from({ length: 10 }, (_, i) => m.start(`user_${i}`));
  assert.ok(m.size <= 5);
  assert.equal(m.size, 5);
  for (const id of ids.slice(0, 5)) assert.ok(!m.isLive(id));
  for (const id of ids.slice(5)) assert.ok(m.isLive(id));
  assert.equal(m.stats.dropped, 5);
  assert.equal(m.stats.droppedLive, 5);
});

test('conversation: least recently used is dropped, not the oldest created', () => {
  const m = new ConversationManager({ maxConversations: 2 });
  const a = m.start('a');
  const b = m.start('b');
  m.addTurn(a); // a is now more recent than b
  m.start('c');
  assert.ok(m.isLive(a));
  assert.ok(!m.isLive(b));
});

test('conversation: ending unmaps from the user but keeps the state until dropped', () => {
  const m = new ConversationManager({ maxConversations: 3 });
  const a = m.start('u');
  m.addTurn(a, 10, 10);
  m.end(a);
  assert.equal(m.activeConversation('u'), undefined);
  assert.ok(m.isLive(a));
  assert.equal(m.contextSize(a), 20);
  assert.equal(m.stats.ended, 1);
  m.start('x');
  m.start('y');
  m.start('z'); // drops `a`, which was ended: not a live drop
  assert.ok(!m.isLive(a));
  assert.equal(m.stats.droppedLive, 0);
});

test('conversation: a dropped live conversation makes addTurn report, not throw (RC-28)', () => {
  const m = new ConversationManager({ maxConversations: 1 });
  const a = m.start('user_a');
  m.addTurn(a, 1, 1);
  m.start('user_b'); // drops user_a's open conversation
  assert.equal(m.activeConversation('user_a'), undefined);
  const r = m.addTurn(a, 1, 1);
  assert.deepEqual(r, { ok: false, reason: 'not_live' });
  assert.equal(m.turnNumber(a), undefined);
  assert.equal(m.contextSize(a), undefined);
  assert.deepEqual(m.previousTurnKeys(a), []);
  assert.equal(m.stats.droppedLive, 1);
  m.end(a); // harmless
});
