// The modelled-TTFT block of the results file and its console section, from a hand-made run: three
// requests (no hit; a hit that wins 80 → 40 ms; a hit that loses 100 → 150 ms).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TtftMetrics } from '../../src/metrics/ttft.js';
import type { TtftModelled, TtftSetup } from '../../src/metrics/ttft.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { formatSummary } from '../../src/report/console.js';
import { ttftLines } from '../../src/report/console-ttft.js';
import { TTFT_NOTE } from '../../src/report/ttft-json.js';
import { aggregateTable } from '../../src/report/aggregate.js';
import { formatCompareTable } from '../../src/report/html/compare-table.js';
import { runResultFixture } from './fixtures.js';
import { loaded } from './html/docs.js';
import { assertValidResults } from './validate-results.js';
import { ttftSample } from '../metrics/ttft-sample.js';

const SETUP: TtftSetup = {
  gpuProfile: 'h100-sxm',
  gpuName: 'NVIDIA H100 SXM',
  bf16DenseTflops: 989,
  mfu: 0.5,
  tensorParallel: 1,
  activeParams: 8_030_000_000,
  kvBytesPerTokenPerRank: 100,
  breakEven: [
    { contextTokens: 1024, bytesPerSec: 3.969e9 },
    { contextTokens: 8192, bytesPerSec: 3.56e9 },
  ],
};

const sample = ttftSample;

function modelled(): TtftModelled {
  const m = new TtftMetrics();
  m.record(sample({ promptTokens: 1000 }));
  m.record(sample({ hitTokens: 2000, hitBytes: 200_000, hitLoadMs: 10, offloadMs: 40, recomputeMs: 80, hitComputeMs: 45 }));
  m.record(
    sample({ qos: 'interactive', hitTokens: 1000, hitBytes: 100_000, hitLoadMs: 100, offloadMs: 150, recomputeMs: 100, hitComputeMs: 20 }),
  );
  return { setup: SETUP, figures: m.snapshot() };
}

const near = (a: number | null | undefined, b: number, tol: number): boolean => a !== null && a !== undefined && Math.abs(a - b) <= tol;

test('kvcache_bench.ttft_modelled: setup, shares, rates and context bins; the file validates', () => {
  const doc = buildResultsJson({ ...runResultFixture(), ttftModelled: modelled() });
  assertValidResults(doc);
  const t = doc.kvcache_bench.ttft_modelled;
  assert.ok(t !== undefined && !('not_modelled' in t));
  assert.equal(t.note, TTFT_NOTE);
  assert.deepEqual(
    [t.gpu_profile, t.bf16_dense_tflops, t.mfu, t.tensor_parallel, t.active_params, t.kv_bytes_per_token_per_rank],
    ['h100-sxm', 989, 0.5, 1, 8_030_000_000, 100],
  );
  assert.deepEqual(t.break_even_read_bytes_per_sec, [
    { context_tokens: 1024, bytes_per_sec: 3.969e9 },
    { context_tokens: 8192, bytes_per_sec: 3.56e9 },
  ]);
  const o = t.overall;
  assert.deepEqual([o.requests, o.requests_with_hits, o.load_slower_requests, o.load_slower_share], [3, 2, 1, 0.5]);
  assert.deepEqual([o.prompt_tokens, o.hit_tokens], [7000, 3000]);
  // 300,000 B in 110 ms = 2,727,272.7 B/s delivered; their compute 65 ms → break-even 4,615,384.6 B/s.
  assert.ok(near(o.delivered_read_bytes_per_sec, 300_000 / 0.11, 1e-6));
  assert.ok(near(o.break_even_read_bytes_per_sec, 300_000 / 0.065, 1e-6));
  // Speedups 2 and 0.667: the low tail is the losing request (HDR histogram, 3 significant digits).
  assert.ok(o.speedup !== null && near(o.speedup.p1, 0.667, 0.001) && near(o.speedup.p99, 2, 0.002));
  assert.ok(near(o.ttft_offload_ms.mean, 80, 1e-9));
  // Per request delivered MB/s: 20 (B) and 1 (C).
  assert.ok(o.delivered_read_mb_per_sec_per_request !== null && near(o.delivered_read_mb_per_sec_per_request.p5, 1, 0.001));
  assert.deepEqual(Object.keys(t.by_qos), ['batch', 'interactive']);
  assert.equal(t.by_qos.interactive.load_slower_share, 1);
  assert.deepEqual(
    t.by_context.map((b) => [b.from_tokens, b.to_tokens, b.requests, b.mean_ttft_offload_ms, b.mean_ttft_recompute_ms]),
    [
      [512, 1024, 1, 50, 50],
      [2048, 4096, 2, 95, 90],
    ],
  );
  assert.equal(t.by_context[0].delivered_read_bytes_per_sec, null);
});

