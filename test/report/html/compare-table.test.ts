import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareFigures, formatCompareTable, judge, ratioText } from '../../../src/report/html/compare-table.js';
import type { ResultsDocument, TrialsJson } from '../../../src/report/results-schema.js';
import { fixtureDoc, loaded } from './docs.js';

/** A trials block whose every figure has coefficient of variation `cv`. */
function trials(cv: number): TrialsJson {
  const stat = { n: 3, median: 1, min: 0.9, max: 1.1, mean: 1, cv };
  const names = ['storage_bytes_per_sec', 'storage_read_bytes_per_sec', 'storage_write_bytes_per_sec', 'requests_per_second'];
  const more = [
    'avg_throughput_tokens_per_sec',
    'storage_read_device_p95_ms',
    'storage_write_device_p95_ms',
    'end_to_end_p95_ms',
    'cache_hit_rate',
  ];
  return {
    requested: 3,
    completed: 3,
    pause_sec: 0,
    median_by: 'storage_bytes_per_sec',
    median_trial: 2,
    cv_kind: 'sample',
    cv_warning_threshold: 0.1,
    runs: [],
    stats: Object.fromEntries([...names, ...more].map((n) => [n, stat])),
    warnings: [],
  };
}

/** The fixture (0.4 GiB/s read) with another read bandwidth and optionally trials. */
function variant(readGibPerSec: number, cv?: number): ResultsDocument {
  const d = fixtureDoc();
  return {
    ...d,
    kvcache_bench: {
      ...d.kvcache_bench,
      storage_bytes: { ...d.kvcache_bench.storage_bytes, read_gib_per_sec: readGibPerSec },
      ...(cv !== undefined ? { trials: trials(cv) } : {}),
    },
  };
}

test('judge: significant only beyond twice the combined CV of both runs; unknown without both', () => {
  assert.deepEqual(judge(1.25, 0.1, 0.1), { significance: 'ns', noiseCv: Math.sqrt(0.1 * 0.1 + 0.1 * 0.1) });
  assert.deepEqual(judge(1.5, 0.1, 0.1), { significance: 'significant', noiseCv: Math.sqrt(0.1 * 0.1 + 0.1 * 0.1) });
  assert.deepEqual(judge(0.7, 0.1, 0.1), { significance: 'significant', noiseCv: Math.sqrt(0.1 * 0.1 + 0.1 * 0.1) });
  assert.deepEqual(judge(1.5, undefined, 0.1), { significance: 'unknown', noiseCv: null });
  assert.deepEqual(judge(null, 0.1, 0.1), { significance: 'unknown', noiseCv: null });
});

test('compareFigures: ratios against the first run, noise from the trials CVs', () => {
  const runs = [loaded(variant(0.4, 0.05), 'a.json'), loaded(variant(0.5, 0.05), 'b.json'), loaded(variant(0.41, 0.05), 'c.json')];
  const read = compareFigures(runs).find((c) => c.figure.key === 'storage_read_gib_per_sec');
  assert.ok(read !== undefined);
  assert.deepEqual(
    read.values.map((v) => [v.value, v.ratio === null ? null : Number(v.ratio.toFixed(4)), v.significance]),
    [
      [0.4, null, 'unknown'],
      [0.5, 1.25, 'significant'],
      [0.41, 1.025, 'ns'],
    ],
  );
  assert.deepEqual(read.values.slice(1).map(ratioText), ['×1.25', '×1.02 n.s.']);
  // Device bytes have no trial statistic: never called significant, whatever the trials.
  const device = compareFigures(runs).find((c) => c.figure.key === 'device_read_gib');
  assert.deepEqual(
    device?.values.map((v) => v.significance),
    ['unknown', 'unknown', 'unknown'],
  );
});

test('compare table: values, ratios, validity and the significance legend, without trials', () => {
  const text = formatCompareTable([
    loaded(variant(0.4), 'a.json', 'a.json (direct, 4 users)'),
    loaded(variant(0.5), 'b.json', 'b.json (direct, 4 users)'),
  ]);
  const lines = text.split('\n');
  assert.deepEqual(lines.slice(0, 4), ['Runs:', '  #1  a.json (direct, 4 users)  a.json', '  #2  b.json (direct, 4 users)  b.json', '']);
  assert.equal(lines[4], 'Figure                     Unit   #1         #2         #2 ÷ #1');
  assert.equal(lines[5], 'Storage read               GiB/s  0.400      0.500      ×1.25 ?');
  assert.equal(lines[7], 'Storage read p95 (device)  ms     1.250      1.250      ×1.00 ?');
  assert.equal(lines[10], 'Tokens                     tok/s  40.0       40.0       ×1.00 ?');
  assert.equal(lines[11], 'Cache hit rate             %      75.0       75.0       ×1.00 ?');
  assert.equal(lines[12], 'Device read                GiB    4.000      4.000      ×1.00 ?');
  assert.equal(lines[14], 'Validity                          NOT VALID  NOT VALID');
  assert.equal(lines[16], '#1 NOT VALID: run_too_short, too_few_samples');
  assert.equal(lines.at(-2), '  2 of 2 runs have no trials (run with --trials 3 or more to measure their noise).');
});

test('a figure the run does not have is n/a and gets no ratio (no device counters)', () => {
  const d = fixtureDoc();
  const noDevice = { ...d, kvcache_bench: { ...d.kvcache_bench, device_io: null } };
  const text = formatCompareTable([loaded(d, 'a.json'), loaded(noDevice, 'b.json')]);
  assert.ok(text.includes('Device read                GiB    4.000      n/a\n'), text);
});
