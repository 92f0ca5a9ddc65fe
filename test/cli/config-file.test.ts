// The YAML config file (the reference's config tests, docs/reference-compat.md#rc-3): defaults without a file, values that override
// them, the strict schema (unknown keys at any depth, wrong types, all problems at once), model_configs,
// and validation_limits that really change the flag checks.
import { test } from 'node:test';
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { defaultConfig, loadConfigFile, parseConfigText } from '../../src/cli/config-file.js';
import { DEFAULT_EVICTION } from '../../src/settings/eviction.js';
import { BUILTIN_MODELS, kvBytesPerToken } from '../../src/model/models.js';
import { prefillShapeOf } from '../../src/model/compute.js';
import { configError, parse, rejection, tempDir, writeYaml } from './helpers.js';

/** The reference test suite's sample file (sections it spells out). */
const SAMPLE = `
user_templates:
  chatbot:
    context_range: [256, 1024]
    generation_range: [50, 150]
    think_time_range: [0.1, 0.5]
  coding:
    context_range: [1024, 4096]
    generation_range: [100, 500]
    think_time_range: [0.2, 1.0]
  document:
    context_range: [2048, 8192]
    generation_range: [200, 800]
    think_time_range: [0.3, 1.5]

qos_profiles:
  interactive:
    target_latency_p95_ms: 50
    target_latency_p99_ms: 100
    target_latency_p999_ms: 150
    target_latency_p9999_ms: 200
    priority: 3
  responsive:
    target_latency_p95_ms: 100
    target_latency_p99_ms: 200
    target_latency_p999_ms: 350
    target_latency_p9999_ms: 500
    priority: 2
  batch:
    target_latency_p95_ms: 1000
    target_latency_p99_ms: 5000
    target_latency_p999_ms: 7500
    target_latency_p9999_ms: 10000
    priority: 1

qos_distribution:
  interactive_probability: 0.15
  responsive_threshold: 0.50

eviction:
  max_recursion_depth: 10
  target_usage_ratio: 0.8
  large_entry_limit_ratio: 0.95
  max_evictions_hard_cap: 5000
  max_evictions_min: 1000
`;

test('no config file: every section has the documented defaults', () => {
  const { settings: s } = parse([]).config;
  assert.deepEqual(s.userTemplates.chatbot, { contextRange: [512, 4096], generationRange: [50, 200], thinkTimeRange: [0.1, 0.5] });
  assert.deepEqual(s.userTemplates.coding, { contextRange: [4096, 25000], generationRange: [100, 500], thinkTimeRange: [0.2, 1.0] });
  assert.deepEqual(s.userTemplates.document, { contextRange: [4096, 16384], generationRange: [200, 800], thinkTimeRange: [0.3, 1.5] });
  assert.deepEqual(s.generationTiming, { none: 0, fast: 0.002, realistic: 0.03 });
  assert.deepEqual(s.qosProfiles, {
    interactive: { priority: 3, targetLatencyP95Ms: 50, targetLatencyP99Ms: 100, targetLatencyP999Ms: 150, targetLatencyP9999Ms: 200 },
    responsive: { priority: 2, targetLatencyP95Ms: 100, targetLatencyP99Ms: 200, targetLatencyP999Ms: 350, targetLatencyP9999Ms: 500 },
    batch: { priority: 1, targetLatencyP95Ms: 1000, targetLatencyP99Ms: 5000, targetLatencyP999Ms: 7500, targetLatencyP9999Ms: 10000 },
  });
  assert.deepEqual(s.qosDistribution, { interactiveProbability: 0.15, responsiveThreshold: 0.5 });
  assert.deepEqual(s.eviction, DEFAULT_EVICTION);
  assert.deepEqual(s.gpuBackend, { memoryFraction: 0.9, maxEvictionAttempts: 100, freeMemoryThreshold: 0.1 });
  assert.deepEqual(s.prefixCache, { minPrefixLength: 50, maxPrefixEntries: 1000, systemPromptHitProbability: 0.2 });
  assert.deepEqual(s.rag, {
    chunkSizeTokens: 512,
    topKChunks: 5,
    maxChunkBytes: 268435456,
    requestProbability: 0.1,
    retrievalDistribution: 'zipfian',
    maxDocuments: 0,
    largeModelDocTokensMin: 1024,
    largeModelDocTokensMax: 4096,
    smallModelDocTokensMin: 4000,
    smallModelDocTokensMax: 12000,
  });
  assert.deepEqual(s.conversation, { maxConversations: 1000, maxTurnsPerConv: 50, endConversationProbability: 0.2 });
  assert.deepEqual(s.autoscaler, { minUsers: 1, maxUsers: 10000, scaleUpFactor: 1.2, scaleDownFactor: 0.8, consecutiveSamplesRequired: 2 });
  assert.deepEqual(s.decode, { batchSize: 32 });
  assert.deepEqual(s.sharegpt, { maxContextTokens: 16384, maxGenerationTokens: 2048, charsPerTokenEstimate: 4 });
  assert.deepEqual(s.saturationDetection, {
    readLatencyP95ThresholdMs: 100,
    writeLatencyP95ThresholdMs: 50,
    queueDepthThreshold: 100,
    historyWindowSize: 10,
  });
  assert.deepEqual(s.validationLimits, { maxUsers: 100000, maxDurationSeconds: 86400, maxGpuMemoryGb: 65536, maxCpuMemoryGb: 131072 });
  assert.deepEqual([...parse([]).config.models.keys()].sort(), [...BUILTIN_MODELS.keys()].sort());
});

