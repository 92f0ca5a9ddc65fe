// Byte units (GiB = 2^30 everywhere) and alignment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GiB, KiB, MiB, roundUp, toGiB } from '../../src/util/units.js';

test('binary units and the GiB conversion', () => {
  assert.deepEqual([KiB, MiB, GiB], [2 ** 10, 2 ** 20, 2 ** 30]);
  assert.equal(toGiB(3 * 2 ** 30), 3);
  assert.equal(toGiB(2 ** 29), 0.5);
});

test('roundUp to an alignment', () => {
  assert.equal(roundUp(4097, 4096), 8192);
  assert.equal(roundUp(4096, 4096), 4096);
  assert.equal(roundUp(0, 4096), 0);
  assert.equal(roundUp(10, 3), 12);
});
