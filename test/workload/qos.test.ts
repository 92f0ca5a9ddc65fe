// QoS classes (docs/reference-compat.md#rc-25): levels and priorities, and the level assigned to a draw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { drawQos, isQosLevel, qosForDraw, qosPriority } from '../../src/workload/qos.js';
import { DEFAULT_SETTINGS } from '../../src/settings/config-keys.js';
import { QOS_LEVELS } from '../../src/settings/choices.js';

const DEFAULT_QOS_PROFILES = DEFAULT_SETTINGS.qosProfiles;

test('three levels with priorities 3/2/1', () => {
  assert.equal(QOS_LEVELS.length, 3);
  assert.deepEqual(Object.keys(DEFAULT_QOS_PROFILES).sort(), ['batch', 'interactive', 'responsive']);
  assert.equal(qosPriority('interactive'), 3);
  assert.equal(qosPriority('responsive'), 2);
  assert.equal(qosPriority('batch'), 1);
  assert.ok(isQosLevel('batch'));
  assert.ok(!isQosLevel('bulk'));
});

test('assignment thresholds 0.15 / 0.50', () => {
  assert.equal(qosForDraw(0), 'interactive');
  assert.equal(qosForDraw(0.1499), 'interactive');
  assert.equal(qosForDraw(0.15), 'responsive');
  assert.equal(qosForDraw(0.4999), 'responsive');
  assert.equal(qosForDraw(0.5), 'batch');
  assert.equal(qosForDraw(0.999), 'batch');
  assert.equal(qosForDraw(0.3, { interactiveProbability: 0.4, responsiveThreshold: 0.6 }), 'interactive');
  const rng = new Rng(3);
  const counts = { interactive: 0, responsive: 0, batch: 0 };
  for (let i = 0; i < 20000; i++) counts[drawQos(rng)]++;
  assert.ok(Math.abs(counts.interactive / 20000 - 0.15) < 0.015);
  assert.ok(Math.abs(counts.responsive / 20000 - 0.35) < 0.02);
});