test('no block with --gpu-profile none; a reason instead of figures', () => {
  const none = buildResultsJson(runResultFixture());
  assert.equal(none.kvcache_bench.ttft_modelled, undefined);
  assert.ok(!formatSummary(none, 'latency').includes('TIME TO FIRST TOKEN'));
  const doc = buildResultsJson({
    ...runResultFixture(),
    ttftModelled: { notModelled: 'trace mode: no load time is measured (null tiers)' },
  });
  assertValidResults(doc);
  assert.deepEqual(doc.kvcache_bench.ttft_modelled, { not_modelled: 'trace mode: no load time is measured (null tiers)' });
  assert.deepEqual(ttftLines(doc.kvcache_bench.ttft_modelled), [
    '',
    '### TIME TO FIRST TOKEN (MODELLED) ###',
    '  not modelled: trace mode: no load time is measured (null tiers)',
  ]);
});

test('console: the section says the figures are modelled, on which GPU and MFU, per class', () => {
  const doc = buildResultsJson({ ...runResultFixture(), ttftModelled: modelled() });
  const lines = ttftLines(doc.kvcache_bench.ttft_modelled);
  assert.equal(lines[1], '### TIME TO FIRST TOKEN (MODELLED: NVIDIA H100 SXM, 989 TFLOP/s BF16 × MFU 0.5 × TP 1) ###');
  assert.equal(lines[2], '  Modelled, not measured: measured queue wait + measured hit loads + modelled prefill compute (docs/ttft.md).');
  assert.equal(lines[3], '  Break-even read bandwidth per GPU rank: 3.97 GB/s (1k-token prefix), 3.56 GB/s (8k-token prefix)');
  assert.match(lines[5], /^ {2}all +3 +2 .* 1 \(50\.0 %\)$/);
  assert.match(lines[6], /^ {2}batch +2 +1 .* 0 \(0\.0 %\)$/);
  assert.match(lines[7], /^ {2}interactive +1 +1 .* 1 \(100\.0 %\)$/);
  assert.equal(lines[8], '  Storage delivered to the hits: 0.00 GB/s (per request p50 0.00 GB/s); break-even for these hits: 0.00 GB/s');
  assert.ok(formatSummary(doc, 'latency').includes(lines[1]));
});

test('aggregate: the modelled TTFT columns, empty without the block', () => {
  const doc = buildResultsJson({ ...runResultFixture(), ttftModelled: modelled() });
  const t = aggregateTable([
    { path: 'a.json', text: JSON.stringify(doc) },
    { path: 'b.json', text: JSON.stringify(buildResultsJson(runResultFixture())) },
  ]);
  const cell = (row: number, header: string): unknown => t.rows[row][t.headers.indexOf(header)];
  assert.equal(cell(0, 'Modelled TTFT GPU Profile'), 'h100-sxm');
  assert.equal(cell(0, 'Modelled TTFT MFU'), 0.5);
  assert.equal(cell(0, 'Modelled TTFT Offload Lost Rate'), 0.5);
  assert.equal(cell(0, 'Modelled TTFT Hits Read (bytes/s)'), 2_727_273); // 300,000 B ÷ 0.11 s, a whole number of bytes
  assert.equal(cell(0, 'Modelled TTFT Speedup P5 Ratio'), 0.667);
  assert.equal(cell(1, 'Modelled TTFT GPU Profile'), null);
  assert.equal(cell(1, 'Modelled TTFT Offload P50 (ms)'), null);
});

test('compare: a second table of modelled figures, after the measured one, naming each run’s GPU and MFU', () => {
  const a = buildResultsJson({ ...runResultFixture(), ttftModelled: modelled() });
  const text = formatCompareTable([loaded(a, 'a.json'), loaded(a, 'b.json')]);
  const lines = text.split('\n');
  const title = lines.findIndex((l) => l.startsWith('Modelled TTFT (MODELLED, not measured'));
  assert.ok(title > lines.findIndex((l) => l.startsWith('Validity')));
  assert.match(lines[title], /#1 h100-sxm, MFU 0\.5, TP 1; #2 h100-sxm, MFU 0\.5, TP 1\):$/);
  assert.match(lines[title + 1], /^Figure +Unit +#1 +#2 +#2 ÷ #1$/);
  assert.match(lines[title + 2], /^TTFT with offload p50 +ms +/);
  assert.match(text, /^Offload lost +% of hits +50\.0 +50\.0 +×1\.00$/m);
  // Without the block in any run: no second table.
  const plain = buildResultsJson(runResultFixture());
  assert.ok(!formatCompareTable([loaded(plain, 'a.json'), loaded(plain, 'b.json')]).includes('Modelled TTFT'));
});
