// Prefix matcher (docs/reference-compat.md#rc-29): prompt ids, keys, token counts, stats, and first sight (the reference never wrote the entry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Rng } from '../../src/util/rng.js';
import { makeSystemPrompt, PrefixMatcher, SYSTEM_PROMPT_TEXTS, systemPromptId, wordCount } from '../../src/workload/prefix.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';

const DEFAULT_PREFIX_CACHE = DEFAULT_SETTINGS.prefixCache;

test('prefix: three prompts; id = first 16 hex of sha256("<text>_<words>"); key kv_system_<id>; tokens = words', () => {
  assert.equal(SYSTEM_PROMPT_TEXTS.length, 3);
  const p = makeSystemPrompt('You are a helpful assistant.');
  const expected = createHash('sha256').update('You are a helpful assistant._5').digest('hex').slice(0, 16);
  assert.equal(p.id, expected);
  assert.equal(p.key, `kv_system_${expected}`);
  assert.equal(p.tokens, 5);
  assert.deepEqual(SYSTEM_PROMPT_TEXTS.map(wordCount), [5, 9, 6]);
  assert.equal(wordCount('  a \n b\tc  '), 3);
  const long = 'x'.repeat(600);
  assert.equal(
    systemPromptId(long),
    createHash('sha256')
      .update(`${'x'.repeat(500)}_1`)
      .digest('hex')
      .slice(0, 16),
  );
  assert.equal(new Set(new PrefixMatcher(1).prompts.map((q) => q.id)).size, 3);
});

test('prefix: draw probability about 0.2 and uniform over the three prompts; draw keeps no state', () => {
  const m = new PrefixMatcher(100);
  const rng = new Rng(11);
  const counts = new Map<string, number>();
  let drawn = 0;
  const n = 30000;
  for (let i = 0; i < n; i++) {
    const p = m.draw(rng);
    if (p === undefined) continue;
    drawn++;
    counts.set(p.id, (counts.get(p.id) ?? 0) + 1);
  }
  assert.ok(Math.abs(drawn / n - DEFAULT_PREFIX_CACHE.systemPromptHitProbability) < 0.01);
  assert.equal(counts.size, 3);
  for (const c of counts.values()) assert.ok(Math.abs(c / drawn - 1 / 3) < 0.03);
  assert.equal(m.stats.prefixHits + m.stats.prefixMisses, 0);
});

test('prefix: first sight is a miss the engine allocates; later uses are hits that save bytes', () => {
  const bpt = 24576;
  const m = new PrefixMatcher(bpt);
  const [a, b] = m.prompts;
  assert.ok(a !== undefined && b !== undefined);
  assert.equal(m.isKnown(a.id), false);
  const first = m.record(a);
  assert.equal(first.firstSight, true);
  assert.equal(first.cacheType, 'system');
  assert.ok(m.isKnown(a.id));
  assert.equal(m.record(a).firstSight, false);
  assert.equal(m.record(a).firstSight, false);
  assert.equal(m.record(b).firstSight, true);
  assert.deepEqual(m.stats, { prefixHits: 2, prefixMisses: 2, systemPromptReuse: 2, commonPhraseReuse: 0, bytesSaved: 2 * a.tokens * bpt });
});

test('prefix: match = draw + record; probability 0 never matches', () => {
  const never = new PrefixMatcher(1, { ...DEFAULT_PREFIX_CACHE, systemPromptHitProbability: 0 });
  const rng = new Rng(1);
  for (let i = 0; i < 100; i++) assert.equal(never.match(rng), undefined);
  const always = new PrefixMatcher(1, { ...DEFAULT_PREFIX_CACHE, systemPromptHitProbability: 1 });
  const sights = Array.from({ length: 50 }, () => always.match(rng)?.firstSight);
  assert.equal(sights.filter((s) => s === true).length, 3);
  assert.equal(always.stats.prefixHits, 47);
});
