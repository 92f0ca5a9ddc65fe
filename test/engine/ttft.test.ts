// The run's TTFT model: when it models nothing (and why), its setup, and one request's figures on
// llama3.1-8b / H100 SXM / MFU 0.5 computed by hand (test/model/compute.test.ts has the FLOPs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunTtft } from '../../src/engine/ttft.js';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import type { ModelConfig } from '../../src/model/models.js';

const LLAMA8: ModelConfig = BUILTIN_MODELS.get('llama3.1-8b')!; // present in the built-in table
const settings = { gpuProfile: 'h100-sxm', mfu: 0.5, tensorParallel: 1, model: LLAMA8, traceMode: false };

function model(over: Partial<typeof settings> = {}): RunTtft {
  const t = RunTtft.of({ ...settings, ...over });
  assert.ok(t instanceof RunTtft);
  return t;
}

test('--gpu-profile none models nothing; trace mode and a model without parameter counts say why', () => {
  assert.equal(RunTtft.of({ ...settings, gpuProfile: 'none' }), undefined);
  assert.deepEqual(RunTtft.of({ ...settings, traceMode: true }), { notModelled: 'trace mode: no load time is measured (null tiers)' });
  const { compute: _c, ...bare } = LLAMA8;
  assert.deepEqual(RunTtft.of({ ...settings, model: { ...bare, key: 'mine' } }), {
    notModelled: 'model mine has no parameter counts (give its model_configs entry total_params and active_params)',
  });
});

test('setup: profile, MFU, ranks, bytes per token per rank and the break-even bandwidths', () => {
  const r = model({ tensorParallel: 2 }).result();
  assert.ok('setup' in r);
  const { breakEven, ...rest } = r.setup;
  assert.deepEqual(rest, {
    gpuProfile: 'h100-sxm',
    gpuName: 'NVIDIA H100 SXM',
    bf16DenseTflops: 989,
    mfu: 0.5,
    tensorParallel: 2,
    activeParams: 8_030_000_000,
    kvBytesPerTokenPerRank: 65536,
  });
  // 1k: 134,217,728 B ÷ 0.0338131 s = 3.969 GB/s; 8k: 3.560 GB/s; 32k: 4,294,967,296 B ÷ 1.633444 s = 2.629 GB/s.
  assert.deepEqual(
    breakEven.map((b) => [b.contextTokens, Math.round(b.bytesPerSec / 1e6)]),
    [
      [1024, 3969],
      [8192, 3560],
      [32768, 2629],
    ],
  );
});

test('one request: 7,168 of 8,192 tokens loaded in 100 ms after 5 ms in the queue', () => {
  const t = model();
  t.record('batch', 5, { promptTokens: 8192, hitTokens: 7168, hitLoadMs: 100 });
  const r = t.result();
  assert.ok('figures' in r);
  const o = r.figures.overall;
  // offload: 5 + 100 + compute of 1,024 after 7,168 (20,568,877,039,616 FLOPs ÷ 4.945e14 = 41.595 ms) = 146.595 ms;
  // recompute: 5 + 149,157,853,528,064 ÷ 4.945e14 = 5 + 301.634 ms; the hits' own compute 260.038 ms > 100 ms: offload wins.
  assert.ok(Math.abs(o.offload.mean - (105 + 41.59530240569464)) < 1e-9);
  assert.ok(Math.abs(o.recompute.mean - (5 + 301.63367750872396)) < 1e-9);
  assert.ok(Math.abs(o.hitComputeMs - 260.0383751030293) < 1e-9);
  assert.deepEqual([o.requests, o.requestsWithHits, o.loadSlower, o.hitTokens, o.hitBytes], [1, 1, 0, 7168, 7168 * 131072]);
});

test('loading slower than recomputing: 1,024 tokens loaded in 40 ms, their compute is 33.8 ms', () => {
  const t = model();
  t.record('interactive', 0, { promptTokens: 1024, hitTokens: 1024, hitLoadMs: 40 });
  const r = t.result();
  assert.ok('figures' in r);
  assert.equal(r.figures.overall.loadSlower, 1);
  assert.ok(Math.abs(r.figures.overall.offload.mean - 40) < 1e-9); // nothing left to compute
  assert.ok(Math.abs(r.figures.overall.recompute.mean - 33.813116971486345) < 1e-9);
});
