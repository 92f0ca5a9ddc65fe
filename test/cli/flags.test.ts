// argv parsing: defaults equal the reference's (docs/reference-compat.md#rc-2), every reference flag is accepted,
// malformed values / unknown flags / bad choices are named, help lists every flag by group, and the
// resulting RunConfig is immutable and serialisable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_GROUPS, FLAG_ROWS as FLAGS } from '../../src/settings/flags.js';
import { helpText } from '../../src/cli/help.js';
import { wantsHelp } from '../../src/cli/parse-argv.js';
import { parseRunArgs as realParse } from '../../src/cli/run-args.js';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import { configError, parse, rejection, tempDir } from './helpers.js';

/** Every flag of the reference (docs/reference-compat.md#rc-2, including the branch's --gpu-bandwidth-gbs) and ours. */
const REFERENCE_FLAGS = [
  'log-level',
  'model',
  'num-users',
  'duration',
  'gpu-mem-gb',
  'num-gpus',
  'tensor-parallel',
  'cpu-mem-gb',
  'cache-dir',
  'generation-mode',
  'performance-profile',
  'disable-multi-turn',
  'disable-prefix-caching',
  'enable-rag',
  'rag-num-docs',
  'enable-autoscaling',
  'autoscaler-mode',
  'target-saturation',
  'use-burst-trace',
  'burst-trace-path',
  'validation-trace',
  'dataset-path',
  'max-conversations',
  'output',
  'seed',
  'max-concurrent-allocs',
  'request-rate',
  'max-requests',
  'xlsx-output',
  'config',
  'storage-capacity-gb',
  'precondition',
  'precondition-size-gb',
  'precondition-threads',
  'trace-speedup',
  'replay-cycles',
  'prefill-only',
  'decode-only',
  'io-trace-log',
  'enable-latency-tracing',
  'gpu-bandwidth-gbs',
] as const;
const OUR_FLAGS = [
  'io-mode',
  'payload-filler',
  'storage-backend',
  'keep-latency-samples',
  'no-progress',
  'autoscale-interval',
  'tokenizer',
  'create-cache-dir',
  'trials',
  'trial-pause',
  'remove-stale-entries',
  // Block-granular KV and Mooncake traces (issue 22).
  'mooncake-trace',
  'kv-pool',
  'keep-pool',
  'route',
  'kv-block-tokens',
  // Tokens per Mooncake hash id (issue 35).
  'trace-block-tokens',
  // The S3 storage backend (issue 25); test/tiers/s3-kind.test.ts checks their values.
  's3-endpoint',
  's3-bucket',
  'create-bucket',
  's3-prefix',
  's3-region',
  's3-path-style',
  's3-ca-file',
  // Ranks (issue 14); test/cli/rank-flags.test.ts tests those that need a launcher or exclude --seed/--output/--cache-dir.
  'rank-output-base',
  'rank-cache-base',
  'seed-base',
  'world-size',
  'barrier-dir',
  'barrier-timeout',
  // The modelled TTFT (issue 23).
  'gpu-profile',
  'mfu',
  // KV layouts (issue 34); test/cli/kv-layout.test.ts checks them against the backend and the model.
  'kv-layout',
  'slab-slot-mib',
  'slab-file-gib',
  // How the file tier makes its calls (issue 34 item 7); test/tiers/block-file.test.ts and file-native.test.ts.
  'file-calls',
] as const;

function configSeed(u: number): number {
  return realParse([], new Date(), () => u).config.seed;
}

test('defaults equal the reference table', () => {
  const { config, warnings } = parse([]);
  assert.deepEqual(warnings, []);
  const expected = {
    logLevel: 'INFO',
    numUsers: 100,
    durationSec: 60,
    gpuMemGb: 16,
    numGpus: 1,
    tensorParallel: 1,
    cpuMemGb: 32,
    cacheDir: undefined,
    generationMode: 'realistic',
    performanceProfile: 'latency',
    disableMultiTurn: false,
    disablePrefixCaching: false,
    enableRag: false,
    ragNumDocs: 10,
    enableAutoscaling: false,
    autoscalerMode: 'qos',
    targetSaturation: 0.8,
    useBurstTrace: false,
    burstTracePath: 'BurstGPT/data/BurstGPT_1.csv',
    validationTrace: undefined,
    datasetPath: undefined,
    maxConversations: 500,
    output: 'benchmark_results_20260102_030405.json',
    seed: 536870912,
    seedGiven: false,
    maxConcurrentAllocs: 0,
    requestRate: 0,
    maxRequests: 0,
    xlsxOutput: undefined,
    config: undefined,
    storageCapacityGb: 0,
    precondition: false,
    preconditionSizeGb: 0,
    preconditionThreads: 0,
    traceSpeedup: 1.0,
    replayCycles: 0,
    prefillOnly: false,
    decodeOnly: false,
    ioTraceLog: undefined,
    enableLatencyTracing: false,
    gpuBandwidthGbs: 64.0,
    ioMode: 'direct',
    storageBackend: 'file',
    keepLatencySamples: false,
    noProgress: false,
    trials: 1,
    trialPauseSec: 0,
    gpuProfile: 'h100-sxm',
    mfu: 0.5,
  };
  for (const [k, v] of Object.entries(expected)) assert.equal(Reflect.get(config, k), v, k);
  assert.deepEqual(config.model, BUILTIN_MODELS.get('llama3.1-8b'));
});

