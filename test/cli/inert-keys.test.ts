import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../../src/cli/config-file.js';

test('config keys that change nothing are reported, keys that act are not', () => {
  const loaded = parseConfigText(
    [
      'gpu_backend:',
      '  memory_fraction: 0.5',
      'prefix_cache:',
      '  min_prefix_length: 10',
      '  system_prompt_hit_probability: 0.3',
      'decode:',
      '  batch_size: 16',
    ].join('\n'),
    'test.yaml',
  );
  assert.equal(loaded.warnings.length, 2);
  assert.match(loaded.warnings[0] ?? '', /'gpu_backend' has no effect/);
  assert.match(loaded.warnings[1] ?? '', /'prefix_cache.min_prefix_length' has no effect/);
  assert.equal(loaded.settings.decode.batchSize, 16);
  assert.equal(loaded.settings.prefixCache.systemPromptHitProbability, 0.3);
  assert.deepEqual(parseConfigText('decode:\n  batch_size: 8\n', 't.yaml').warnings, []);
});
