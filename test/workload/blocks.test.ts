// Block chains keyed by prefix hash (workload/blocks.ts) and the Mooncake trace's mapping to them
// (workload/mooncake.ts mooncakeBlocks): equal prefixes give equal keys, for exactly the blocks they fill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { blockChain, chainTokens } from '../../src/workload/blocks.js';
import type { TokenSegment } from '../../src/workload/blocks.js';
import { mooncakeBlocks } from '../../src/workload/mooncake.js';

const sharedKeys = (a: ReadonlyArray<{ key: string }>, b: ReadonlyArray<{ key: string }>): number => {
  const inB = new Set(b.map((x) => x.key));
  return a.filter((x) => inB.has(x.key)).length;
};

test('a chain cuts the tokens into blocks of N, the last holding the remainder (not padded)', () => {
  const chain = blockChain(
    [
      { id: 'prompt:a', tokens: 5 },
      { id: 'body:c1', tokens: 30 },
    ],
    16,
  );
  assert.deepEqual(
    chain.map((b) => b.tokens),
    [16, 16, 3],
  );
  assert.equal(chainTokens(chain), 35);
  assert.equal(new Set(chain.map((b) => b.key)).size, 3, 'keys are distinct within a chain');
  assert.deepEqual(blockChain([{ id: 'x', tokens: 0 }], 16), [], 'no tokens, no blocks');
});

test('a partial last block never shares the key of the full block a longer context has there', () => {
  const short = blockChain([{ id: 'body:c', tokens: 20 }], 16);
  const long = blockChain([{ id: 'body:c', tokens: 40 }], 16);
  assert.equal(short[0]?.key, long[0]?.key);
  assert.notEqual(short[1]?.key, long[1]?.key);
  assert.equal(sharedKeys(short, long), 1);
});

test('the same tokens cut into segments differently are different content only where the ids differ', () => {
  const a = blockChain([{ id: 'p', tokens: 16 }], 16);
  const b = blockChain([{ id: 'q', tokens: 16 }], 16);
  assert.notEqual(a[0]?.key, b[0]?.key);
});

test('block sizes out of range are refused', () => {
  assert.throws(() => blockChain([{ id: 'x', tokens: 4 }], 0), RangeError);
  assert.throws(() => blockChain([{ id: 'x', tokens: 4 }], 1.5), RangeError);
});

// Property: two contexts that share a prefix of P tokens and then differ share exactly floor(P/N) keys.
const segmentsArb = (prefix: string) =>
  fc.array(
    fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }).map((s) => `${prefix}${s}`), tokens: fc.integer({ min: 0, max: 90 }) }),
    { maxLength: 4 },
  );

test('property: contexts sharing k full blocks of prefix share exactly k keys', () => {
  fc.assert(
    fc.property(
      segmentsArb('s'),
      segmentsArb('a'),
      segmentsArb('b'),
      fc.integer({ min: 1, max: 64 }),
      (shared: TokenSegment[], restA: TokenSegment[], restB: TokenSegment[], n) => {
        // The two tails start with a token the other does not have (distinct ids), so they differ from there on.
        const a = [...shared, { id: 'tail-a', tokens: 1 }, ...restA];
        const b = [...shared, { id: 'tail-b', tokens: 1 }, ...restB];
        const prefixTokens = shared.reduce((s, x) => s + x.tokens, 0);
        const k = Math.floor(prefixTokens / n);
        const ca = blockChain(a, n);
        const cb = blockChain(b, n);
        assert.equal(sharedKeys(ca, cb), k);
        for (let i = 0; i < k; i++) assert.equal(ca[i]?.key, cb[i]?.key);
      },
    ),
    { numRuns: 300 },
  );
});

test('Mooncake: with the trace block size each id is one block; shared ids are shared keys', () => {
  const a = mooncakeBlocks({ inputLength: 1100, hashIds: ['7', '8', '9'] }, 512);
  assert.deepEqual(
    a.map((b) => [b.key, b.tokens]),
    [
      ['mc_7_512', 512],
      ['mc_8_512', 512],
      ['mc_9_76', 76],
    ],
  );
  const b = mooncakeBlocks({ inputLength: 1536, hashIds: ['7', '8', '10'] }, 512);
  assert.equal(sharedKeys(a, b), 2);
});

test('Mooncake with 16-token trace blocks (--trace-block-tokens 16): one block per id, or ids mapped to another size', () => {
  const rec = { inputLength: 40, hashIds: ['a', 'b', 'c'] };
  assert.deepEqual(
    mooncakeBlocks(rec, 16, 16).map((b) => [b.key, b.tokens]),
    [
      ['mc_a_16', 16],
      ['mc_b_16', 16],
      ['mc_c_8', 8],
    ],
  );
  // Blocks of 32 tokens: each is named by the trace block holding its last token.
  assert.deepEqual(
    mooncakeBlocks(rec, 32, 16).map((b) => [b.key, b.tokens]),
    [
      ['mc_b_16', 32],
      ['mc_c_8', 8],
    ],
  );
  assert.throws(() => mooncakeBlocks(rec, 16, 0), /trace block size must be an integer from 1/);
});

test('property: Mooncake records sharing m trace blocks share floor(512·m / N) keys at any block size', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 6 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 1500 }),
      (m, extraA, extraB, n) => {
        // Ids are prefix hashes: after the shared m, each record continues with ids of its own.
        const idsA = [...Array.from({ length: m }, (_, i) => i), ...Array.from({ length: extraA }, (_, i) => 1000 + i)];
        const idsB = [...Array.from({ length: m }, (_, i) => i), ...Array.from({ length: extraB }, (_, i) => 2000 + i)];
        const a = mooncakeBlocks({ inputLength: idsA.length * 512, hashIds: idsA.map(String) }, n);
        const b = mooncakeBlocks({ inputLength: idsB.length * 512, hashIds: idsB.map(String) }, n);
        assert.equal(sharedKeys(a, b), Math.floor((512 * m) / n));
        assert.equal(chainTokens(a), idsA.length * 512);
      },
    ),
    { numRuns: 300 },
  );
});
