// The HTML report's modelled-TTFT section from a hand-made run: the two charts by prompt length (at
// each bin's geometric middle), the per-class table, and the notes for runs without the block.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ttftSection } from '../../../src/report/html/sections/ttft.js';
import { TtftMetrics } from '../../../src/metrics/ttft.js';
import type { TtftModelled } from '../../../src/metrics/ttft.js';
import { buildResultsJson } from '../../../src/report/results-json.js';
import { runResultFixture } from '../fixtures.js';
import { fixtureDoc, loaded } from './docs.js';
import { ttftSample } from '../../metrics/ttft-sample.js';

const sample = ttftSample;

function docWithTtft(): unknown {
  const m = new TtftMetrics();
  m.record(sample({ promptTokens: 1000 }));
  // 2,000 hit tokens (2 GB) loaded in 1 s: 2 GB/s delivered; their compute 4 s → 0.5 GB/s break-even.
  m.record(sample({ hitTokens: 2000, hitBytes: 2e9, hitLoadMs: 1000, offloadMs: 1100, recomputeMs: 4200, hitComputeMs: 4000 }));
  const ttft: TtftModelled = {
    setup: {
      gpuProfile: 'h100-sxm',
      gpuName: 'NVIDIA H100 SXM',
      bf16DenseTflops: 989,
      mfu: 0.5,
      tensorParallel: 1,
      activeParams: 37e9,
      kvBytesPerTokenPerRank: 1e6,
      breakEven: [{ contextTokens: 1024, bytesPerSec: 4.7e8 }],
    },
    figures: m.snapshot(),
  };
  return JSON.parse(JSON.stringify(buildResultsJson({ ...runResultFixture(), ttftModelled: ttft })));
}

test('charts by prompt length: mean TTFT offload vs recompute, delivered vs break-even rate', () => {
  const s = ttftSection([loaded(docWithTtft(), 'a.json')]);
  assert.deepEqual(
    s.charts.map((c) => [c.id, c.xLabel, c.yLog]),
    [
      ['ttft-by-context', 'prompt tokens', true],
      ['ttft-break-even', 'prompt tokens', false],
    ],
  );
  assert.match(s.charts[0].title, /MODELLED — NVIDIA H100 SXM, 989 TFLOP\/s × MFU 0\.5 × TP 1/);
  // Bins [512, 1024) and [2048, 4096): x at √(512 × 1024) = 724 and √(2048 × 4096) = 2896.
  assert.deepEqual(s.charts[0].data, [
    [724, 2896],
    [50, 1100],
    [50, 4200],
  ]);
  assert.deepEqual(
    s.charts[1].series.map((x) => x.label),
    ['delivered to the hits (measured)', 'break-even (modelled)'],
  );
  assert.deepEqual(s.charts[1].data, [
    [724, 2896],
    [null, 2],
    [null, 0.5],
  ]); // the bin without hits has no rate
  // Percentiles come from HDR histograms (3 significant digits): 1,100 ms reads back as 1,100.8, 4,200 as 4,202.5.
  assert.deepEqual(s.tables[0].rows, [
    ['all', '2', '1', '50.0 / 1100.8 / 1100.8', '50.0 / 4202.5 / 4202.5', '3.82 / 3.82', '0.0 %', '2.00', '0.50'],
    ['batch', '2', '1', '50.0 / 1100.8 / 1100.8', '50.0 / 4202.5 / 4202.5', '3.82 / 3.82', '0.0 %', '2.00', '0.50'],
  ]);
  assert.deepEqual(s.notes, []);
});

test('runs without the block are named; a run that was not modelled says why', () => {
  const notModelled = JSON.parse(
    JSON.stringify(
      buildResultsJson({ ...runResultFixture(), ttftModelled: { notModelled: 'trace mode: no load time is measured (null tiers)' } }),
    ),
  ) as unknown;
  const s = ttftSection([loaded(docWithTtft(), 'a.json'), loaded(fixtureDoc(), 'b.json'), loaded(notModelled, 'c.json')]);
  assert.deepEqual(s.notes, [
    'c.json: not modelled (trace mode: no load time is measured (null tiers)).',
    'Modelled TTFT: not recorded in b.json.',
  ]);
  assert.equal(s.tables[0].header[0], 'run');
  assert.equal(s.charts.length, 2);
  const alone = ttftSection([loaded(fixtureDoc(), 'b.json')]);
  assert.deepEqual([alone.charts, alone.tables, alone.notes], [[], [], ['Modelled TTFT: not recorded in this file.']]);
});
