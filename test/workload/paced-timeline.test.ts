// The replay schedule (workload/paced-timeline.ts) a batch of records at a time gives every record the
// time the one-at-a-time schedule gives it, whatever the batches, speed-up, passes and steps back in time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pacedBatches, pacedTimeline } from '../../src/workload/paced-timeline.js';

async function* itemsOf<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const i of items) yield i;
}

test('property: pacedBatches schedules each record as pacedTimeline does', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 5 }), { maxLength: 6 }),
      fc.constantFrom(0, 0.5, 1, 3),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 2 }),
      async (batches, speedup, replayCycles, emptyFrom) => {
        // Passes from `emptyFrom` on have no record when the cycles are unlimited (0): the schedule ends there.
        const cycles = replayCycles === 0 ? emptyFrom + 1 : replayCycles;
        const passBatches = (pass: number): number[][] => (replayCycles === 0 && pass >= emptyFrom ? [] : batches);
        const options = { speedup, replayCycles };
        const one: Array<[number, number]> = [];
        for await (const it of pacedTimeline(
          (pass) => itemsOf(passBatches(pass).flat()),
          (t) => t,
          1000,
          options,
        )) {
          one.push([it.record, it.scheduledAtMs]);
          if (one.length > 1000) break;
        }
        const batched: Array<[number, number]> = [];
        for await (const b of pacedBatches(
          (pass) => itemsOf(passBatches(pass)),
          (t) => t,
          1000,
          options,
        )) {
          assert.equal(b.scheduledAtMs.length, b.records.length);
          b.records.forEach((r, i) => batched.push([r, b.scheduledAtMs[i]]));
          if (batched.length > 1000) break;
        }
        assert.deepEqual(batched, one);
        assert.ok(one.length <= cycles * batches.flat().length);
      },
    ),
    { numRuns: 300 },
  );
});

test('pacedBatches: a step back in time costs no delay, a later pass starts where the last ended', async () => {
  const out: number[] = [];
  for await (const b of pacedBatches(
    () => itemsOf([[1, 3], [], [2]]),
    (t) => t,
    1000,
    { speedup: 2, replayCycles: 2 },
  ))
    out.push(...b.scheduledAtMs);
  assert.deepEqual(out, [0, 1000, 1000, 1000, 2000, 2000]);
  await assert.rejects(async () => {
    for await (const _ of pacedBatches(
      () => itemsOf([[1]]),
      (t) => t,
      1,
      { speedup: -1, replayCycles: 1 },
    ))
      break;
  }, /trace speedup must be a finite number ≥ 0, got -1/);
});
