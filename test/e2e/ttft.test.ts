// The modelled TTFT (issue 23) through the real command: on by default (h100-sxm, MFU 0.5), with the
// profile and MFU given, off with --gpu-profile none, and "not modelled" in trace mode. Every results
// file is checked against the published JSON Schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inTempDir, runCli, smallWorkloadArgs } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';

async function run(args: readonly string[], storage = true): Promise<{ json: ResultsDocument; stdout: string }> {
  return inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const where = storage ? ['--cache-dir', join(dir, 'c'), '--create-cache-dir'] : ['--io-trace-log', join(dir, 't.csv')];
    const r = await runCli([
      ...(await smallWorkloadArgs(dir)),
      '--num-users',
      '2',
      '--duration',
      '2',
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0',
      ...where,
      '--seed',
      '7',
      '--output',
      out,
      ...args,
    ]);
    assert.equal(r.code, 0, r.stderr);
    return { json: await readValidResults(out), stdout: r.stdout };
  });
}

test('default: the modelled block on an H100 SXM at MFU 0.5, its console section, every completed request in it', async () => {
  const { json, stdout } = await run([]);
  const t = json.kvcache_bench.ttft_modelled;
  assert.ok(t !== undefined && 'overall' in t);
  assert.deepEqual([t.gpu_profile, t.bf16_dense_tflops, t.mfu, t.tensor_parallel, t.active_params], ['h100-sxm', 989, 0.5, 1, 1e9]);
  assert.equal(t.kv_bytes_per_token_per_rank, 24576);
  assert.equal(t.overall.requests, json.requests_completed);
  assert.equal(
    t.by_context.reduce((n, b) => n + b.requests, 0),
    json.requests_completed,
  );
  assert.match(stdout, /### TIME TO FIRST TOKEN \(MODELLED: NVIDIA H100 SXM, 989 TFLOP\/s BF16 × MFU 0\.5 × TP 1\) ###/);
});

test('--gpu-profile b200 --mfu 0.25 --tensor-parallel 2 are what the block assumes', async () => {
  const { json } = await run(['--gpu-profile', 'b200', '--mfu', '0.25', '--num-gpus', '2', '--tensor-parallel', '2']);
  const t = json.kvcache_bench.ttft_modelled;
  assert.ok(t !== undefined && 'overall' in t);
  assert.deepEqual(
    [t.gpu_profile, t.bf16_dense_tflops, t.mfu, t.tensor_parallel, t.kv_bytes_per_token_per_rank],
    ['b200', 2250, 0.25, 2, 12288],
  );
});

test('--gpu-profile none: no block and no section; trace mode: not modelled', async () => {
  const none = await run(['--gpu-profile', 'none']);
  assert.equal(none.json.kvcache_bench.ttft_modelled, undefined);
  assert.ok(!none.stdout.includes('TIME TO FIRST TOKEN'));
  const trace = await run([], false);
  assert.deepEqual(trace.json.kvcache_bench.ttft_modelled, { not_modelled: 'trace mode: no load time is measured (null tiers)' });
});

test('a config-file model with total_params and active_params is modelled as a built-in is (issue 35)', async () => {
  const config = await inTempDir(async (dir) => {
    const path = join(dir, 'models.yaml');
    writeFileSync(
      path,
      'model_configs:\n  my-moe:\n    num_layers: 4\n    hidden_dim: 512\n    num_heads: 8\n    kv_heads: 2\n' +
        '    total_params: 2.4e9\n    active_params: 600000000\n',
    );
    return run(['--config', path, '--model', 'my-moe']);
  });
  const t = config.json.kvcache_bench.ttft_modelled;
  assert.ok(t !== undefined && 'overall' in t, JSON.stringify(t));
  assert.equal(t.active_params, 600_000_000);
  assert.equal(t.kv_bytes_per_token_per_rank, 4 * 2 * 64 * 2 * 2);
  assert.equal(t.overall.requests, config.json.requests_completed);
  assert.deepEqual(
    [config.json.kvcache_bench.effective_config.model.total_params, config.json.kvcache_bench.effective_config.model.active_params],
    [2_400_000_000, 600_000_000],
  );
});