test('without --seed a random 31-bit seed is drawn at startup and recorded as not given', () => {
  assert.equal(parse([]).config.seedGiven, false);
  const seeds = [0, 0.5, 0.999999999].map((u) => configSeed(u));
  assert.deepEqual(seeds.slice(0, 2), [0, 2 ** 30]);
  assert.ok(seeds[2] < 2 ** 31 && Number.isInteger(seeds[2]));
  const given = parse(['--seed', '42']).config;
  assert.equal(given.seed, 42);
  assert.equal(given.seedGiven, true);
  assert.equal(parse(['--seed', '0']).config.seedGiven, true);
});

test('the default output name carries the start time (local, YYYYmmdd_HHMMSS)', () => {
  const at = new Date(2025, 11, 31, 23, 59, 7);
  assert.equal(realParse([], at, () => 0).config.output, 'benchmark_results_20251231_235907.json');
  assert.equal(parse(['--output', 'x.json']).config.output, 'x.json');
});

test('every reference flag and every new flag is accepted with a value of its type', () => {
  const dir = tempDir();
  const values: Readonly<Record<string, string | null>> = {
    'log-level': 'DEBUG',
    model: 'tiny-1b',
    'num-users': '5',
    duration: '10',
    'gpu-mem-gb': '0',
    'num-gpus': '2',
    'tensor-parallel': '2',
    'cpu-mem-gb': '0.5',
    'cache-dir': `${dir}/kv`,
    'generation-mode': 'none',
    'performance-profile': 'throughput',
    'disable-multi-turn': null,
    'disable-prefix-caching': null,
    'enable-rag': null,
    'rag-num-docs': '3',
    'enable-autoscaling': null,
    'autoscaler-mode': 'capacity',
    'target-saturation': '0.5',
    'burst-trace-path': 'trace.csv',
    'validation-trace': 'v.json',
    'dataset-path': 'sharegpt.json',
    'max-conversations': '20',
    output: 'out.json',
    seed: '7',
    'max-concurrent-allocs': '4',
    'request-rate': '2.5',
    'max-requests': '100',
    'xlsx-output': 'out.xlsx',
    'storage-capacity-gb': '10',
    precondition: null,
    'precondition-size-gb': '1.5',
    'precondition-threads': '2',
    'trace-speedup': '0',
    'replay-cycles': '3',
    'prefill-only': null,
    'io-trace-log': 'trace.log',
    'enable-latency-tracing': null,
    'gpu-bandwidth-gbs': '3350',
    'io-mode': 'buffered',
    'payload-filler': 'threads',
    'storage-backend': 'memory',
    'keep-latency-samples': null,
    'no-progress': null,
    'autoscale-interval': '2.5',
    'gpu-profile': 'b200',
    mfu: '0.4',
    tokenizer: 'chars',
    'create-cache-dir': null,
    trials: '3',
    'trial-pause': '2.5',
    'remove-stale-entries': null,
    'kv-block-tokens': '64',
    'trace-block-tokens': '16',
    's3-endpoint': 'http://127.0.0.1:9000',
    's3-bucket': 'kvc-bucket',
    'create-bucket': null,
    's3-prefix': 'runs/',
    's3-region': 'eu-west-1',
    's3-path-style': null,
    's3-ca-file': '/etc/ssl/kvc-ca.pem',
    'barrier-dir': '/shared/barrier',
    'barrier-timeout': '30',
    route: 'round-robin',
    'slab-slot-mib': '8',
    'slab-file-gib': '2',
    'file-calls': 'fs',
  };
  const argv = Object.entries(values).flatMap(([k, v]) => (v === null ? [`--${k}`] : [`--${k}`, v]));
  const { config } = parse(argv);
  assert.equal(config.logLevel, 'DEBUG');
  assert.equal(config.model.key, 'tiny-1b');
  assert.equal(config.cpuMemGb, 0.5);
  assert.equal(config.cacheDir, `${dir}/kv`);
  assert.equal(config.performanceProfile, 'throughput');
  assert.equal(config.requestRate, 2.5);
  assert.equal(config.traceSpeedup, 0);
  assert.equal(config.gpuBandwidthGbs, 3350);
  assert.equal(config.ioMode, 'buffered');
  assert.equal(config.payloadFiller, 'threads');
  assert.equal(config.storageBackend, 'memory');
  assert.equal(config.keepLatencySamples, true);
  assert.equal(config.noProgress, true);
  assert.equal(config.prefillOnly, true);
  assert.equal(config.ioTraceLog, 'trace.log');
  assert.equal(config.trials, 3);
  assert.equal(config.trialPauseSec, 2.5);
  const args = config.effective.args;
  const defaults = parse([]).config.effective.args;
  assert.ok(args !== null && typeof args === 'object' && !Array.isArray(args));
  assert.ok(defaults !== null && typeof defaults === 'object' && !Array.isArray(defaults));
  for (const name of [...REFERENCE_FLAGS, ...OUR_FLAGS]) {
    // excluded by --prefill-only / --dataset-path; tested with files
    if (name === 'decode-only' || name === 'config' || name === 'use-burst-trace' || name === 'mooncake-trace') continue;
    if (['rank-output-base', 'rank-cache-base', 'seed-base', 'world-size'].includes(name)) continue; // rank-flags.test.ts
    if (name === 'kv-pool' || name === 'keep-pool') continue; // a shared pool needs block mode on a real storage tier: validate.test.ts
    if (name === 'kv-layout') continue; // slab needs the file backend and no trace mode: kv-layout.test.ts
    const key = name.replace(/-/g, '_');
    assert.notEqual(Reflect.get(args, key), Reflect.get(defaults, key), `--${name} changed its value`);
  }
});

