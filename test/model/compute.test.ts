import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  breakEvenBytesPerSec,
  effectiveFlopsPerSec,
  prefillFlops,
  prefillSeconds,
  prefillShapeOf,
  requestTtft,
} from '../../src/model/compute.js';
import type { ComputeBudget, PrefillShape } from '../../src/model/compute.js';
import { GPU_PROFILE_KEYS, GPU_PROFILES, gpuProfileOf } from '../../src/model/gpu-profiles.js';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import type { ModelConfig } from '../../src/model/models.js';

function model(key: string): ModelConfig {
  const m = BUILTIN_MODELS.get(key);
  assert.ok(m, `model ${key} exists`);
  return m;
}

function shape(key: string): PrefillShape {
  const s = prefillShapeOf(model(key));
  assert.ok(s, `model ${key} has a compute shape`);
  return s;
}

const h100 = (mfu = 0.5, tensorParallel = 1): ComputeBudget => ({ profile: GPU_PROFILES['h100-sxm'], mfu, tensorParallel });

test('the shapes of llama3.1-8b and -70b: active parameters, layers, attention widths', () => {
  assert.deepEqual(shape('llama3.1-8b'), { activeParams: 8_030_000_000, layers: 32, qkWidth: 4096, vWidth: 4096 });
  assert.deepEqual(shape('llama3.1-70b-instruct'), { activeParams: 70_600_000_000, layers: 80, qkWidth: 8192, vWidth: 8192 });
  // DeepSeek V3 attends with 128 heads of 192 (query/key) and 128 (value); 37 B of its 671 B are active.
  assert.deepEqual(shape('deepseek-v3'), { activeParams: 37_000_000_000, layers: 61, qkWidth: 24576, vWidth: 16384 });
  // qwen3-32b's head dim is 128 (not hidden / heads = 80): 64 × 128.
  assert.equal(shape('qwen3-32b').qkWidth, 8192);
  assert.equal(shape('gpt-oss-120b').activeParams, 5_100_000_000);
});

test('every built-in model has parameter counts; a model without them is not modelled', () => {
  for (const m of BUILTIN_MODELS.values()) assert.ok(prefillShapeOf(m) !== undefined, m.key);
  const { compute: _c, ...bare } = model('llama3.1-8b');
  assert.equal(prefillShapeOf(bare), undefined);
});

// llama3.1-8b: 2 × active params = 2 × 8.03e9 = 1.606e10 FLOPs per token;
// attention factor 2 × layers × (qk + v) = 2 × 32 × (4096 + 4096) = 524,288 FLOPs per key scored.
test('llama3.1-8b prefill FLOPs at 1k, 8k and 32k tokens (hand-computed)', () => {
  const s = shape('llama3.1-8b');
  // 1,024: weights 1.606e10 × 1,024 = 16,445,440,000,000; keys 1,024 × 1,025 / 2 = 524,800;
  // attention 524,288 × 524,800 = 275,146,342,400; total 16,720,586,342,400 (attention 1.6 %).
  assert.equal(prefillFlops(s, 1024), 16_720_586_342_400);
  // 8,192: weights 131,563,520,000,000; keys 8,192 × 8,193 / 2 = 33,558,528;
  // attention 524,288 × 33,558,528 = 17,594,333,528,064; total 149,157,853,528,064 (11.8 %).
  assert.equal(prefillFlops(s, 8192), 149_157_853_528_064);
  // 32,768: weights 526,254,080,000,000; keys 32,768 × 32,769 / 2 = 536,887,296;
  // attention 524,288 × 536,887,296 = 281,483,566,645,248; total 807,737,646,645,248 (34.8 %).
  assert.equal(prefillFlops(s, 32768), 807_737_646_645_248);
});

// llama3.1-70b: 2 × 70.6e9 = 1.412e11 FLOPs per token; attention factor 2 × 80 × (8192 + 8192) = 2,621,440.
test('llama3.1-70b prefill FLOPs at 1k, 8k and 32k tokens (hand-computed)', () => {
  const s = shape('llama3.1-70b-instruct');
  // 1,024: 1.412e11 × 1,024 = 144,588,800,000,000; 2,621,440 × 524,800 = 1,375,731,712,000;
  // total 145,964,531,712,000.
  assert.equal(prefillFlops(s, 1024), 145_964_531_712_000);
  // 8,192: 1,156,710,400,000,000 + 2,621,440 × 33,558,528 = 87,971,667,640,320 → 1,244,682,067,640,320.
  assert.equal(prefillFlops(s, 8192), 1_244_682_067_640_320);
  // 32,768: 4,626,841,600,000,000 + 2,621,440 × 536,887,296 = 1,407,417,833,226,240 → 6,034,259,433,226,240.
  assert.equal(prefillFlops(s, 32768), 6_034_259_433_226_240);
});

