// HDR histograms read from files: a corrupt one costs only itself, a decompression bomb is stopped at
// the cap (bounded memory), a header asking for an absurd range is refused before anything is allocated.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { HistogramDecodeError, LatencyHistogram, MAX_INFLATED_HISTOGRAM_BYTES } from '../../src/metrics/latency.js';
import { collectRun } from '../../src/mlperf/collect.js';
import { mergeRun } from '../../src/mlperf/merge.js';
import { reportHtml } from '../../src/report/html/build-report.js';
import { parseRunText } from '../../src/report/html/run-input.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { runResultFixture } from '../report/fixtures.js';
import { withTempDir } from '../util/temp-dir.js';

/** A compressed-V2 envelope around `inner` (what a hostile file can put in `encoded`). */
function envelope(inner: Buffer): string {
  const compressed = deflateSync(inner);
  const head = Buffer.alloc(8);
  head.writeInt32BE(0x1c849314, 0);
  head.writeInt32BE(compressed.length, 4);
  return Buffer.concat([head, compressed]).toString('base64');
}

/** An uncompressed V2 header asking for `highest` at `digits`, with no counts. */
function header(digits: number, highest: bigint): Buffer {
  const b = Buffer.alloc(40);
  b.writeInt32BE(0x1c849313, 0);
  b.writeInt32BE(0, 4);
  b.writeInt32BE(1, 8);
  b.writeInt32BE(digits, 12);
  b.writeBigInt64BE(1n, 16);
  b.writeBigInt64BE(highest, 24);
  b.writeBigInt64BE(1n, 32);
  return b;
}

const decodeProblem = (encoded: string): string => {
  try {
    LatencyHistogram.decode(encoded);
  } catch (e) {
    assert.ok(e instanceof HistogramDecodeError, String(e));
    return e.message;
  }
  return 'decoded';
};

test('a corrupt histogram is one named error', () => {
  assert.equal(decodeProblem('HISTFAAAAB'), 'not a compressed HdrHistogram (V2) encoding');
  assert.equal(decodeProblem(''), 'not a compressed HdrHistogram (V2) encoding');
  assert.equal(
    decodeProblem(envelope(Buffer.from('not a histogram at all, just text padding it out'))),
    'not an HdrHistogram (V2) encoding inside',
  );
});

test('a decompression bomb stops at the cap: 256 MiB of zeros never inflate (bound: 4 MiB + zlib state)', () => {
  const before = process.memoryUsage().rss;
  const bomb = envelope(Buffer.alloc(256 << 20));
  const made = process.memoryUsage().rss;
  assert.equal(decodeProblem(bomb), `the histogram inflates past ${MAX_INFLATED_HISTOGRAM_BYTES} bytes (a decompression bomb?)`);
  // Making the bomb costs its own 256 MiB buffer; decoding it must not cost anything like that again.
  assert.ok(process.memoryUsage().rss - Math.max(before, made) < 64 << 20);
});

test('a header asking for 2^62 at 5 digits or 9 digits is refused before the counts are allocated', () => {
  assert.match(
    decodeProblem(envelope(header(5, 2n ** 62n))),
    /^its header asks for values 1 … \d+ at 5 digits; at most 4398046511104 at 5 digits are accepted$/,
  );
  assert.match(decodeProblem(envelope(header(9, 1000n))), /at 9 digits; at most/);
});

test('our own histograms still decode exactly', () => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 1000; i++) h.recordMs(i / 10);
  const back = LatencyHistogram.decode(h.encode());
  assert.equal(back.count, 1000);
  assert.equal(back.percentileMs(95), h.percentileMs(95));
  assert.equal(LatencyHistogram.problemOf(h.encode()), undefined);
});

function docWithSamples(samplesMs: readonly number[]): ResultsDocument {
  const doc = structuredClone(buildResultsJson(runResultFixture()));
  const h = new LatencyHistogram();
  for (const ms of samplesMs) h.recordMs(ms);
  doc.kvcache_bench.storage_bytes = { ...doc.kvcache_bench.storage_bytes, read_bytes: 1, written_bytes: 1 };
  doc.kvcache_bench.latency_histograms.storage_read_device = {
    encoded: h.encode(),
    count: h.count,
    sum_ms: samplesMs.reduce((a, b) => a + b, 0),
  };
  return doc;
}

test('merge: a rank whose histogram is HISTFAAAAB loses only that histogram, named; the other ranks are pooled', () =>
  withTempDir(async (dir) => {
    const trial = join(dir, 'option_1', 'trial_1');
    const good = docWithSamples([1, 2, 3, 4]);
    const bad = docWithSamples([100]);
    bad.kvcache_bench.latency_histograms.storage_read_device = {
      ...bad.kvcache_bench.latency_histograms.storage_read_device,
      encoded: 'HISTFAAAAB',
    };
    for (const [rank, doc] of [good, bad].entries()) {
      mkdirSync(join(trial, `rank_${rank}`), { recursive: true });
      writeFileSync(join(trial, `rank_${rank}`, 'kvcache_results_1.json'), JSON.stringify(doc));
    }
    const { trials, meta } = collectRun([dir], new Date(0));
    assert.deepEqual(
      trials[0].files.map((f) => f.rank),
      [0, 1],
    );
    assert.deepEqual(trials[0].missing, [
      `${join(trial, 'rank_1', 'kvcache_results_1.json')}: latency histogram storage_read_device left out of the pooled percentiles (not a compressed HdrHistogram (V2) encoding)`,
    ]);
    const summary = mergeRun(trials, meta);
    assert.equal(summary.options['1'].rank_count, 2);
    assert.equal(summary.options['1'].kvcache_bench.storage_read_device_latency.count, 4);
    assert.equal(summary.partial_failure, true);
  }));

test('report: a file with one corrupt and one bomb histogram loads, names both, and the HTML is built', () => {
  const doc = docWithSamples([1, 2, 3]);
  const hs = doc.kvcache_bench.latency_histograms;
  hs.storage_read_device = { ...hs.storage_read_device, encoded: 'HISTFAAAAB' };
  hs.request_e2e = { ...(hs.request_e2e ?? hs.storage_read_device), encoded: envelope(Buffer.alloc(64 << 20)) };
  const run = parseRunText(JSON.stringify(doc), 'bad.json');
  assert.equal(run.kvcache_bench.latency_histograms.storage_read_device, undefined);
  assert.deepEqual(
    run.kvcache_bench.validity.warnings
      .filter((w) => w.code === 'histogram_unreadable')
      .map((w) => w.message)
      .sort(),
    [
      'latency histogram request_e2e is unreadable (the histogram inflates past 4194304 bytes (a decompression bomb?)): left out of this report',
      'latency histogram storage_read_device is unreadable (not a compressed HdrHistogram (V2) encoding): left out of this report',
    ],
  );
  const html = reportHtml([{ path: 'bad.json', label: 'bad.json', doc: run }], new Date(0), 'test');
  assert.ok(html.includes('histogram_unreadable'));
});