test('the flag table holds exactly the reference flags plus ours, each marked as such', () => {
  assert.deepEqual(FLAGS.map((f) => f.name).sort(), [...REFERENCE_FLAGS, ...OUR_FLAGS].sort());
  // --gpu-bandwidth-gbs exists only on a branch of the reference: the table counts it as ours.
  const marked = FLAGS.filter((f) => f.reference).map((f) => f.name);
  assert.deepEqual(marked.sort(), REFERENCE_FLAGS.filter((f) => f !== 'gpu-bandwidth-gbs').sort());
});

test('non-numeric values name the flag, the expected type and the value', () => {
  assert.match(rejection(['--num-users', 'abc']), /--num-users expects an integer, got 'abc'/);
  assert.match(rejection(['--num-users', '1.5']), /--num-users expects an integer, got '1\.5'/);
  assert.match(rejection(['--gpu-mem-gb', 'lots']), /--gpu-mem-gb expects a number, got 'lots'/);
  assert.match(rejection(['--cpu-mem-gb', 'inf']), /--cpu-mem-gb expects a number, got 'inf'/);
  assert.match(rejection(['--seed', '0x10']), /--seed expects an integer, got '0x10'/);
  assert.equal(parse(['--gpu-mem-gb', '1e1', '--cpu-mem-gb=.5']).config.gpuMemGb, 10);
});

test('a negative number is read as the value, not as a flag', () => {
  assert.match(rejection(['--gpu-mem-gb', '-1']), /gpu-mem-gb cannot be negative/);
});

test('unknown flags are named, with the closest valid flag when obvious', () => {
  assert.match(rejection(['--num-user', '5']), /unknown flag '--num-user' \(did you mean --num-users\?\)/);
  assert.match(rejection(['--cpu-memory-gb', '4']), /unknown flag '--cpu-memory-gb' \(did you mean --cpu-mem-gb\?\)/);
  assert.match(rejection(['--num_users', '4']), /did you mean --num-users\?/);
  const e = configError(() => parse(['--frobnicate', '7']));
  assert.deepEqual(e.problems, ["unknown flag '--frobnicate'; see --help"], 'its value is not reported again');
  assert.match(rejection(['-x']), /unknown flag '-x'/);
});

test('invalid choices list the valid ones', () => {
  assert.match(rejection(['--generation-mode', 'slow']), /--generation-mode: invalid choice 'slow'; valid choices: none, fast, realistic/);
  assert.match(rejection(['--io-mode', 'mmap']), /valid choices: direct, buffered/);
  assert.match(rejection(['--storage-backend', 'nfs']), /--storage-backend: invalid choice 'nfs'; valid choices: file, memory, s3/);
  assert.match(rejection(['--autoscaler-mode', 'predictive']), /valid choices: qos, capacity/);
  assert.match(rejection(['--log-level', 'debug']), /did you mean 'DEBUG'\?/);
  assert.match(rejection(['--performance-profile', 'fast']), /valid choices: latency, throughput/);
});

