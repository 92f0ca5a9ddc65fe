// `kv-cache run` arguments → one validated, deeply frozen RunConfig. Order: argv syntax, then the
// --config file (it can add models and change limits), then the model lookup, then the range and
// cross-field checks. Every problem from every stage is thrown together in one ConfigError. Flags are
// read generically from the flag table (settings/flags.ts): nothing here names a flag but `config`.
import { defaultConfig, loadConfigFile } from './config-file.js';
import type { LoadedConfig } from './config-file.js';
import { ConfigError } from './errors.js';
import { FLAG_ROWS } from '../settings/flags.js';
import type { DefaultContext, FlagRow, RunFlags } from '../settings/flags.js';
import { FlagReader, tokenizeArgv } from './parse-argv.js';
import type { JsonObject, JsonValue, RunConfig } from '../settings/run-config.js';
import { checkFlags, modelFitProblems, unknownModelProblem } from './validate.js';
import { slabProblems } from '../engine/kv-layout.js';
import type { FsProbe } from './cache-dir.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { deepFreeze } from '../util/freeze.js';
import { applyRankFlags } from './rank-flags.js';

export { helpText } from './help.js';
export { wantsHelp } from './parse-argv.js';

export interface ParsedRun {
  readonly config: RunConfig;
  readonly warnings: string[];
}

/** One flag's value: as given (converted by its kind, then normalised), else its default. */
function readFlag(r: FlagReader, f: FlagRow<unknown>, ctx: DefaultContext): unknown {
  const fallback = (): unknown => (f.defaultAt !== undefined ? f.defaultAt(ctx) : f.default);
  if (!r.has(f.name)) return f.kind === 'bool' ? false : fallback();
  const given = ((): unknown => {
    switch (f.kind) {
      case 'bool':
        return r.bool(f.name);
      case 'int':
        return r.int(f.name, f.default as number);
      case 'float':
        return r.float(f.name, f.default as number);
      case 'choice':
        return r.choice(f.name, f.choices ?? [], f.default as string);
      case 'string':
        return r.str(f.name) ?? fallback();
    }
  })();
  return f.normalize !== undefined ? f.normalize(given) : given;
}

function readFlags(r: FlagReader, ctx: DefaultContext): RunFlags {
  return Object.fromEntries(FLAG_ROWS.map((f) => [f.field, readFlag(r, f, ctx)])) as RunFlags;
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
    total_params: m.compute?.totalParams ?? null,
    active_params: m.compute?.activeParams ?? null,
  };
}

/** {args (flag names in snake_case, as the reference's argparse namespace), model, config}. */
function effectiveJson(flags: RunFlags, seedGiven: boolean, model: ModelConfig, loaded: LoadedConfig): JsonObject {
  const args: Record<string, JsonValue> = {};
  for (const f of FLAG_ROWS) args[f.name.replace(/-/g, '_')] = (flags[f.field] as JsonValue | undefined) ?? null;
  args.seed_given = seedGiven;
  return { args, model: modelJson(model), config: loaded.effective };
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
export function parseRunArgs(
  argv: readonly string[],
  now: Date,
  rng: () => number = Math.random,
  fs?: FsProbe,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ParsedRun {
  const raw = tokenizeArgv(argv);
  const problems = [...raw.problems];
  const reader = new FlagReader(raw, problems);
  // Under a launcher each rank gets its own output, cache dir and seed (cli/rank-flags.ts).
  const ranked = applyRankFlags(readFlags(reader, { now, rng }), (n) => reader.has(n), env, now);
  problems.push(...ranked.problems);
  const flags = ranked.flags;
  const seedGiven = reader.has('seed') || ranked.seedFromBase;

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
  if (model !== undefined) problems.push(...modelFitProblems(model, flags, loaded.settings));
  if (model !== undefined) problems.push(...slabProblems({ ...flags, model, settings: loaded.settings })); // a slot smaller than a block
  if (problems.length > 0 || model === undefined) throw new ConfigError(problems);
  return { config: buildRunConfig(flags, seedGiven, model, loaded), warnings: [...loaded.warnings, ...checked.warnings] };
}
