import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import { computeTable, modelRow, modelsTable } from '../../src/cli/models.js';
import { runCli } from '../e2e/run-cli.js';

test('modelRow: tiny-1b (GQA) and deepseek-v3 (MLA) sizes', () => {
  const { break_even_bytes_per_sec: _b, ...tinyRow } = modelRow(BUILTIN_MODELS.get('tiny-1b')!);
  assert.deepEqual(tinyRow, {
    key: 'tiny-1b',
    name: 'Tiny 1B',
    attention: 'gqa',
    layers: 12,
    kv_heads: 4,
    head_dim: 128,
    dtype: 'float16',
    dtype_bytes: 2,
    kv_bytes_per_token: 24576, // 12 × 4 × 128 × 2 (K, V) × 2 bytes
    entry_1k_tokens_bytes: 25165824,
    entry_8k_tokens_bytes: 201326592,
    total_params: 1_000_000_000,
    active_params: 1_000_000_000,
  });
  const ds = modelRow(BUILTIN_MODELS.get('deepseek-v3')!);
  // MLA: 61 layers × (512 latent + 64 rope) × 2 bytes.
  assert.deepEqual([ds.kv_heads, ds.head_dim, ds.kv_bytes_per_token, ds.entry_1k_tokens_bytes], [1, 576, 70272, 71958528]);
});

test('modelRow: break-even read bandwidth per GPU profile for an 8k-token prefix at MFU 0.5', () => {
  const llama = modelRow(BUILTIN_MODELS.get('llama3.1-8b')!);
  assert.deepEqual([llama.total_params, llama.active_params], [8_030_000_000, 8_030_000_000]);
  // 1,073,741,824 B ÷ (149,157,853,528,064 FLOPs ÷ (989e12 × 0.5)) = 3.5598 GB/s on an H100 SXM; the
  // others scale with their peaks: A100 312/989, B200 2250/989, L40S 362.05/989.
  const be = llama.break_even_bytes_per_sec!;
  assert.deepEqual(
    Object.entries(be).map(([k, v]) => [k, Math.round(v / 1e6)]),
    [
      ['a100', 1123],
      ['h100-sxm', 3560],
      ['h200', 3560],
      ['b200', 8099],
      ['l40s', 1303],
    ],
  );
  const ds = modelRow(BUILTIN_MODELS.get('deepseek-v3')!);
  assert.deepEqual([ds.total_params, ds.active_params], [671_000_000_000, 37_000_000_000]);
});

test('computeTable: parameters in billions and GB/s per profile, aligned', () => {
  const lines = computeTable([...BUILTIN_MODELS.values()].map(modelRow)).split('\n');
  assert.match(lines[3], /^model +params \(B\) +active \(B\) +a100 +h100-sxm +h200 +b200 +l40s$/);
  const llama = lines.find((l) => l.startsWith('llama3.1-8b '))!;
  assert.deepEqual(llama.split(/\s+/), ['llama3.1-8b', '8.03', '8.03', '1.12', '3.56', '3.56', '8.10', '1.30']);
  assert.equal(lines.length, 5 + BUILTIN_MODELS.size);
});

test('modelsTable: one aligned line per model, numbers right-aligned', () => {
  const rows = [...BUILTIN_MODELS.values()].map(modelRow);
  const lines = modelsTable(rows).split('\n');
  assert.equal(lines.length, 2 + BUILTIN_MODELS.size);
  assert.match(lines[0], /^model {18}attention {2}layers {2}KV heads/);
  const tiny = lines.find((l) => l.startsWith('tiny-1b '))!;
  assert.deepEqual(tiny.split(/\s+/), ['tiny-1b', 'gqa', '12', '4', '128', '2', '24,576', '24.00', '192.00']);
  // Every line has the same width up to its last column: the table is aligned.
  assert.equal(new Set(lines.map((l) => l.length)).size, 1);
});

test('kv-cache models: the table, --json, and a bad argument (exit 2)', async () => {
  const text = await runCli(['models']);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^llama3\.1-8b +gqa +32 +8 +128 +2 +131,072 +128\.00 +1024\.00$/m);
  assert.match(text.stdout, /^llama3\.1-8b +8\.03 +8\.03 +1\.12 +3\.56 +3\.56 +8\.10 +1\.30$/m);
  const json = await runCli(['models', '--json']);
  assert.equal(json.code, 0);
  const rows = JSON.parse(json.stdout) as Array<{ key: string; kv_bytes_per_token: number }>;
  assert.deepEqual(
    rows.map((r) => r.key),
    [...BUILTIN_MODELS.keys()],
  );
  assert.equal(rows.find((r) => r.key === 'llama2-7b')?.kv_bytes_per_token, 524288);
  const bad = await runCli(['models', '--csv']);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, "kv-cache models: error: Invalid configuration: unknown option '--csv'\nUsage: kv-cache models [--json]\n");
});
