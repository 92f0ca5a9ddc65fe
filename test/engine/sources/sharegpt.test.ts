// The ShareGPT source: picked by --dataset-path, opened from the file (a bad file is a DatasetError),
// described and logged as before, and its users claiming whole conversations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shareGptSource } from '../../../src/engine/sources/sharegpt.js';
import { DatasetError } from '../../../src/workload/sharegpt.js';
import { parse, tempDir } from '../../cli/helpers.js';
import { usersContext } from './helpers.js';

const say = (from: string, value: string): { from: string; value: string } => ({ from, value });

/** Conversation a: two turns (100 and 200 tokens asked at 4 characters a token); b: one turn of 300; c: no pair. */
function dataset(): string {
  const path = join(tempDir(), 'd.json');
  const records = [
    { id: 'a', conversations: [say('human', 'x'.repeat(400)), say('gpt', 'y'.repeat(40)), say('human', 'x'.repeat(800)), say('gpt', 'y')] },
    { id: 'b', conversations: [say('human', 'x'.repeat(1200)), say('gpt', 'y'.repeat(120))] },
    { id: 'c', conversations: [say('gpt', 'no question')] },
  ];
  writeFileSync(path, JSON.stringify(records));
  return path;
}

test('sharegpt source: picked by --dataset-path, which is its input', () => {
  const path = dataset();
  const { config } = parse(['--dataset-path', path]);
  assert.equal(shareGptSource.pick?.picked(config), true);
  assert.equal(shareGptSource.pick?.picked(parse([]).config), false);
  assert.deepEqual(shareGptSource.inputs(config), [{ flag: '--dataset-path', path }]);
  assert.equal(shareGptSource.recorded, true);
});

test('sharegpt source: opened, it says what it loaded in the results block and the log line', async () => {
  const path = dataset();
  const opened = await shareGptSource.open(parse(['--dataset-path', path, '--tokenizer', 'chars']).config);
  assert.deepEqual(opened.describe(), {
    kind: 'sharegpt',
    path,
    tokenizer: 'chars/4',
    records: 3,
    conversationsLoaded: 2,
    turns: 3,
    skippedPairs: 0,
    skippedRecords: 1,
  });
  assert.deepEqual(opened.logLines(), [
    `ShareGPT: 2 conversations, 3 turns from ${path} (chars/4 tokens; 0 misaligned pairs and 1 records skipped)`,
  ]);
});

test('sharegpt source: a missing file is a DatasetError, one of its input errors', async () => {
  const path = join(tempDir(), 'none.json');
  await assert.rejects(shareGptSource.open(parse(['--dataset-path', path]).config), (e: unknown) => {
    assert.ok(e instanceof DatasetError);
    assert.match(e.message, /^ShareGPT dataset '.*none\.json': file not found\./);
    return true;
  });
  assert.deepEqual(shareGptSource.inputErrors, [DatasetError]);
});

test('sharegpt users: each user claims whole conversations, turns in order', async () => {
  const opened = await shareGptSource.open(parse(['--dataset-path', dataset(), '--tokenizer', 'chars']).config);
  const users = opened.users(usersContext(1));
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
    a.map((s) => [s.turn, s.context, s.conv]),
    [
      [1, 100, 'a_p1'],
      [2, 200, 'a_p1'],
    ],
  );
  assert.equal(new Set(a.map((s) => s.user)).size, 1, 'one user runs the whole conversation');
  const b = seen.find((s) => s.context === 300);
  assert.ok(b !== undefined && b.user !== a[0]?.user, 'the other conversation goes to the other user');
  assert.deepEqual(new Set(seen.map((s) => s.user)), new Set(['dataset_user_0', 'dataset_user_1']));
  assert.equal(users.sourceFailure(), undefined);
});
