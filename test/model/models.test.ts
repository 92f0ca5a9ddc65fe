import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_MODELS, bytesPerElement, entryBytes, headDim, kvBytesPerToken, withModelOverrides } from '../../src/model/models.js';
import type { ModelConfig } from '../../src/model/models.js';
import { MiB } from '../../src/util/units.js';

function model(key: string): ModelConfig {
  const m = BUILTIN_MODELS.get(key);
  assert.ok(m, `model ${key} exists`);
  return m;
}

test('exactly the nine built-in models', () => {
  assert.deepEqual([...BUILTIN_MODELS.keys()].sort(), [
    'deepseek-v3',
    'gpt-oss-120b',
    'gpt-oss-20b',
    'llama2-7b',
    'llama3.1-70b-instruct',
    'llama3.1-8b',
    'mistral-7b',
    'qwen3-32b',
    'tiny-1b',
  ]);
});

test('dtype sizes; unknown dtypes count as 2 bytes', () => {
  assert.equal(bytesPerElement(model('llama3.1-8b').dtype), 2);
  assert.equal(bytesPerElement('float32'), 4);
  assert.equal(bytesPerElement('bfloat16'), 2);
  assert.equal(bytesPerElement('int8'), 1);
  assert.equal(bytesPerElement('fp8-weird'), 2);
});

test('MHA/GQA bytes per token = layers × kv_heads × head_dim × 2 × bytes', () => {
  for (const key of ['llama3.1-8b', 'tiny-1b']) {
    const m = model(key);
    assert.equal(kvBytesPerToken(m), m.numLayers * m.kvHeads * headDim(m) * 2 * bytesPerElement(m.dtype));
  }
});

test('bytes per token of every built-in model', () => {
  const expected: Record<string, number> = {
    'tiny-1b': 24576,
    'mistral-7b': 131072,
    'llama2-7b': 524288,
    'llama3.1-8b': 131072,
    'llama3.1-70b-instruct': 327680,
    'qwen3-32b': 262144,
    'gpt-oss-120b': 73728,
    'gpt-oss-20b': 49152,
    'deepseek-v3': 70272,
  };
  for (const [key, bpt] of Object.entries(expected)) assert.equal(kvBytesPerToken(model(key)), bpt, key);
});

test('head-dim overrides win over hidden/heads (qwen3-32b would be 80 without)', () => {
  const q = model('qwen3-32b');
  assert.equal(headDim(q), 128);
  assert.equal(headDim({ ...q, kvDimPerHead: undefined }), 80);
});

test('MLA uses layers × (latent + rope) × bytes, ignoring kv_heads', () => {
  const d = model('deepseek-v3');
  assert.equal(kvBytesPerToken(d), 61 * (512 + 64) * 2);
  assert.equal(kvBytesPerToken({ ...d, kvHeads: 1 }), kvBytesPerToken(d));
});

test('tiny-1b entry sizes used by the eviction tests', () => {
  const t = model('tiny-1b');
  assert.equal(entryBytes(t, 10), 245760);
  assert.equal(entryBytes(t, 200), 4.6875 * MiB);
  assert.ok(Math.abs(entryBytes(t, 1000) / MiB - 23.4) < 0.05);
});

test('tensor parallel divides the entry with integer division', () => {
  const d = model('deepseek-v3');
  assert.equal(entryBytes(d, 3, 4), Math.floor((70272 * 3) / 4));
});

test('configuration can add or override models without code changes', () => {
  const custom: ModelConfig = { ...model('tiny-1b'), key: 'my-model', name: 'Mine', numLayers: 2 };
  const table = withModelOverrides(BUILTIN_MODELS, [custom, { ...model('tiny-1b'), numLayers: 24 }]);
  assert.equal(kvBytesPerToken(table.get('my-model')!), 2 * 4 * 128 * 2 * 2);
  assert.equal(kvBytesPerToken(table.get('tiny-1b')!), 2 * 24576);
  assert.equal(kvBytesPerToken(model('tiny-1b')), 24576); // the built-in table is untouched
});
