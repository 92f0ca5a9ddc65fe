import { test } from 'node:test';
import assert from 'node:assert/strict';
import { figureStats, medianTrialIndex, TRIAL_CV_WARNING, unstableFigures } from '../../src/metrics/trials.js';

test('odd count: the middle value; min, max, mean; sample CV (n − 1)', () => {
  // 2, 4, 6: mean 4, sample variance ((−2)² + 0 + 2²) / 2 = 4, sd 2, CV 0.5
  assert.deepEqual(figureStats([6, 2, 4]), { n: 3, median: 4, min: 2, max: 6, mean: 4, cv: 0.5 });
});

test('even count: the median is the mean of the two middle values', () => {
  // 1, 2, 3, 10: mean 4; squares 9 + 4 + 1 + 36 = 50; sample variance 50/3
  const s = figureStats([10, 1, 3, 2]);
  assert.equal(s.median, 2.5);
  assert.equal(s.mean, 4);
  assert.equal(s.cv, Math.sqrt(50 / 3) / 4);
});

test('absent figures are skipped; one value has no spread; none has no statistics; a zero mean has no CV', () => {
  assert.deepEqual(figureStats([null, 5, undefined]), { n: 1, median: 5, min: 5, max: 5, mean: 5, cv: null });
  assert.deepEqual(figureStats([null, null]), { n: 0, median: null, min: null, max: null, mean: null, cv: null });
  assert.deepEqual(figureStats([0, 0, 0]), { n: 3, median: 0, min: 0, max: 0, mean: 0, cv: null });
  assert.equal(figureStats([7, 7, 7]).cv, 0);
});

test('the median trial: the middle one, the lower middle one for an even count, ties in trial order', () => {
  assert.equal(medianTrialIndex([300, 100, 200]), 2);
  assert.equal(medianTrialIndex([400, 100, 300, 200]), 3, 'lower middle of 100, 200, 300, 400 is 200 (trial index 3)');
  assert.equal(medianTrialIndex([5, 5, 5]), 1, 'ranked 0, 1, 2: the middle is index 1');
  assert.equal(medianTrialIndex([9]), 0);
  assert.equal(medianTrialIndex([null, 4, null, 2]), 3, 'absent values are not ranked: of 2 and 4 the lower');
  assert.equal(medianTrialIndex([null]), undefined);
});

test('figures whose CV exceeds the 10 % threshold are named, at the threshold they are not', () => {
  assert.equal(TRIAL_CV_WARNING, 0.1);
  const stats = {
    a: figureStats([6, 2, 4]), // CV 0.5
    b: figureStats([7, 7, 7]), // 0
    c: { n: 2, median: 1, min: 1, max: 1, mean: 1, cv: 0.1 },
    d: figureStats([1]), // null
  };
  assert.deepEqual(unstableFigures(stats), [{ figure: 'a', cv: 0.5 }]);
});
