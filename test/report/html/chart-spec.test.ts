import assert from 'node:assert/strict';
import { test } from 'node:test';
import { joinSeries, makeChart, PALETTE, seriesStyle } from '../../../src/report/html/chart-spec.js';
import type { RawSeries } from '../../../src/report/html/chart-spec.js';
import { percentileCurve, percentileOfNines } from '../../../src/report/html/percentiles.js';
import { LatencyHistogram } from '../../../src/metrics/latency.js';

const raw = (label: string, x: number[], y: Array<number | null>): RawSeries => ({ spec: { label, color: '#000', run: 0 }, x, y });

test('joinSeries: the sorted union of x, a gap (null) where a series has no point', () => {
  assert.deepEqual(joinSeries([raw('a', [1, 2], [10, 20]), raw('b', [3, 2], [30, 21])]), [
    [1, 2, 3],
    [10, 20, null],
    [null, 21, 30],
  ]);
  // On a log axis a value ≤ 0 cannot be drawn: it becomes a gap, as do non-finite values.
  // Values keep 5 significant digits (the page shows at most 3 decimals).
  assert.deepEqual(joinSeries([raw('a', [1], [123.456789])]), [[1], [123.46]]);
  assert.deepEqual(joinSeries([raw('a', [1, 2, 3], [0, 5, Number.NaN])], true), [
    [1, 2, 3],
    [null, 5, null],
  ]);
});

test('makeChart keeps only series with something to draw, and no chart when none has', () => {
  const base = { id: 'c', title: 'C', xKind: 'seconds' as const, yLabel: 'ms' };
  const chart = makeChart(base, [raw('empty', [1, 2], [null, null]), raw('full', [1, 2], [1, 2])]);
  assert.deepEqual(
    chart?.series.map((s) => s.label),
    ['full'],
  );
  assert.deepEqual(chart?.data, [
    [1, 2],
    [1, 2],
  ]);
  assert.equal(makeChart(base, [raw('empty', [1], [null])]), undefined);
  assert.equal(makeChart({ ...base, yLog: true }, [raw('zeros', [1], [0])]), undefined);
});

test('series style: a colour per member in one run; a colour per run and a dash per member in several', () => {
  assert.deepEqual(seriesStyle(0, 1, 1), { color: PALETTE[1] });
  assert.deepEqual(seriesStyle(1, 0, 2), { color: PALETTE[1] });
  assert.deepEqual(seriesStyle(1, 1, 2), { color: PALETTE[1], dash: [6, 4] });
});

test('percentile curve: a fixed nines grid up to log10(count), values from the histogram', () => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 100; i++) h.recordMs(i / 1000); // 1 … 100 µs: exact in the histogram
  const c = percentileCurve(h.encode(), h.count);
  assert.equal(c.nines.length, 41); // 0, 0.05, … 2.0: 100 samples resolve p99 and no deeper
  assert.equal(c.nines[20], 1);
  assert.equal(c.nines.at(-1), 2);
  assert.equal(c.ms[0], 0.001); // p0: the fastest
  assert.equal(c.ms[20], 0.09); // one nine: p90
  assert.equal(c.ms.at(-1), 0.099); // two nines: p99
  assert.equal(percentileOfNines(3), 99.9);
  const few = new LatencyHistogram();
  for (let i = 0; i < 10; i++) few.recordMs(1.5);
  const curve = percentileCurve(few.encode(), few.count);
  assert.deepEqual(curve.nines, [...Array.from({ length: 20 }, (_, i) => i / 20), 1]);
  assert.deepEqual(new Set(curve.ms), new Set([1.5]));
  assert.deepEqual(percentileCurve('', 0), { nines: [], ms: [] });
});