test('an empty file is an empty configuration (all defaults)', () => {
  assert.deepEqual(parseConfigText('', 'empty').settings, defaultConfig().settings);
  assert.deepEqual(parseConfigText('# just a comment\n', 'comment').settings, defaultConfig().settings);
});

test(
  'a file whose size stat gives as 0 but which holds data (procfs) is read, so its keys are refused (issue 35)',
  {
    skip: existsSync('/proc/self/status') ? false : 'no /proc/self/status here (not Linux)',
  },
  () => {
    const message = configError(() => loadConfigFile('/proc/self/status')).message;
    assert.match(message, /Unknown configuration key 'Name'/);
    assert.match(message, /Unknown configuration key 'Pid'/);
  },
);

test('a valid file overrides: interactive priority 3, chatbot context range [256, 1024]', () => {
  const path = writeYaml(SAMPLE);
  const { config } = parse(['--config', path]);
  assert.equal(config.settings.qosProfiles.interactive.priority, 3);
  assert.deepEqual(config.settings.userTemplates.chatbot.contextRange, [256, 1024]);
  assert.deepEqual(config.settings.userTemplates.document.contextRange, [2048, 8192]);
  assert.equal(config.settings.rag.topKChunks, 5, 'sections the file omits keep their defaults');
  assert.equal(config.config, path);
});

test('values that differ from the defaults are honoured (interactive_probability, rag, decode)', () => {
  const path = writeYaml(
    'qos_distribution:\n  interactive_probability: 0.5\nrag:\n  top_k_chunks: 7\n  retrieval_distribution: uniform\ndecode:\n  batch_size: 16\n',
  );
  const { settings } = parse(['--config', path]).config;
  assert.equal(settings.qosDistribution.interactiveProbability, 0.5);
  assert.equal(settings.qosDistribution.responsiveThreshold, 0.5);
  assert.equal(settings.rag.topKChunks, 7);
  assert.equal(settings.rag.retrievalDistribution, 'uniform');
  assert.equal(settings.decode.batchSize, 16);
});

test('an unknown top-level section is rejected with "Unknown configuration key"', () => {
  const msg = rejection(['--config', writeYaml('unknown_section:\n  foo: 1\n')]);
  assert.match(msg, /Unknown configuration key 'unknown_section'/);
  assert.match(msg, /config\.yaml/, 'the file is named');
});

test('an unknown nested key is rejected with its full path', () => {
  const msg = rejection(['--config', writeYaml('rag:\n  top_k_chunk: 3\n')]);
  assert.match(msg, /Unknown configuration key 'rag\.top_k_chunk'/);
  assert.match(msg, /top_k_chunks/, 'the valid keys are listed');
  assert.match(
    rejection(['--config', writeYaml('qos_profiles:\n  interactive:\n    target_p95: 3\n')]),
    /Unknown configuration key 'qos_profiles\.interactive\.target_p95'/,
  );
});

test('a wrong type names the key path and the expected type', () => {
  assert.match(
    rejection(['--config', writeYaml('rag:\n  top_k_chunks: many\n')]),
    /'rag\.top_k_chunks' has the wrong type: expected an integer, got string 'many'/,
  );
  assert.match(
    rejection(['--config', writeYaml('qos_profiles:\n  batch:\n    priority: 1.5\n')]),
    /'qos_profiles\.batch\.priority' has the wrong type: expected an integer/,
  );
  assert.match(
    rejection(['--config', writeYaml('user_templates:\n  chatbot:\n    context_range: 512\n')]),
    /'user_templates\.chatbot\.context_range' has the wrong type: expected a \[low, high\] list/,
  );
  assert.match(rejection(['--config', writeYaml('eviction: 3\n')]), /'eviction' has the wrong type: expected a mapping/);
  assert.match(
    rejection(['--config', writeYaml('gpu_backend:\n  memory_fraction: high\n')]),
    /'gpu_backend\.memory_fraction' has the wrong type: expected a number, got string 'high'/,
  );
});

