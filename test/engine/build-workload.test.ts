import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildWorkloadParts } from '../../src/engine/build-workload.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';
import { TINY } from '../cache/helpers.js';

const SWITCHES = { model: TINY, disableMultiTurn: false, disablePrefixCaching: false, enableRag: false };

test('workload parts: each manager exists only when its feature is on', () => {
  const all = buildWorkloadParts({ ...SWITCHES, enableRag: true }, DEFAULT_SETTINGS);
  assert.ok(all.conversations !== undefined && all.prefix !== undefined && all.rag !== undefined);
  assert.equal(all.settings, DEFAULT_SETTINGS);
  const none = buildWorkloadParts({ ...SWITCHES, disableMultiTurn: true, disablePrefixCaching: true }, DEFAULT_SETTINGS);
  assert.deepEqual(Object.keys(none), ['settings']);
});
