// The one-pass hit-rate curve (metrics/hit-curve.ts, lru-stack.ts) against an independent plain
// simulation of the run's byte-limited LRU at a few capacities: lookup of the longest present prefix,
// writes of the rest (evicting the least recently used blocks until the new one fits), the chain left
// head newest. They agree exactly at every capacity ≥ the largest chain (docs/sizing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HitCurve, gridCapacity } from '../../src/metrics/hit-curve.js';
import type { SizedBlock } from '../../src/metrics/hit-curve.js';
import { LruStack } from '../../src/metrics/lru-stack.js';

/** A plain LRU of `capacity` bytes with the run's block semantics; returns the tokens and blocks it served. */
function simulate(requests: readonly SizedBlock[][], capacity: number): { tokens: number; blocks: number } {
  const cache = new Map<string | number, number>(); // insertion order = recency, oldest first
  let used = 0;
  let tokens = 0;
  let blocks = 0;
  const touch = (key: string | number): void => {
    const size = cache.get(key);
    if (size === undefined) return;
    cache.delete(key);
    cache.set(key, size);
  };
  for (const chain of requests) {
    let i = 0;
    for (; i < chain.length && cache.has(chain[i].key); i++) {
      touch(chain[i].key);
      tokens += chain[i].tokens;
      blocks++;
    }
    for (; i < chain.length; i++) {
      const b = chain[i];
      if (cache.has(b.key) || b.bytes > capacity) continue;
      while (used + b.bytes > capacity) {
        const [victim, size] = cache.entries().next().value!;
        cache.delete(victim);
        used -= size;
      }
      cache.set(b.key, b.bytes);
      used += b.bytes;
    }
    for (let j = chain.length - 1; j >= 0; j--) touch(chain[j].key);
  }
  return { tokens, blocks };
}

/** Chains over a prefix tree: block i's key names its whole prefix, its size depends on its key only. */
const chainArb = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 }).map((path) => {
  const chain: SizedBlock[] = [];
  let key = '';
  for (const step of path) {
    key += `/${step}`;
    const tokens = 1 + (key.length % 4);
    chain.push({ key, tokens, bytes: tokens * 100 });
  }
  return chain;
});

test('property: the one-pass curve equals a plain LRU simulation at every capacity from the largest chain on', () => {
  fc.assert(
    fc.property(
      fc.array(chainArb, { minLength: 1, maxLength: 60 }),
      fc.array(fc.integer({ min: 0, max: 4000 }), { maxLength: 4 }),
      (requests, extra) => {
        const maxChain = Math.max(...requests.map((c) => c.reduce((n, b) => n + b.bytes, 0)));
        const capacities = [maxChain, maxChain + 100, ...extra.map((e) => maxChain + e)];
        const curve = new HitCurve({ capacities });
        const stack = new LruStack();
        for (const chain of requests) curve.addRequest(stack, chain);
        for (const p of curve.probePoints()) {
          const sim = simulate(requests, p.capacity);
          assert.deepEqual({ tokens: p.tokens, blocks: p.blocks }, sim, `capacity ${p.capacity}`);
        }
        // With unlimited capacity every block whose prefix was seen before hits.
        assert.deepEqual({ tokens: curve.ideal().tokens, blocks: curve.ideal().blocks }, simulate(requests, Infinity));
      },
    ),
    { numRuns: 300 },
  );
});

test('the grid: 64 edges per octave, exact at powers of two; hits are cumulative', () => {
  assert.equal(gridCapacity(0), 1);
  assert.equal(gridCapacity(64 * 30), 2 ** 30);
  const curve = new HitCurve({ capacities: [999, 1000, 1499, 1500] });
  const stack = new LruStack();
  const a = { key: 'a', tokens: 10, bytes: 1024 };
  const b = { key: 'b', tokens: 5, bytes: 512 };
  curve.addRequest(stack, [a, b]); // cold; the chain ends head first: a on top, then b
  curve.addRequest(stack, [a]); // a on top: distance 1024
  curve.addRequest(stack, [b]); // b under a: distance 1536
  assert.deepEqual(
    curve.probePoints().map((p) => [p.capacity, p.tokens, p.blocks, p.bytes]),
    [
      [999, 0, 0, 0],
      [1000, 0, 0, 0],
      [1499, 10, 1, 1024],
      [1500, 10, 1, 1024],
    ],
  );
  const at = (c: number): number => curve.gridPoints().find((p) => p.capacity === c)?.tokens ?? -1;
  assert.equal(at(512), 0);
  assert.equal(at(1024), 10);
  assert.equal(at(2048), 15);
  assert.deepEqual(curve.totals(), { requests: 3, references: 4, tokens: 30, blocks: 4, bytes: 3072, gain: 0 });
  assert.equal(curve.ideal().tokens, 15);
});

test('the stack renumbers its slots and keeps distances (many references, few blocks)', () => {
  const stack = new LruStack();
  const ids = ['x', 'y', 'z'].map((k) => stack.idOf(k));
  for (let r = 0; r < 5000; r++) for (const id of ids) stack.touch(id, 7);
  assert.equal(stack.distance(ids[2]), 7);
  assert.equal(stack.distance(ids[0]), 21);
  assert.equal(stack.distinct, 3);
  assert.equal(stack.bytes, 21);
  assert.equal(stack.distance(stack.idOf('new')), Infinity);
});
