// The cl100k counter is linear in its input (issue 12): runs longer than MAX_RUN_CHARS are cut before
// tokenizing, and the byte-pair merge keeps pair ranks. Property tests against js-tiktoken's own
// encoder: identical counts on text without long runs, and on text with long runs the count of the
// cut pieces. No timing here (bench/tokenizer.ts measures seconds per MB).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { boundedRuns, isRegexSpace, MAX_RUN_CHARS, tokenCounter } from '../../src/workload/tokens.js';

const cl100k = tokenCounter('cl100k_base');
const reference = new Tiktoken(createRequire(import.meta.url)('js-tiktoken/ranks/cl100k_base') as TiktokenBPE);
const tiktokenCount = (text: string): number => reference.encode(text, [], []).length;

/** Characters the regex pieces treat differently: letters, CJK, digits, punctuation, spaces, emoji. */
const PIECES = [
  'a',
  'Z',
  'é',
  'ß',
  '中',
  '文',
  '7',
  '0',
  '!',
  '.',
  "'s",
  "'LL",
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '\u3000',
  '👋',
  '-',
  '<|endoftext|>',
];
const shortText = fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }).map((p) => p.join(''));

test('isRegexSpace is exactly \\s for every UTF-16 unit', () => {
  const differ: number[] = [];
  for (let u = 0; u <= 0xffff; u++) if (isRegexSpace(u) !== /\s/u.test(String.fromCharCode(u))) differ.push(u);
  assert.deepEqual(differ, []);
});

test('boundedRuns: pieces join back to the text and hold no run longer than the bound', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES, 'x'.repeat(40), ' '.repeat(40), '中'.repeat(30)), { maxLength: 40 }), (parts) => {
      const text = parts.join('');
      const pieces = [...boundedRuns(text, 16)];
      assert.equal(pieces.join(''), text);
      for (const p of pieces) {
        for (const run of p.match(/\s+|\S+/gu) ?? []) assert.ok(run.length <= 17, `run of ${run.length} in ${JSON.stringify(p)}`);
      }
    }),
    { numRuns: 200 },
  );
  assert.deepEqual([...boundedRuns('')], ['']);
  assert.deepEqual([...boundedRuns('ab cd', 2)], ['ab cd']);
  assert.deepEqual([...boundedRuns('abcde fg', 2)], ['ab', 'cd', 'e fg']);
  // A surrogate pair is never split: the cut moves past its low half.
  assert.deepEqual([...boundedRuns('a👋b', 2)], ['a👋', 'b']);
});

test('cl100k counts equal js-tiktoken on text without long runs', () => {
  fc.assert(
    fc.property(shortText, (text) => {
      assert.equal(cl100k.count(text), tiktokenCount(text));
    }),
    { numRuns: 300 },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
      assert.equal(cl100k.count(text), tiktokenCount(text));
    }),
    { numRuns: 300 },
  );
});

test('a long word is counted as its cut pieces: the sum of their js-tiktoken counts', () => {
  for (const word of ['a'.repeat(10_000), 'abcdefghij'.repeat(1_000), '中文'.repeat(2_000), '!?'.repeat(3_000), ' '.repeat(5_000)]) {
    const pieces = [...boundedRuns(word)];
    assert.equal(pieces.length, Math.ceil(word.length / MAX_RUN_CHARS));
    assert.equal(
      cl100k.count(word),
      pieces.reduce((n, p) => n + tiktokenCount(p), 0),
    );
  }
  assert.equal(cl100k.count('a'.repeat(10_000)), 1_250); // 157 pieces of 64 'a' (8 tokens each), the last of 16 (2)
});
