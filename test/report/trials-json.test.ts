// The trials block built from hand-made results documents with known figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildResultsJson } from '../../src/report/results-json.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { buildTrials, trialFigures, withTrials } from '../../src/report/trials-json.js';
import type { TrialRecord } from '../../src/report/trials-json.js';
import { trialsBlock } from '../../src/report/console.js';
import { runResultFixture } from './fixtures.js';
import { assertValidResults } from './validate-results.js';
import { GiB, MiB } from '../../src/util/units.js';

/** The fixture's document with storage read/write bytes/s, requests/s and a stop reason set. */
function trialDoc(
  readPerSec: number,
  writePerSec: number,
  rps: number,
  stop: ResultsDocument['kvcache_bench']['stop_reason'] = 'duration',
) {
  const doc = buildResultsJson(runResultFixture());
  return {
    ...doc,
    summary: { ...doc.summary, requests_per_second: rps },
    kvcache_bench: {
      ...doc.kvcache_bench,
      stop_reason: stop,
      interrupted: stop === 'interrupted',
      storage_bytes: { ...doc.kvcache_bench.storage_bytes, read_bytes_per_sec: readPerSec, write_bytes_per_sec: writePerSec },
    },
  } satisfies ResultsDocument;
}

const rec = (trial: number, doc: ResultsDocument): TrialRecord => ({ trial, file: `r.trial-${trial}.json`, results: doc });

test("a trial's headline figures come from its document's fields", () => {
  const doc = buildResultsJson(runResultFixture());
  // The fixture: 4 requests of 100 tokens in 10 s, 30 hits and 10 misses, storage device p95 1.25 ms read, 1.5 ms write.
  assert.deepEqual(trialFigures(doc), {
    storage_bytes_per_sec: doc.kvcache_bench.storage_bytes.read_bytes_per_sec + doc.kvcache_bench.storage_bytes.write_bytes_per_sec,
    storage_read_bytes_per_sec: doc.kvcache_bench.storage_bytes.read_bytes_per_sec,
    storage_write_bytes_per_sec: doc.kvcache_bench.storage_bytes.write_bytes_per_sec,
    requests_per_second: 0.4,
    avg_throughput_tokens_per_sec: 40,
    storage_read_device_p95_ms: 1.25,
    storage_write_device_p95_ms: 1.5,
    end_to_end_p95_ms: doc.summary.end_to_end_latency_ms.p95,
    cache_hit_rate: 0.75,
  });
});

test('three trials: median trial by storage bytes/s, exact statistics, a CV warning, a valid document', () => {
  // storage bytes/s: 300, 100, 200 MiB/s → median trial 3 (200); requests/s 3, 1, 2
  const records = [
    rec(1, trialDoc(200 * MiB, 100 * MiB, 3)),
    rec(2, trialDoc(80 * MiB, 20 * MiB, 1)),
    rec(3, trialDoc(150 * MiB, 50 * MiB, 2)),
  ];
  const { block, median } = buildTrials(records, 3, 5);
  assert.equal(median?.trial, 3);
  assert.equal(block.median_trial, 3);
  assert.equal(block.completed, 3);
  assert.equal(block.pause_sec, 5);
  assert.deepEqual(block.stats.storage_bytes_per_sec, {
    n: 3,
    median: 200 * MiB,
    min: 100 * MiB,
    max: 300 * MiB,
    mean: 200 * MiB,
    cv: 0.5,
  });
  assert.deepEqual(block.stats.requests_per_second, { n: 3, median: 2, min: 1, max: 3, mean: 2, cv: 0.5 });
  assert.equal(block.stats.cache_hit_rate?.cv, 0);
  assert.deepEqual(
    block.runs.map((r) => [r.trial, r.counted, r.file]),
    [
      [1, true, 'r.trial-1.json'],
      [2, true, 'r.trial-2.json'],
      [3, true, 'r.trial-3.json'],
    ],
  );
  assert.equal(block.warnings.length, 1);
  assert.match(block.warnings[0] ?? '', /CV above 10 % for storage_bytes_per_sec \(50\.0 %\), storage_read_bytes_per_sec/);
  assert.doesNotMatch(block.warnings[0] ?? '', /cache_hit_rate/);
  const doc = withTrials(median?.results ?? records[0].results, block);
  assertValidResults(doc);
  assert.equal(doc.kvcache_bench.storage_bytes.read_bytes_per_sec, 150 * MiB);
});

test('an interrupted trial is listed, not counted; the median comes from the completed ones', () => {
  const records = [rec(1, trialDoc(GiB, 0, 3)), rec(2, trialDoc(3 * GiB, 0, 3)), rec(3, trialDoc(GiB / 10, 0, 1, 'interrupted'))];
  const { block, median } = buildTrials(records, 5, 0);
  assert.equal(block.completed, 2);
  assert.equal(median?.trial, 1, 'lower middle of 1 GiB/s and 3 GiB/s');
  assert.equal(block.runs[2]?.counted, false);
  assert.equal(block.stats.storage_bytes_per_sec?.n, 2);
  assert.equal(block.stats.storage_bytes_per_sec?.max, 3 * GiB);
  assert.ok(block.warnings.includes('trial 3 was interrupted: its partial figures are listed, not counted'));
  assert.ok(block.warnings.includes('2 of 5 trials completed: the statistics cover those only'));
  const lines = trialsBlock(block);
  assert.equal(lines[1], '### TRIALS (2 of 5 completed; median trial 1 by storage bytes/s; MiB = 2^20 bytes) ###');
  assert.match(lines[3] ?? '', /^ {2}1\* +1024\.0 /);
  assert.match(lines[5] ?? '', /^ {2}3 ! +102\.4 /);
});

test('no completed trial: no median, null statistics', () => {
  const { block, median } = buildTrials([rec(1, trialDoc(GiB, 0, 1, 'interrupted'))], 3, 0);
  assert.equal(median, undefined);
  assert.equal(block.median_trial, null);
  assert.deepEqual(block.stats.storage_bytes_per_sec, { n: 0, median: null, min: null, max: null, mean: null, cv: null });
  assert.match(trialsBlock(block)[1] ?? '', /0 of 3 completed; no trial completed/);
  assertValidResults(withTrials(trialDoc(GiB, 0, 1, 'interrupted'), block));
});