test('out-of-range and malformed values are rejected with their path', () => {
  const msg = rejection([
    '--config',
    writeYaml(
      'qos_distribution:\n  interactive_probability: 1.5\nuser_templates:\n  coding:\n    context_range: [9000, 10]\n    generation_range: [1]\n',
    ),
  ]);
  assert.match(msg, /'qos_distribution\.interactive_probability' must be <= 1/);
  assert.match(msg, /'user_templates\.coding\.context_range' must be ordered \[low, high\]/);
  assert.match(msg, /'user_templates\.coding\.generation_range' must be a \[low, high\] list of exactly 2 values/);
});

test('every problem in the file is reported together, with flag problems', () => {
  const path = writeYaml('bogus: 1\nrag:\n  top_k_chunk: 3\n  top_k_chunks: x\n');
  const e = configError(() => parse(['--config', path, '--num-users', '0']));
  assert.equal(e.problems.length, 4);
  assert.match(e.message, /Unknown configuration key 'bogus'/);
  assert.match(e.message, /Unknown configuration key 'rag\.top_k_chunk'/);
  assert.match(e.message, /'rag\.top_k_chunks' has the wrong type/);
  assert.match(e.message, /num-users must be positive/);
});

test('a missing file, a directory and invalid YAML are clear errors naming the file', () => {
  const dir = tempDir();
  assert.match(rejection(['--config', `${dir}/missing.yaml`]), /config file '.*missing\.yaml' cannot be read: file not found/);
  assert.match(rejection(['--config', dir]), /cannot be read: is a directory/);
  const bad = writeYaml('rag:\n  top_k_chunks: [1\n', 'broken.yaml');
  assert.match(rejection(['--config', bad]), /config file '.*broken\.yaml': invalid YAML: .*line \d+/);
  assert.match(rejection(['--config', writeYaml('a: 1\na: 2\n', 'dup.yaml')]), /dup\.yaml': invalid YAML: Map keys must be unique/);
  assert.throws(() => loadConfigFile(`${dir}/nope.yaml`), /nope\.yaml/);
});

test('model_configs adds a model usable by --model', () => {
  const path = writeYaml(
    'model_configs:\n  my-model:\n    name: My Model\n    num_layers: 4\n    hidden_dim: 512\n    num_heads: 8\n    kv_heads: 2\n    dtype: bfloat16\n',
  );
  assert.match(rejection(['--model', 'my-model']), /unknown model 'my-model'; valid models: .*llama3\.1-8b/);
  const { config } = parse(['--config', path, '--model', 'my-model']);
  assert.equal(config.model.key, 'my-model');
  assert.equal(config.model.name, 'My Model');
  assert.equal(kvBytesPerToken(config.model), 4 * 2 * 64 * 2 * 2);
  assert.ok(config.models.has('tiny-1b'), 'built-ins stay');
  assert.equal(
    config.effective.model !== null && typeof config.effective.model === 'object' && 'kv_bytes_per_token' in config.effective.model,
    true,
  );
});

test('model_configs overrides a built-in field by field', () => {
  const { config } = parse(['--config', writeYaml('model_configs:\n  tiny-1b:\n    dtype: float32\n'), '--model', 'tiny-1b']);
  assert.equal(config.model.dtype, 'float32');
  assert.equal(config.model.numLayers, 12);
  assert.equal(kvBytesPerToken(config.model), 2 * 24576);
});

test('model_configs entries are validated', () => {
  const path = writeYaml(
    'model_configs:\n  half:\n    num_layers: 3\n    heads: 8\n  mla:\n    num_layers: 2\n    hidden_dim: 64\n    num_heads: 2\n    kv_heads: 2\n    attention_type: mla\n  typo:\n    num_layers: two\n    hidden_dim: 64\n    num_heads: 2\n    kv_heads: 2\n    dtype: fp8\n',
  );
  const msg = rejection(['--config', path]);
  assert.match(msg, /Unknown configuration key 'model_configs\.half\.heads'/);
  assert.match(msg, /'model_configs\.half\.hidden_dim' is required for a new model/);
  assert.match(msg, /'model_configs\.mla' needs kv_lora_rank > 0 and qk_rope_head_dim > 0/);
  assert.match(msg, /'model_configs\.typo\.num_layers' has the wrong type/);
  assert.match(msg, /'model_configs\.typo\.dtype' must be one of 'float32', 'float16', 'bfloat16', 'int8'/);
});

test('model_configs total_params and active_params give a custom model the compute shape the built-ins have (issue 35)', () => {
  const shape = 'num_layers: 4\n    hidden_dim: 512\n    num_heads: 8\n    kv_heads: 2';
  const path = writeYaml(
    `model_configs:\n  moe:\n    ${shape}\n    total_params: 2.4e9\n    active_params: 600000000\n` +
      `  dense:\n    ${shape}\n    total_params: 1500000000\n  tiny-1b:\n    dtype: float32\n`,
  );
  const models = parse(['--config', path]).config.models;
  assert.deepEqual(models.get('moe')?.compute, { totalParams: 2_400_000_000, activeParams: 600_000_000 });
  assert.deepEqual(models.get('dense')?.compute, { totalParams: 1_500_000_000, activeParams: 1_500_000_000 });
  assert.deepEqual(models.get('tiny-1b')?.compute, BUILTIN_MODELS.get('tiny-1b')?.compute, 'an override keeps the built-in counts');
  assert.ok(prefillShapeOf(models.get('moe')!) !== undefined);
  const overridden = parse(['--config', writeYaml('model_configs:\n  deepseek-v3:\n    active_params: 40e9\n')]).config.models.get(
    'deepseek-v3',
  );
  assert.deepEqual(overridden?.compute, { ...BUILTIN_MODELS.get('deepseek-v3')?.compute, activeParams: 40e9 });
});

test('model_configs parameter counts are validated: a count, not billions; active within total; active needs a total', () => {
  const shape = 'num_layers: 4\n    hidden_dim: 512\n    num_heads: 8\n    kv_heads: 2';
  const path = writeYaml(
    `model_configs:\n  billions:\n    ${shape}\n    total_params: 8\n  over:\n    ${shape}\n    total_params: 1e9\n    active_params: 2e9\n` +
      `  alone:\n    ${shape}\n    active_params: 1e9\n  words:\n    ${shape}\n    total_params: 8B\n  huge:\n    ${shape}\n    total_params: 1e16\n` +
      `  half:\n    ${shape}\n    total_params: 1.5\n`,
  );
  const msg = rejection(['--config', path]);
  assert.match(
    msg,
    /'model_configs\.billions\.total_params' is 8: a count of parameters, not billions \(8\.03 B is 8030000000 or 8\.03e9\); at least 1,000,000/,
  );
  assert.match(msg, /'model_configs\.over\.active_params' is 2000000000, more than total_params \(1000000000\)/);
  assert.match(msg, /'model_configs\.alone\.active_params' needs total_params \(every parameter of the model\) beside it/);
  assert.match(msg, /'model_configs\.words\.total_params' has the wrong type: expected an integer, got string '8B'/);
  assert.match(msg, /'model_configs\.huge\.total_params' must be <= 1000000000000000, got number 10000000000000000/);
  assert.match(msg, /'model_configs\.half\.total_params' has the wrong type: expected an integer, got number 1\.5/);
});

test('validation_limits change the flag limits (lower and raise)', () => {
  const lower = writeYaml(
    'validation_limits:\n  max_users: 10\n  max_duration_seconds: 120\n  max_gpu_memory_gb: 8\n  max_cpu_memory_gb: 64\n',
  );
  const e = configError(() =>
    parse(['--config', lower, '--num-users', '11', '--duration', '121', '--gpu-mem-gb', '16', '--cpu-mem-gb', '65']),
  );
  assert.match(e.message, /num-users exceeds limit of 10/);
  assert.match(e.message, /duration exceeds limit of 120 s/);
  assert.match(e.message, /gpu-mem-gb exceeds limit of 8/);
  assert.match(e.message, /cpu-mem-gb exceeds limit of 64/);
  const raise = writeYaml('validation_limits:\n  max_users: 200000\n  max_duration_seconds: 172800\n');
  const { config } = parse(['--config', raise, '--num-users', '150000', '--duration', '100000']);
  assert.equal(config.numUsers, 150000);
  assert.equal(config.settings.validationLimits.maxUsers, 200000);
});

test('a file spelling out every default equals no file; effective config records it in snake_case', () => {
  const d = defaultConfig();
  const sections = d.effective;
  assert.equal('model_configs' in sections, false);
  const yaml = JSON.stringify(sections); // JSON is valid YAML
  const loaded = parseConfigText(yaml, 'all-defaults');
  assert.deepEqual(loaded.settings, d.settings);
  const { effective } = parse([]).config;
  const config = effective.config;
  assert.ok(config !== null && typeof config === 'object' && !Array.isArray(config));
  assert.deepEqual(Object.keys(config).sort(), Object.keys(sections).sort());
});
