// ShareGPT replay (docs/reference-compat.md#rc-31): message shapes, stride-2 pairing with misaligned pairs skipped, caps,
// the maxConversations limit, streaming (chunk boundaries, stopping early), every DatasetError case
// with the file and the place named, and the replay timeline (pacing, passes, per-seed shuffles,
// cycle bound).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Rng } from '../../src/util/rng.js';
import { DatasetError, loadShareGpt, SHAREGPT_DEFAULTS, shareGptTimeline, shuffledOrder } from '../../src/workload/sharegpt.js';
import type { ShareGptConversation, ShareGptLoadOptions, ShareGptRequestPlan } from '../../src/workload/sharegpt.js';
import { tokenCounter } from '../../src/workload/tokens.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kv-sharegpt-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Write `content` (a string as is, anything else as pretty JSON) to `<dir>/<name>`. */
function fixture(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

const chars = tokenCounter('chars');

function opts(over: Partial<ShareGptLoadOptions> = {}): ShareGptLoadOptions {
  return { maxConversations: 100, tokens: chars, maxContextTokens: 1000, maxGenerationTokens: 1000, ...over };
}

/** A message of n×4 characters, so the chars/4 estimate gives n tokens. */
function text(n: number): string {
  return 'abcd'.repeat(n);
}

function fromValue(...pairs: Array<[string, string]>): Array<{ from: string; value: string }> {
  return pairs.map(([from, value]) => ({ from, value }));
}

test('sharegpt: from/value records become turns of (human, gpt) pairs', () => {
  const path = fixture('basic.json', [
    { id: 'a1', conversations: fromValue(['human', text(3)], ['gpt', text(10)], ['human', text(5)], ['gpt', text(7)]) },
    { id: 'b2', conversations: fromValue(['human', text(1)], ['gpt', text(2)]) },
  ]);
  const { conversations, stats } = loadShareGpt(path, opts());
  assert.deepEqual(conversations, [
    {
      id: 'a1',
      turns: [
        { contextTokens: 3, generationTokens: 10 },
        { contextTokens: 5, generationTokens: 7 },
      ],
    },
    { id: 'b2', turns: [{ contextTokens: 1, generationTokens: 2 }] },
  ]);
  assert.deepEqual(stats, { records: 2, conversationsLoaded: 2, turns: 3, skippedPairs: 0, skippedRecords: 0 });
});

test('sharegpt: role/content messages, other list keys, role names, content parts, system removed', () => {
  const path = fixture('roles.json', [
    {
      id: 'm',
      messages: [
        { role: 'system', content: text(50) },
        { role: 'user', content: text(2) },
        { role: 'assistant', content: text(4) },
      ],
    },
    {
      id: 'c',
      conversation: [
        { role: 'User', content: [{ type: 'text', text: text(1) }, { type: 'image_url' }, text(2)] },
        { role: 'assistant', content: text(6) },
      ],
    },
    {
      id: 'x',
      conversations: fromValue(
        ['human', text(1)],
        ['chatgpt', text(2)],
        ['user', text(3)],
        ['bing', text(4)],
        ['human', text(5)],
        ['bard', text(6)],
      ),
    },
  ]);
  const { conversations, stats } = loadShareGpt(path, opts());
  assert.deepEqual(
    conversations.map((c) => c.id),
    ['m', 'c', 'x'],
  );
  assert.deepEqual(conversations[0]?.turns, [{ contextTokens: 2, generationTokens: 4 }]);
  assert.deepEqual(conversations[1]?.turns, [{ contextTokens: 3, generationTokens: 6 }]); // parts joined: 12 chars
  assert.deepEqual(
    conversations[2]?.turns.map((t) => [t.contextTokens, t.generationTokens]),
    [
      [1, 2],
      [3, 4],
      [5, 6],
    ],
  );
  assert.equal(stats.skippedPairs, 0);
});

test('sharegpt: pairs are (2k, 2k+1); misaligned pairs are skipped and counted, a trailing message ignored', () => {
  const path = fixture('pairs.json', [
    // (human, human) skipped, (gpt, gpt) skipped → no turn, record skipped
    { id: 'hh', conversations: fromValue(['human', text(1)], ['human', text(2)], ['gpt', text(3)], ['gpt', text(4)]) },
    // leading gpt shifts every pair: (gpt, human) skipped, (gpt, human) skipped, trailing gpt ignored
    { id: 'shift', conversations: fromValue(['gpt', text(1)], ['human', text(2)], ['gpt', text(3)], ['human', text(4)], ['gpt', text(5)]) },
    // (human, gpt) ok, (unknown, gpt) skipped, (human, gpt) ok, trailing human ignored
    {
      id: 'mixed',
      conversations: fromValue(
        ['human', text(1)],
        ['gpt', text(2)],
        ['tool', text(3)],
        ['gpt', text(4)],
        ['human', text(5)],
        ['gpt', text(6)],
        ['human', text(7)],
      ),
    },
  ]);
  const { conversations, stats } = loadShareGpt(path, opts());
  assert.deepEqual(conversations, [
    {
      id: 'mixed',
      turns: [
        { contextTokens: 1, generationTokens: 2 },
        { contextTokens: 5, generationTokens: 6 },
      ],
    },
  ]);
  assert.deepEqual(stats, { records: 3, conversationsLoaded: 1, turns: 2, skippedPairs: 5, skippedRecords: 2 });
});

test('sharegpt: records without a usable message list are skipped', () => {
  const path = fixture('shapes.json', [
    42,
    'text',
    null,
    [],
    {},
    { conversations: 'no' },
    { conversations: [1, null, 'x'] },
    { conversations: [{ from: 'human' }, { from: 'gpt', value: 17 }] }, // missing / non-string text: 1 token each
  ]);
  const { conversations, stats } = loadShareGpt(path, opts());
  assert.deepEqual(conversations, [{ id: 'conv_7', turns: [{ contextTokens: 1, generationTokens: 1 }] }]);
  assert.deepEqual(stats, { records: 8, conversationsLoaded: 1, turns: 1, skippedPairs: 1, skippedRecords: 7 });
});

test('sharegpt: token counts are capped and at least 1', () => {
  const path = fixture('caps.json', [{ conversations: fromValue(['human', text(500)], ['gpt', text(300)], ['human', ''], ['gpt', 'ab']) }]);
  const { conversations } = loadShareGpt(path, opts({ maxContextTokens: 100, maxGenerationTokens: 20 }));
  assert.deepEqual(conversations[0]?.turns, [
    { contextTokens: 100, generationTokens: 20 },
    { contextTokens: 1, generationTokens: 1 },
  ]);
  const cl100k = loadShareGpt(
    fixture('cl100k.json', [{ conversations: fromValue(['human', 'hello world'], ['gpt', '']) }]),
    opts({ tokens: tokenCounter('cl100k_base') }),
  );
  assert.deepEqual(cl100k.conversations[0]?.turns, [{ contextTokens: 2, generationTokens: 1 }]);
});

test('sharegpt: ids from the record, else conv_<index>; numbers stringified; duplicates made unique', () => {
  const pair = fromValue(['human', text(1)], ['gpt', text(1)]);
  const path = fixture('ids.json', [
    { id: 'a', conversations: pair },
    { conversations: pair },
    { id: 7, conversations: pair },
    { id: 'a', conversations: pair },
    { id: '', conversations: pair },
  ]);
  const ids = loadShareGpt(path, opts()).conversations.map((c) => c.id);
  assert.deepEqual(ids, ['a', 'conv_1', '7', 'a_dup2', 'conv_4']);
});

test('sharegpt: the first maxConversations records with a turn are taken, and the rest is not read', () => {
  const pair = fromValue(['human', text(1)], ['gpt', text(1)]);
  const records = [
    { id: 'r0', conversations: [] },
    { id: 'r1', conversations: pair },
    { id: 'r2', conversations: pair },
    { id: 'r3', conversations: pair },
  ];
  const path = fixture('limit.json', records);
  const { conversations, stats } = loadShareGpt(path, opts({ maxConversations: 2 }));
  assert.deepEqual(
    conversations.map((c) => c.id),
    ['r1', 'r2'],
  );
  assert.deepEqual(stats, { records: 3, conversationsLoaded: 2, turns: 2, skippedPairs: 0, skippedRecords: 1 });
  // A broken tail after the records needed is never read.
  const broken = fixture('broken-tail.json', `${JSON.stringify(records).slice(0, -1)}, {"id": oops`);
  assert.deepEqual(
    loadShareGpt(broken, opts({ maxConversations: 3 })).conversations.map((c) => c.id),
    ['r1', 'r2', 'r3'],
  );
  assert.throws(() => loadShareGpt(broken, opts({ maxConversations: 4 })), DatasetError);
});

test('sharegpt: any chunk size gives the same result (multi-byte text, escapes, brackets in strings, BOM)', () => {
  const tricky = ['héllo 世界 👋', 'quote " and \\ backslash', '[brackets] {braces}, commas', 'line\nbreak\ttab', '\u0000 nul'];
  const records = tricky.map((s, i) => ({ id: `t${i}`, conversations: fromValue(['human', s.repeat(3)], ['gpt', s]) }));
  const pretty = fixture('tricky.json', `\ufeff${JSON.stringify(records, null, 1)}\n`);
  const compact = fixture('tricky-compact.json', JSON.stringify([...records, 5, true, null, 'str']));
  const expected = loadShareGpt(pretty, opts());
  assert.equal(expected.conversations.length, tricky.length);
  for (const chunkBytes of [1, 2, 3, 5, 7, 64]) {
    assert.deepEqual(loadShareGpt(pretty, opts({ chunkBytes })), expected, `pretty, chunk ${chunkBytes}`);
    assert.deepEqual(loadShareGpt(compact, opts({ chunkBytes })).conversations, expected.conversations, `compact, chunk ${chunkBytes}`);
  }
});

/** The DatasetError of loading `path`, checked to name the file and to carry no stack-dependent text. */
function datasetError(path: string, o: ShareGptLoadOptions = opts()): DatasetError {
  let caught: unknown;
  for (const chunkBytes of [undefined, 3]) {
    try {
      loadShareGpt(path, { ...o, ...(chunkBytes !== undefined ? { chunkBytes } : {}) });
      assert.fail(`loading ${path} should fail`);
    } catch (e: unknown) {
      assert.ok(e instanceof DatasetError, `not a DatasetError: ${String(e)}`);
      if (caught instanceof DatasetError) assert.equal(e.message, caught.message, 'the message depends on the chunk size');
      caught = e;
    }
  }
  assert.ok(caught instanceof DatasetError);
  assert.equal(caught.name, 'DatasetError');
  assert.equal(caught.path, path);
  assert.ok(caught.message.includes(basename(path)), caught.message);
  assert.doesNotMatch(caught.message, /\n\s+at |node:internal|\.js:\d+/);
  return caught;
}

test('sharegpt: a missing file, a directory and an unreadable file are DatasetErrors', () => {
  assert.match(datasetError(join(dir, 'missing.json')).message, /missing\.json': file not found\. Expected a readable ShareGPT JSON file/);
  const sub = join(dir, 'a-directory.json');
  mkdirSync(sub);
  assert.match(datasetError(sub).message, /not a regular file/);
});

test('sharegpt: invalid JSON is reported with its line and column', () => {
  const bad = fixture('bad.json', '[\n  {"id": "a",\n    "conversations": [}\n]');
  assert.equal(
    datasetError(bad).message,
    `ShareGPT dataset '${bad}': invalid JSON at line 3, column 23: unexpected character "}" (in record 1). ` +
      'A valid file is a JSON array of records such as {"id": "a1", "conversations": [{"from": "human", "value": "..."}, ' +
      '{"from": "gpt", "value": "..."}]} (also "conversation" or "messages", and "role"/"content" messages)',
  );
  // Columns count characters, not bytes.
  assert.match(datasetError(fixture('utf8.json', '[{"a": "世界", "b": x}]')).message, /line 1, column 19: unexpected character "x"/);
  assert.match(
    datasetError(fixture('trunc.json', '[{"id": "a", "conversations": [')).message,
    /line 1, column 32: unexpected end of file inside record 1 \(which starts at line 1, column 2\); is the file truncated\?/,
  );
  assert.match(
    datasetError(fixture('open.json', '[{"conversations": []}\n')).message,
    /line 2, column 1: unexpected end of file: the array is not closed/,
  );
  assert.match(
    datasetError(fixture('trailing-comma.json', '[{"conversations": []},\n]')).message,
    /line 2, column 1: expected a record, found '\]' \(trailing comma\?\)/,
  );
  assert.match(
    datasetError(fixture('missing-comma.json', '[{"conversations": []} {}]')).message,
    /line 1, column 24: expected ',' or '\]' after record 1/,
  );
  assert.match(
    datasetError(fixture('after.json', '[{"conversations": []}] x')).message,
    /line 1, column 25: unexpected text after the closing '\]'/,
  );
  assert.match(
    datasetError(fixture('ctrl.json', '[{"a": "x\u0001"}]')).message,
    /line 1, column 10: unescaped control character in a string/,
  );
  assert.match(datasetError(fixture('literal.json', 'null')).message, /the top level is a literal, not an array/);
  assert.match(datasetError(fixture('word.json', 'hello')).message, /invalid JSON at line 1, column 1: unexpected character 'h'/);
  assert.match(datasetError(fixture('junk.json', '<html>')).message, /invalid JSON at line 1, column 1: unexpected character '<'/);
});

test('sharegpt: a top level that is not an array, an empty file and no usable conversation are DatasetErrors', () => {
  assert.match(
    datasetError(fixture('object.json', { conversations: [] })).message,
    /the top level is an object, not an array \(JSON Lines/,
  );
  assert.match(datasetError(fixture('jsonl.json', '{"id": 1}\n{"id": 2}\n')).message, /the top level is an object/);
  assert.match(datasetError(fixture('string.json', '"x"')).message, /the top level is a string, not an array/);
  assert.match(datasetError(fixture('number.json', '-1')).message, /the top level is a number, not an array/);
  assert.match(datasetError(fixture('empty.json', '')).message, /the file is empty/);
  assert.match(datasetError(fixture('blank.json', '\ufeff \n ')).message, /the file is empty/);
  assert.match(
    datasetError(fixture('no-records.json', [])).message,
    /no usable conversation: the array has no records\. A valid file is a JSON array/,
  );
  const unpaired = fixture('unpaired.json', [{ conversations: fromValue(['gpt', 'a'], ['human', 'b']) }, { conversations: [] }]);
  assert.match(
    datasetError(unpaired).message,
    /no usable conversation: none of its 2 records has a \(human, assistant\) message pair \(1 misaligned pairs skipped\)/,
  );
});

test('sharegpt: load options are checked; the reference defaults are exported', () => {
  const path = fixture('ok.json', [{ conversations: fromValue(['human', 'a'], ['gpt', 'b']) }]);
  assert.throws(() => loadShareGpt(path, opts({ maxConversations: 0 })), RangeError);
  assert.throws(() => loadShareGpt(path, opts({ maxContextTokens: 1.5 })), RangeError);
  assert.throws(() => loadShareGpt(path, opts({ chunkBytes: 0 })), RangeError);
  assert.deepEqual(SHAREGPT_DEFAULTS, { maxConversations: 500, maxContextTokens: 16_384, maxGenerationTokens: 2_048 });
});

// ---- timeline ----

function conv(id: string, ...tokens: Array<[number, number]>): ShareGptConversation {
  return { id, turns: tokens.map(([contextTokens, generationTokens]) => ({ contextTokens, generationTokens })) };
}

const DATA: readonly ShareGptConversation[] = [conv('a', [10, 1], [20, 2]), conv('b', [30, 3]), conv('c', [40, 4], [50, 5], [60, 6])];
const TURNS = 6;

function take(gen: Iterable<ShareGptRequestPlan>, n: number): ShareGptRequestPlan[] {
  const out: ShareGptRequestPlan[] = [];
  for (const item of gen) {
    out.push(item);
    if (out.length >= n) break;
  }
  return out;
}

test('timeline: each pass issues every conversation once, its turns in order, with per-pass ids', () => {
  const items = [...shareGptTimeline(DATA, { requestRate: 0, replayCycles: 2, rng: new Rng(1) })];
  assert.equal(items.length, 2 * TURNS);
  assert.deepEqual(
    items.map((r) => r.index),
    items.map((_, k) => k),
  );
  for (const pass of [1, 2]) {
    const inPass = items.filter((r) => r.pass === pass);
    assert.equal(inPass.length, TURNS);
    for (const c of DATA) {
      const mine = inPass.filter((r) => r.sourceId === c.id);
      assert.deepEqual(
        mine.map((r) => r.conversationId),
        c.turns.map(() => `${c.id}_p${pass}`),
      );
      assert.deepEqual(
        mine.map((r) => [r.turnIndex, r.turn, r.contextTokens, r.generationTokens]),
        c.turns.map((t, i) => [i, i + 1, t.contextTokens, t.generationTokens]),
      );
      const first = inPass.indexOf(mine[0]);
      assert.deepEqual(inPass.slice(first, first + mine.length), mine, 'a conversation is issued contiguously');
    }
  }
  assert.ok(
    items.slice(0, TURNS).every((r) => r.pass === 1),
    'pass 2 starts after pass 1 ends',
  );
});

test('timeline: k-th request at k × 1000 / rate ms; all at 0 when the rate is 0', () => {
  const paced = [...shareGptTimeline(DATA, { requestRate: 4, replayCycles: 1, rng: new Rng(1) })];
  assert.deepEqual(
    paced.map((r) => r.scheduledAtMs),
    [0, 250, 500, 750, 1000, 1250],
  );
  const slow = take(shareGptTimeline(DATA, { requestRate: 0.5, replayCycles: 0, rng: new Rng(1) }), 8);
  assert.deepEqual(
    slow.map((r) => r.scheduledAtMs),
    [0, 2000, 4000, 6000, 8000, 10000, 12000, 14000],
  );
  const fast = [...shareGptTimeline(DATA, { requestRate: 0, replayCycles: 3, rng: new Rng(1) })];
  assert.ok(fast.every((r) => r.scheduledAtMs === 0));
});

test('timeline: the shuffle is reproducible per seed and drawn afresh each pass', () => {
  const many = Array.from({ length: 30 }, (_, i) => conv(`c${i}`, [i + 1, 1]));
  const order = (seed: number): string[] =>
    [...shareGptTimeline(many, { requestRate: 0, replayCycles: 2, rng: new Rng(seed) })].map((r) => r.conversationId);
  assert.deepEqual(order(7), order(7));
  assert.notDeepEqual(order(7), order(8));
  const [p1, p2] = [order(7).slice(0, 30), order(7).slice(30)];
  assert.notDeepEqual(
    p1.map((id) => id.replace(/_p\d+$/, '')),
    p2.map((id) => id.replace(/_p\d+$/, '')),
  );
  assert.deepEqual([...p1].sort(), many.map((c) => `${c.id}_p1`).sort());
  assert.deepEqual(shuffledOrder(5, new Rng(3)).sort(), [0, 1, 2, 3, 4]);
  assert.deepEqual(shuffledOrder(0, new Rng(3)), []);
});

test('timeline: replayCycles bounds the passes; 0 runs on lazily', () => {
  for (const cycles of [1, 2, 5]) {
    const items = [...shareGptTimeline(DATA, { requestRate: 10, replayCycles: cycles, rng: new Rng(2) })];
    assert.equal(items.length, cycles * TURNS);
    assert.equal(items.at(-1)?.pass, cycles);
  }
  const endless = take(shareGptTimeline(DATA, { requestRate: 0, replayCycles: 0, rng: new Rng(2) }), 1000);
  assert.equal(endless.length, 1000);
  assert.equal(endless.at(-1)?.pass, Math.ceil(1000 / TURNS));
  assert.equal(new Set(endless.map((r) => `${r.conversationId}_turn_${r.turn}`)).size, 1000, 'keys never repeat across passes');
});

test('timeline: nothing to replay ends at once, even unlimited; bad options are rejected', () => {
  assert.deepEqual([...shareGptTimeline([], { requestRate: 0, replayCycles: 0, rng: new Rng(1) })], []);
  assert.deepEqual([...shareGptTimeline([conv('empty')], { requestRate: 1, replayCycles: 0, rng: new Rng(1) })], []);
  // Checked when called, before the first item is asked for.
  const bad =
    (requestRate: number, replayCycles: number): (() => void) =>
    () =>
      shareGptTimeline(DATA, { requestRate, replayCycles, rng: new Rng(1) });
  assert.throws(bad(-1, 1), RangeError);
  assert.throws(bad(Number.POSITIVE_INFINITY, 1), RangeError);
  assert.throws(bad(1, -1), RangeError);
  assert.throws(bad(1, 1.5), RangeError);
});
