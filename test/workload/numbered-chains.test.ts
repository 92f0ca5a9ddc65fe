// The flat chains a source hands `kv-cache size` (workload/numbered-chains.ts): chains of any length
// past the columns' first size, and each batch taken starting afresh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChainColumns } from '../../src/workload/numbered-chains.js';

test('chain columns: chains past the first size kept whole; a batch taken leaves the next one empty', () => {
  const columns = new ChainColumns();
  for (let i = 0; i < 5000; i++) columns.block(i, 1 + (i % 7));
  columns.endChain();
  columns.block(7, 3);
  columns.endChain();
  const first = columns.take(Float64Array.of(1, 2), (i) => `s${i}`);
  assert.equal(first.requests, 2);
  assert.deepEqual([...first.starts], [0, 5000, 5001]);
  assert.equal(first.keys[4999], 4999);
  assert.equal(first.tokens[4999], 1 + (4999 % 7));
  assert.deepEqual([first.keys[5000], first.tokens[5000]], [7, 3]);
  assert.equal(first.sessionKey(1), 's1');
  columns.block(9, 2);
  columns.endChain();
  const second = columns.take(Float64Array.of(3), () => '');
  assert.deepEqual([second.requests, [...second.starts], [...second.keys], [...second.tokens]], [1, [0, 1], [9], [2]]);
  assert.equal(first.keys[5000], 7); // the first batch is its own copy
});