test('a cached prefix: prefilling h then m after it costs what h + m from scratch does', () => {
  const s = shape('llama3.1-8b');
  // m = 1,024 after 7,168 cached: keys 1,024 × 7,168 + 524,800 = 7,864,832;
  // 1.606e10 × 1,024 + 524,288 × 7,864,832 = 16,445,440,000,000 + 4,123,437,039,616 = 20,568,877,039,616.
  assert.equal(prefillFlops(s, 1024, 7168), 20_568_877_039_616);
  assert.equal(prefillFlops(s, 7168) + prefillFlops(s, 1024, 7168), prefillFlops(s, 8192));
  assert.equal(prefillFlops(s, 0, 5000), 0);
});

test('seconds = FLOPs ÷ (peak × MFU × tensor-parallel ranks)', () => {
  const s = shape('llama3.1-8b');
  // H100 SXM 989 TFLOP/s dense BF16 × 0.5 = 4.945e14 FLOP/s; 16,720,586,342,400 / 4.945e14 = 0.033813… s.
  assert.equal(effectiveFlopsPerSec(h100()), 494.5e12);
  assert.ok(Math.abs(prefillSeconds(s, h100(), 1024) - 0.0338131169714864) < 1e-15);
  // Two ranks halve it; MFU 0.25 doubles it.
  assert.ok(Math.abs(prefillSeconds(s, h100(0.5, 2), 1024) - 0.0338131169714864 / 2) < 1e-15);
  assert.ok(Math.abs(prefillSeconds(s, h100(0.25), 1024) - 0.0338131169714864 * 2) < 1e-15);
});

test('break-even read bandwidth: bytes per rank ÷ compute time, independent of tensor parallelism', () => {
  const m = model('llama3.1-8b');
  const s = shape('llama3.1-8b');
  // 1,024 tokens × 131,072 B = 134,217,728 B in 0.033813… s → 3.969 GB/s.
  const at1k = breakEvenBytesPerSec(m, s, h100(), 1024);
  assert.ok(Math.abs(at1k - 134_217_728 / 0.0338131169714864) < 1);
  assert.equal(Math.round(at1k / 1e6), 3969);
  // 8,192 tokens: 1,073,741,824 B in 0.301634 s → 3.560 GB/s: longer prefixes are costlier per token.
  assert.equal(Math.round(breakEvenBytesPerSec(m, s, h100(), 8192) / 1e6), 3560);
  assert.ok(Math.abs(breakEvenBytesPerSec(m, s, h100(0.5, 4), 1024) - at1k) < 1e-3);
});

test('GPU profiles: dense BF16 peaks of the data sheets', () => {
  assert.deepEqual(GPU_PROFILE_KEYS, ['a100', 'h100-sxm', 'h200', 'b200', 'l40s']);
  assert.deepEqual(
    GPU_PROFILE_KEYS.map((k) => GPU_PROFILES[k].bf16DenseTflops),
    [312, 989, 989, 2250, 362.05],
  );
  assert.equal(gpuProfileOf('h200')?.name, 'NVIDIA H200 SXM');
  assert.equal(gpuProfileOf('none'), undefined);
  assert.equal(gpuProfileOf('toString'), undefined);
});

test('requestTtft: offload = queue + load + compute after the hit; recompute = queue + compute of all', () => {
  const s = shape('llama3.1-8b');
  const f = requestTtft(s, h100(), { queueMs: 5, promptTokens: 8192, hitTokens: 7168, hitLoadMs: 100 });
  assert.ok(Math.abs(f.offloadMs - (105 + 41.59530240569464)) < 1e-9);
  assert.ok(Math.abs(f.recomputeMs - (5 + 301.63367750872396)) < 1e-9);
  assert.ok(Math.abs(f.hitComputeMs - 260.0383751030293) < 1e-9);
  // The saving is exactly the hit tokens' compute: recompute − offload = hitCompute − load.
  assert.ok(Math.abs(f.recomputeMs - f.offloadMs - (f.hitComputeMs - 100)) < 1e-9);
  // No hit: both the same. A hit count above the prompt is capped at the prompt.
  const none = requestTtft(s, h100(), { queueMs: 2, promptTokens: 1024, hitTokens: 0, hitLoadMs: 0 });
  assert.equal(none.offloadMs, none.recomputeMs);
  assert.equal(requestTtft(s, h100(), { queueMs: 0, promptTokens: 10, hitTokens: 50, hitLoadMs: 1 }).offloadMs, 1);
});
