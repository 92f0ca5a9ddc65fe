// Token counters (docs/reference-compat.md#rc-32): the cl100k_base tokenizer from js-tiktoken, and the reference's
// chars/4 estimate. The cl100k_base ids below were checked against published tiktoken examples
// (tiktoken's README "tiktoken is great!" → [83, 1609, 5963, 374, 2294, 0]; "hello world" →
// [15339, 1917] in tiktoken-rs tests) and by decoding each token back; only counts are asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { codePointLength, isTokenizerKind, tokenCounter } from '../../src/workload/tokens.js';

// One counter for the file: building the encoder takes most of a second.
const cl100k = tokenCounter('cl100k_base');

test('tokens: cl100k_base counts of published examples', () => {
  assert.equal(cl100k.name, 'cl100k_base');
  assert.equal(cl100k.count('hello world'), 2); // [15339, 1917]
  assert.equal(cl100k.count('The quick brown fox jumps over the lazy dog.'), 10); // [791, 4062, …, 5679, 13]
  assert.equal(cl100k.count('tiktoken is great!'), 6); // [83, 1609, 5963, 374, 2294, 0]
  assert.equal(cl100k.count('Hello, world!'), 4); // [9906, 11, 1917, 0]
  assert.equal(cl100k.count(' '), 1); // [220]
  assert.equal(cl100k.count('indivisible'), 3); // [485, 344, 23936]
  assert.equal(cl100k.count('hello, 世界'), 6); // [15339, 11, 220, 3574, 244, 98220]
  assert.equal(cl100k.count('hello 👋 world 🌍'), 7); // [15339, 62904, 233, 1917, 11410, 234, 235]
});

test('tokens: cl100k_base gives 0 for the empty string and counts special-token text as text', () => {
  assert.equal(cl100k.count(''), 0);
  // Python tiktoken raises on "<|endoftext|>" by default; here it is ordinary text, several tokens.
  const n = cl100k.count('<|endoftext|>');
  assert.ok(n > 1, `got ${n}`);
});

test('tokens: a new cl100k_base counter loads no ranks until it first counts', () => {
  // In a fresh process, so that no other test has loaded the ranks module already.
  const tokensJs = new URL('../../src/workload/tokens.js', import.meta.url).href;
  const script = `
    import { createRequire } from 'node:module';
    const { tokenCounter } = await import(${JSON.stringify(tokensJs)});
    const require = createRequire(${JSON.stringify(tokensJs)});
    const loaded = () => Object.keys(require.cache).some((p) => p.includes('cl100k_base'));
    const c = tokenCounter('cl100k_base');
    const before = loaded();
    const n = c.count('hello world');
    console.log(JSON.stringify({ before, after: loaded(), n }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { before: false, after: true, n: 2 });
});

test('tokens: chars estimate = max(1, floor(code points / charsPerToken))', () => {
  const chars = tokenCounter('chars');
  assert.equal(chars.name, 'chars/4');
  assert.equal(chars.count(''), 1);
  assert.equal(chars.count('abc'), 1);
  assert.equal(chars.count('abcdefgh'), 2);
  assert.equal(chars.count('abcdefghijk'), 2);
  assert.equal(chars.count('x'.repeat(4000)), 1000);
  // Eight emoji are eight characters (Python's len), not sixteen UTF-16 units.
  assert.equal(chars.count('👋👋👋👋👋👋👋👋'), 2);
  const two = tokenCounter('chars', 2);
  assert.equal(two.name, 'chars/2');
  assert.equal(two.count('abcde'), 2);
  assert.equal(tokenCounter('chars', 2.5).count('abcde'), 2);
});

test('tokens: code point length counts surrogate pairs once and lone surrogates as one', () => {
  assert.equal(codePointLength(''), 0);
  assert.equal(codePointLength('héllo'), 5);
  assert.equal(codePointLength('a👋b'), 3);
  assert.equal(codePointLength('\ud83d'), 1);
  assert.equal(codePointLength('\ud83dx'), 2);
});

test('tokens: invalid settings are rejected', () => {
  assert.throws(() => tokenCounter('chars', 0), RangeError);
  assert.throws(() => tokenCounter('chars', Number.NaN), RangeError);
  assert.throws(() => tokenCounter('chars', -4), RangeError);
  assert.equal(isTokenizerKind('cl100k_base'), true);
  assert.equal(isTokenizerKind('chars'), true);
  assert.equal(isTokenizerKind('gpt2'), false);
});
