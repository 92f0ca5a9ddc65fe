// The LRU stack (metrics/lru-stack.ts) against a plain recency list: block ids are any integers ≥ 0
// (sparse ones too), sizes change on re-reference, and the tree kept only up to the top slot and the
// renumbering (thousands of references over few blocks) keep every distance exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LruStack } from '../../src/metrics/lru-stack.js';

test('property: every distance equals the bytes at or above the block in a plain recency list', () => {
  const op = fc.tuple(fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 5000 })), fc.integer({ min: 1, max: 1000 }));
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 3000 }), (ops) => {
      const stack = new LruStack();
      const order: Array<{ id: number; bytes: number }> = []; // newest last
      for (const [id, bytes] of ops) {
        const at = order.findIndex((b) => b.id === id);
        let above = 0;
        for (let i = order.length - 1; i >= Math.max(at, 0); i--) above += order[i].bytes;
        assert.equal(stack.distance(id), at < 0 ? Infinity : above, `block ${id}`);
        if (at >= 0) order.splice(at, 1);
        order.push({ id, bytes });
        stack.touch(id, bytes);
      }
      assert.equal(stack.distinct, order.length);
      assert.equal(
        stack.bytes,
        order.reduce((s, b) => s + b.bytes, 0),
      );
    }),
    { numRuns: 60 },
  );
});

test('a block never referenced, however large its id, is at an infinite distance', () => {
  const stack = new LruStack();
  stack.touch(3, 10);
  assert.equal(stack.distance(1_000_000), Infinity);
  assert.equal(stack.distance(2), Infinity);
  stack.touch(1_000_000, 5);
  assert.equal(stack.distance(3), 15);
  assert.equal(stack.distinct, 2);
});
