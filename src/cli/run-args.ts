// `kv-cache run` arguments → one validated, deeply frozen RunConfig. Order: argv syntax, then the
// --config file (it can add models and change limits), then the model lookup, then the range and
// cross-field checks. Every problem from every stage is thrown together in one ConfigError.
import { resolve } from 'node:path';
import { defaultConfig, loadConfigFile } from './config-file.js';
import type { LoadedConfig } from './config-file.js';
import { ConfigError } from './errors.js';
import { FLAGS } from './flags.js';
import { FlagReader, tokenizeArgv } from './parse-argv.js';
import {
  AUTOSCALER_MODES,
  defaultOutputName,
  FLAG_DEFAULTS,
  GENERATION_MODES,
  IO_MODES,
  TOKENIZERS,
  LOG_LEVELS,
  PERFORMANCE_PROFILES,
  randomSeed,
} from '../engine/run-config.js';
import type { JsonObject, JsonValue, RunConfig, RunFlags } from '../engine/run-config.js';
import { checkFlags, unknownModelProblem } from './validate.js';
import type { FsProbe } from './cache-dir.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';

export { helpText } from './flags.js';
export { wantsHelp } from './parse-argv.js';

export interface ParsedRun {
  readonly config: RunConfig;
  readonly warnings: string[];
}

function readFlags(r: FlagReader, now: Date, seed: number): RunFlags {
  const d = FLAG_DEFAULTS;
  const cacheDir = r.str('cache-dir');
  return {
    logLevel: r.choice('log-level', LOG_LEVELS, d.logLevel),
    model: r.str('model') ?? d.model,
    numUsers: r.int('num-users', d.numUsers),
    durationSec: r.int('duration', d.durationSec),
    gpuMemGb: r.float('gpu-mem-gb', d.gpuMemGb),
    numGpus: r.int('num-gpus', d.numGpus),
    tensorParallel: r.int('tensor-parallel', d.tensorParallel),
    cpuMemGb: r.float('cpu-mem-gb', d.cpuMemGb),
    cacheDir: cacheDir !== undefined ? resolve(cacheDir) : undefined,
    generationMode: r.choice('generation-mode', GENERATION_MODES, d.generationMode),
    performanceProfile: r.choice('performance-profile', PERFORMANCE_PROFILES, d.performanceProfile),
    disableMultiTurn: r.bool('disable-multi-turn'),
    disablePrefixCaching: r.bool('disable-prefix-caching'),
    enableRag: r.bool('enable-rag'),
    ragNumDocs: r.int('rag-num-docs', d.ragNumDocs),
    enableAutoscaling: r.bool('enable-autoscaling'),
    autoscalerMode: r.choice('autoscaler-mode', AUTOSCALER_MODES, d.autoscalerMode),
    targetSaturation: r.float('target-saturation', d.targetSaturation),
    useBurstTrace: r.bool('use-burst-trace'),
    burstTracePath: r.str('burst-trace-path') ?? d.burstTracePath,
    validationTrace: r.str('validation-trace'),
    datasetPath: r.str('dataset-path'),
    maxConversations: r.int('max-conversations', d.maxConversations),
    output: r.str('output') ?? defaultOutputName(now),
    seed,
    maxConcurrentAllocs: r.int('max-concurrent-allocs', d.maxConcurrentAllocs),
    requestRate: r.float('request-rate', d.requestRate),
    maxRequests: r.int('max-requests', d.maxRequests),
    xlsxOutput: r.str('xlsx-output'),
    config: r.str('config'),
    storageCapacityGb: r.float('storage-capacity-gb', d.storageCapacityGb),
    precondition: r.bool('precondition'),
    preconditionSizeGb: r.float('precondition-size-gb', d.preconditionSizeGb),
    preconditionThreads: r.int('precondition-threads', d.preconditionThreads),
    traceSpeedup: r.float('trace-speedup', d.traceSpeedup),
    replayCycles: r.int('replay-cycles', d.replayCycles),
    prefillOnly: r.bool('prefill-only'),
    decodeOnly: r.bool('decode-only'),
    ioTraceLog: r.str('io-trace-log'),
    enableLatencyTracing: r.bool('enable-latency-tracing'),
    gpuBandwidthGbs: r.float('gpu-bandwidth-gbs', d.gpuBandwidthGbs),
    autoscaleIntervalSec: r.float('autoscale-interval', d.autoscaleIntervalSec),
    tokenizer: r.choice('tokenizer', TOKENIZERS, d.tokenizer),
    ioMode: r.choice('io-mode', IO_MODES, d.ioMode),
    keepLatencySamples: r.bool('keep-latency-samples'),
    noProgress: r.bool('no-progress'),
  };
}

function modelJson(m: ModelConfig): JsonObject {
  return {
    key: m.key,
    name: m.name,
    num_layers: m.numLayers,
    hidden_dim: m.hiddenDim,
    num_heads: m.numHeads,
    kv_heads: m.kvHeads,
    dtype: m.dtype,
    kv_dim_per_head: m.kvDimPerHead ?? null,
    attention_type: m.attentionType,
    kv_lora_rank: m.kvLoraRank ?? null,
    qk_rope_head_dim: m.qkRopeHeadDim ?? null,
    kv_bytes_per_token: kvBytesPerToken(m),
  };
}

/** {args (flag names in snake_case, as the reference's argparse namespace), model, config}. */
function effectiveJson(flags: RunFlags, seedGiven: boolean, model: ModelConfig, loaded: LoadedConfig): JsonObject {
  const args: Record<string, JsonValue> = {};
  for (const f of FLAGS) args[f.name.replace(/-/g, '_')] = flags[f.field] ?? null;
  args.seed_given = seedGiven;
  return { args, model: modelJson(model), config: loaded.effective };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (value instanceof Map) for (const v of value.values()) deepFreeze(v);
    else for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function buildRunConfig(flags: RunFlags, seedGiven: boolean, model: ModelConfig, loaded: LoadedConfig): RunConfig {
  const models = new Map([...loaded.models].map(([k, m]) => [k, { ...m }]));
  const own = models.get(model.key) ?? { ...model };
  return deepFreeze({
    ...flags,
    model: own,
    models,
    seedGiven,
    settings: loaded.settings,
    effective: effectiveJson(flags, seedGiven, own, loaded),
  });
}

/**
 * Parses `kv-cache run` argv (a leading `run` is ignored). `now` names the default output file; `rng`
 * ([0, 1)) draws the seed when --seed is absent. Throws ConfigError listing every problem found.
 */
export function parseRunArgs(argv: readonly string[], now: Date, rng: () => number = Math.random, fs?: FsProbe): ParsedRun {
  const raw = tokenizeArgv(argv);
  const problems = [...raw.problems];
  const reader = new FlagReader(raw, problems);
  const seedGiven = reader.has('seed');
  const seed = seedGiven ? reader.int('seed', 0) : randomSeed(rng);
  const flags = readFlags(reader, now, seed);

  let loaded = defaultConfig();
  if (flags.config !== undefined) {
    try {
      loaded = loadConfigFile(flags.config);
    } catch (e: unknown) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.problems);
    }
  }
  const model = loaded.models.get(flags.model);
  if (model === undefined) {
    problems.push(unknownModelProblem(flags.model, loaded.models));
  }
  const checked = checkFlags(flags, loaded.settings.validationLimits, fs);
  problems.push(...checked.problems);
  if (problems.length > 0 || model === undefined) throw new ConfigError(problems);
  return { config: buildRunConfig(flags, seedGiven, model, loaded), warnings: [...loaded.warnings, ...checked.warnings] };
}
