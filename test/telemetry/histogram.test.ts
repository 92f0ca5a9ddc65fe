// The bpftrace output parser on recorded output (a real kv-cache run, test/telemetry/fixtures) and on
// hand-made edge cases: every bucket form, empty maps, truncated output; and the statistics.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  bucketPercentile,
  estimatedSum,
  histogramStats,
  interpolatedPercentile,
  parseBound,
  parseBpftraceOutput,
  parseBucketLine,
  totalCount,
} from '../../src/telemetry/histogram.js';

const fixture = (name: string): string => readFileSync(new URL(`../../../test/telemetry/fixtures/${name}`, import.meta.url), 'utf8');

test('bounds: plain, K, M, G, T suffixes are powers of 1024', () => {
  assert.equal(parseBound('512'), 512);
  assert.equal(parseBound('1K'), 1024);
  assert.equal(parseBound('2M'), 2 * 2 ** 20);
  assert.equal(parseBound('4G'), 4 * 2 ** 30);
  assert.equal(parseBound('1T'), 2 ** 40);
  assert.equal(parseBound('1.5K'), undefined);
  assert.equal(parseBound('x'), undefined);
});

test('every bucket form bpftrace prints', () => {
  assert.deepEqual(parseBucketLine('[0]                  157 |@@@@@@@@           |'), { lo: 0, hi: 1, count: 157 });
  assert.deepEqual(parseBucketLine('[1]                    0 |                   |'), { lo: 1, hi: 2, count: 0 });
  assert.deepEqual(parseBucketLine('[2, 4)                 3 |@                  |'), { lo: 2, hi: 4, count: 3 });
  assert.deepEqual(parseBucketLine('[512, 1K)              9 |@@@                |'), { lo: 512, hi: 1024, count: 9 });
  assert.deepEqual(parseBucketLine('[1K, 2K)              12'), { lo: 1024, hi: 2048, count: 12 });
  assert.deepEqual(parseBucketLine('[1M, 2M)               1 |@|'), { lo: 2 ** 20, hi: 2 ** 21, count: 1 });
  assert.deepEqual(parseBucketLine('[1G, 2G)               2 |@|'), { lo: 2 ** 30, hi: 2 ** 31, count: 2 });
  assert.deepEqual(parseBucketLine('[4G, 8G)               5 |@|'), { lo: 4 * 2 ** 30, hi: 8 * 2 ** 30, count: 5 });
  assert.deepEqual(parseBucketLine('[8000, ...)            4 |@|'), { lo: 8000, hi: null, count: 4 });
  assert.deepEqual(parseBucketLine('(..., 0)               1 |@|'), { lo: 0, hi: 0, count: 1 });
  assert.equal(parseBucketLine('[4, 8'), undefined);
  assert.equal(parseBucketLine('[8, 4)  3'), undefined);
  assert.equal(parseBucketLine('Attaching 21 probes...'), undefined);
});

test('recorded output of a kv-cache run: the histograms and scalar totals', () => {
  const p = parseBpftraceOutput(fixture('kv-cache-run.bpftrace.txt'));
  assert.equal(p.truncated, false);
  assert.deepEqual(p.unreadLines, []);
  assert.deepEqual([...p.histograms.keys()].sort(), [
    'bssplit_read_kb',
    'bssplit_write_kb',
    'd2c_read_us',
    'd2c_write_us',
    'fsync_us',
    'lba_read_gb',
    'lba_write_gb',
    'q2d_read_us',
    'q2d_write_us',
    'qd_read',
    'qd_write',
    'vfs_read_kb',
    'vfs_read_us',
    'vfs_write_kb',
    'vfs_write_us',
    'write_to_fsync_us',
  ]);
  assert.equal(p.scalars.get('issued_read'), 2052);
  assert.equal(p.scalars.get('issued_write'), 621);
  assert.equal(p.scalars.get('d2c_sum_us_read'), 1324944);
  // Every issue is in the size histograms: the parser dropped no bucket (the reference drops [512, 1K) and G buckets).
  assert.equal(totalCount(p.histograms.get('bssplit_read_kb') ?? []), 2052);
  assert.equal(totalCount(p.histograms.get('bssplit_write_kb') ?? []), 621);
  assert.equal(totalCount(p.histograms.get('lba_read_gb') ?? []), 2052);
});

const HAND_MADE = `Attaching 3 probes...
KVCACHE_BENCH_TRACING_READY


@empty:

@lat:
[256, 512)             2 |@@                                                  |
[512, 1K)              4 |@@@@                                                |
[1K, 2K)               2 |@@                                                  |
[1G, 2G)               1 |@                                                   |

@n: 42
@keyed[1]: 7
`;

test('hand-made: empty map, mixed suffixes, G bucket, scalars, stderr-like lines ignored', () => {
  const p = parseBpftraceOutput(HAND_MADE);
  assert.deepEqual(p.histograms.get('empty'), []);
  assert.deepEqual(p.histograms.get('lat'), [
    { lo: 256, hi: 512, count: 2 },
    { lo: 512, hi: 1024, count: 4 },
    { lo: 1024, hi: 2048, count: 2 },
    { lo: 2 ** 30, hi: 2 ** 31, count: 1 },
  ]);
  assert.equal(p.scalars.get('n'), 42);
  assert.equal(p.truncated, false);
});

test('truncated output: the cut-off line is flagged, the complete buckets kept', () => {
  const cut = '@lat:\n[256, 512)             2 |@@     |\n[512, 1K)              4 |@@';
  const p = parseBpftraceOutput(cut);
  assert.equal(p.truncated, true);
  assert.deepEqual(p.histograms.get('lat'), [
    { lo: 256, hi: 512, count: 2 },
    { lo: 512, hi: 1024, count: 4 },
  ]);
  const mid = parseBpftraceOutput('@lat:\n[256, 512)             2 |@@     |\n[512, ');
  assert.equal(mid.truncated, true);
  assert.deepEqual(mid.histograms.get('lat'), [{ lo: 256, hi: 512, count: 2 }]);
  assert.equal(parseBpftraceOutput('').truncated, false);
});

test('percentiles interpolate within the bucket; the reference reports the bucket', () => {
  const b = [
    { lo: 0, hi: 1, count: 0 },
    { lo: 2, hi: 4, count: 50 },
    { lo: 4, hi: 8, count: 50 },
  ];
  assert.equal(interpolatedPercentile(b, 50), 4); // 50th of 100 samples: the top of [2, 4)
  assert.equal(interpolatedPercentile(b, 75), 6); // halfway through [4, 8)
  assert.equal(interpolatedPercentile(b, 99), 7.92);
  assert.deepEqual(bucketPercentile(b, 50), [2, 4]);
  assert.deepEqual(bucketPercentile(b, 51), [4, 8]);
  assert.equal(interpolatedPercentile([], 50), null);
  // A one-value bucket ([N]) and an open-ended one give their value, not a spread.
  assert.equal(interpolatedPercentile([{ lo: 1, hi: 2, count: 10 }], 90), 1);
  assert.equal(interpolatedPercentile([{ lo: 8000, hi: null, count: 3 }], 50), 8000);
  const s = histogramStats(b);
  assert.equal(s.samples, 100);
  assert.equal(s.minBucket, 2);
  assert.equal(s.maxBucket, 8);
  assert.deepEqual(s.p99Bucket, [4, 8]);
  assert.equal(estimatedSum(b), 50 * 3 + 50 * 6);
});