test('missing values, values given to switches and stray arguments are reported', () => {
  assert.match(rejection(['--duration']), /--duration expects an integer, but no value was given/);
  assert.match(rejection(['--num-users', '--enable-rag']), /--num-users expects an integer, got the flag '--enable-rag'/);
  assert.match(rejection(['--enable-rag=yes']), /--enable-rag is a switch and takes no value/);
  assert.match(rejection(['stray']), /unexpected argument 'stray'/);
  assert.match(rejection(['--model=']), /--model expects a non-empty value/);
});

test('all argv problems come together with range problems', () => {
  const e = configError(() => parse(['--num-users', 'abc', '--bogus', '--duration', '0', '--io-mode', 'x']));
  assert.equal(e.problems.length, 4);
});

test('a leading "run" subcommand, --flag=value and repeated flags (last wins) are accepted', () => {
  const { config } = parse(['run', '--num-users=7', '--duration', '5', '--duration', '9']);
  assert.equal(config.numUsers, 7);
  assert.equal(config.durationSec, 9);
});

test('--help and -h are recognised', () => {
  assert.equal(wantsHelp(['--help']), true);
  assert.equal(wantsHelp(['run', '-h']), true);
  assert.equal(wantsHelp(['--num-users', '3']), false);
});

test('help lists every flag with its default, grouped by purpose', () => {
  const help = helpText();
  const flat = help.replace(/\n {20,}/g, ' '); // join wrapped help lines
  for (const name of [...REFERENCE_FLAGS, ...OUR_FLAGS]) assert.match(help, new RegExp(`--${name}\\b`), name);
  const positions = FLAG_GROUPS.map((g) => help.indexOf(`\n${g}:\n`));
  assert.ok(
    positions.every((p) => p > 0),
    'every group has a heading',
  );
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    positions,
    'groups in order',
  );
  assert.match(flat, /--num-users N\s+.*\(default: 100\)/);
  assert.match(flat, /--gpu-mem-gb X\s+.*\(default: 16\.0\)/);
  assert.match(flat, /--io-mode \{direct,buffered\}\s+.*\(default: direct\)/);
  assert.match(
    flat,
    /--storage-backend \{file,memory,s3\}\s+Storage tier backend: file = one file per entry under --cache-dir .*; memory = entries in RAM.*; s3 = one object per entry in an S3 bucket.*\(default: file\)/,
  );
  assert.match(flat, /--keep-latency-samples\s+.*\(default: off\)/);
  assert.equal((help.match(/\(default:/g) ?? []).length, FLAGS.length, 'every flag shows a default');
});

test('the RunConfig is deeply immutable', () => {
  const { config } = parse([]);
  assert.equal(Reflect.set(config, 'numUsers', 5), false);
  assert.equal(Reflect.set(config.settings.rag, 'topKChunks', 1), false);
  assert.equal(Reflect.set(config.settings.userTemplates.chatbot.contextRange, 0, 1), false);
  assert.equal(Reflect.set(config.model, 'numLayers', 1), false);
  assert.equal(Object.isFrozen(config.effective), true);
  assert.equal(config.numUsers, 100);
});

test('the effective configuration is plain JSON with the reference names', () => {
  const { config } = parse(['--num-users', '12', '--seed', '3']);
  const round = JSON.parse(JSON.stringify(config.effective)) as unknown;
  assert.deepEqual(round, config.effective);
  assert.deepEqual(Object.keys(config.effective).sort(), ['args', 'config', 'model']);
  const text = JSON.stringify(config.effective);
  for (const fragment of [
    '"num_users":12',
    '"duration":60',
    '"seed":3',
    '"seed_given":true',
    '"io_mode":"direct"',
    '"cache_dir":null',
    '"top_k_chunks":5',
    '"kv_bytes_per_token":131072',
    '"target_latency_p95_ms":50',
  ]) {
    assert.ok(text.includes(fragment), fragment);
  }
});

test('--trials must be a positive integer and --trial-pause non-negative', () => {
  assert.match(rejection(['--trials', '0']), /trials must be positive \(got 0\)/);
  assert.match(rejection(['--trials', '1.5']), /--trials expects an integer, got '1\.5'/);
  assert.match(rejection(['--trial-pause', '-1']), /trial-pause cannot be negative/);
});
