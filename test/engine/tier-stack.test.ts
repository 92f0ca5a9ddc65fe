import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStorage, slotCounts, tearDown } from '../../src/engine/tier-stack.js';
import { storageDeviceOf } from '../../src/metrics/diskstats.js';
import { withTempDir } from '../util/temp-dir.js';
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
  assert.deepEqual(slotCounts(16), { staging: 36, payload: 48 });
  assert.deepEqual(slotCounts(500), { staging: 64, payload: 96 });
});

test('openStorage asks the registry for the kind: the memory backend has no directory and no device, and tears down', async () => {
  const s = await openStorage({ backend: 'memory', ioMode: 'direct', seed: 3, slots: slotCounts(1) });
  try {
    assert.equal(s.opened.backend.tier, 'storage');
    assert.equal(s.target.kind, 'memory');
    assert.equal(s.target.dir, undefined);
    assert.equal(s.target.location, '(none: memory backend)');
    assert.deepEqual(s.target.device, {
      kind: 'none',
      reason: 'the memory storage backend keeps entries in RAM: there is no block device',
    });
    await s.opened.backend.write('k', s.payload.source('k', 5000));
    assert.equal(s.opened.backend.sizeOf('k'), 5000);
  } finally {
    await tearDown({ payload: s.payload, tiers: s.opened.backend });
  }
});

test('openStorage of the file kind: the target is its directory with the block device resolved once', async () => {
  await withTempDir(async (dir) => {
    const s = await openStorage({ backend: 'file', cacheDir: dir, ioMode: 'buffered', seed: 3, slots: slotCounts(1) });
    try {
      assert.equal(s.target.kind, 'file');
      assert.equal(s.target.dir, dir);
      assert.equal(s.target.location, dir);
      assert.equal(s.target.ioMode, 'buffered');
      assert.deepEqual(s.target.device, await storageDeviceOf(dir));
    } finally {
      await tearDown({ payload: s.payload, tiers: s.opened.backend });
    }
  });
});
