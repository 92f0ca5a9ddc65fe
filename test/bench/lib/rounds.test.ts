// The order of a bench comparison's runs (bench/lib/rounds.ts): sides alternate by round, and each group
// gets its unmeasured warm-up passes before its first measured round (issue 35: bench:ranks' round 1
// on a fresh RAM device was slow for both programs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { comparisonSchedule, inRoundOrder, median } from '../../../bench/lib/rounds.js';

test('sides alternate which goes first; the median of an even count is the mean of the middle two', () => {
  assert.deepEqual(inRoundOrder(1, ['kv', 'fio']), ['kv', 'fio']);
  assert.deepEqual(inRoundOrder(2, ['kv', 'fio']), ['fio', 'kv']);
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('each group (ranks count) gets a warm-up pass of both programs before its measured rounds', () => {
  const runs = comparisonSchedule([1, 2], ['kv', 'fio'] as const, 3, 1).map(
    (r) => `${r.group}:${r.round}:${r.side}${r.measured ? '' : ' (warm-up)'}`,
  );
  assert.deepEqual(runs, [
    '1:0:kv (warm-up)',
    '1:0:fio (warm-up)',
    '1:1:kv',
    '1:1:fio',
    '1:2:fio',
    '1:2:kv',
    '1:3:kv',
    '1:3:fio',
    '2:0:kv (warm-up)',
    '2:0:fio (warm-up)',
    '2:1:kv',
    '2:1:fio',
    '2:2:fio',
    '2:2:kv',
    '2:3:kv',
    '2:3:fio',
  ]);
  assert.equal(comparisonSchedule([1], ['kv', 'fio'] as const, 2, 0).filter((r) => !r.measured).length, 0, '--warm-up 0: none');
});
