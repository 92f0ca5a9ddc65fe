import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slotCounts, tearDown } from '../../src/engine/tier-stack.js';
import { READS_IN_FLIGHT } from '../../src/tiers/direct-io.js';

function part(name: string, log: string[], fails = false): { close(): Promise<void> } {
  return {
    close: async () => {
      log.push(name);
      if (fails) throw new Error(`${name} failed`);
    },
  };
}

test('teardown: payload threads, then the tiers, then the copy threads, then the trace', async () => {
  const log: string[] = [];
  await tearDown({ trace: part('trace', log), copier: part('copier', log), tiers: part('tiers', log), payload: part('payload', log) });
  assert.deepEqual(log, ['payload', 'tiers', 'copier', 'trace']);
});

test('teardown: absent parts are skipped', async () => {
  const log: string[] = [];
  await tearDown({ tiers: part('tiers', log), trace: part('trace', log) });
  assert.deepEqual(log, ['tiers', 'trace']);
});

test('teardown: the first error stops it and is thrown; quiet releases everything; a trace error is ignored', async () => {
  const log: string[] = [];
  await assert.rejects(
    tearDown({ payload: part('payload', log), tiers: part('tiers', log, true), copier: part('copier', log) }),
    /tiers failed/,
  );
  assert.deepEqual(log, ['payload', 'tiers']);

  const quiet: string[] = [];
  await tearDown(
    {
      payload: part('payload', quiet, true),
      tiers: part('tiers', quiet, true),
      copier: part('copier', quiet),
      trace: part('trace', quiet, true),
    },
    true,
  );
  assert.deepEqual(quiet, ['payload', 'tiers', 'copier', 'trace']);

  const traceOnly: string[] = [];
  await tearDown({ tiers: part('tiers', traceOnly), trace: part('trace', traceOnly, true) });
  assert.deepEqual(traceOnly, ['tiers', 'trace']);
});

test('buffer slots: two staging slots per operation (a read keeps its next chunk in flight) plus 4, two payload slots per operation, bounded', () => {
  assert.equal(READS_IN_FLIGHT, 2);
  assert.deepEqual(slotCounts(1), { staging: 6, payload: 8 });
  assert.deepEqual(slotCounts(16), { staging: 36, payload: 32 });
  assert.deepEqual(slotCounts(500), { staging: 64, payload: 64 });
});
