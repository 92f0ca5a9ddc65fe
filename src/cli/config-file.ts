// Loads the optional YAML config file (--config) into typed Settings and the merged model table.
// Every problem in the file — YAML syntax, unknown keys at any depth, wrong types, out-of-range values —
// is reported together in one ConfigError, each naming the file and the key path.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import { configFileSchema, settingsOf } from '../settings/config-keys.js';
import type { ConfigFile, Settings } from '../settings/config-keys.js';
import { ConfigError } from './errors.js';
import { INTEGER_EXPECTED } from '../settings/schema-int.js';
import { buildModelTable, MODEL_ENTRY_KEYS, modelTableProblems } from '../settings/model-entries.js';
import type { ModelConfig } from '../model/models.js';
import type { JsonObject, JsonValue } from '../settings/run-config.js';
import { messageOf } from '../util/errors.js';

export interface LoadedConfig {
  /** The file path, or undefined for built-in defaults. */
  readonly path?: string;
  readonly settings: Settings;
  readonly models: ReadonlyMap<string, ModelConfig>;
  /** Every section with defaults applied, snake_case as in the file (model_configs only as given). */
  readonly effective: JsonObject;
  /** Keys present in the file that change nothing in this version (said, never silently ignored). */
  readonly warnings: readonly string[];
}

/**
 * Config keys the schema accepts (so the reference's config.yaml loads) but that have no effect here,
 * with the reason. Sections of features not built yet leave this list as they arrive.
 */
const INERT_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['gpu_backend', 'there is no CUDA backend; the GPU tier is the bandwidth model (--gpu-bandwidth-gbs)'],
  ['prefix_cache.min_prefix_length', 'the three system prompts are shorter than any useful minimum (the reference ignores it too)'],
  ['prefix_cache.max_prefix_entries', 'there are only three system prompts (the reference ignores it too)'],
  ['saturation_detection.write_latency_p95_threshold_ms', 'saturation is judged on read latency and bandwidth, as the reference'],
  ['saturation_detection.queue_depth_threshold', 'saturation is judged on read latency and bandwidth, as the reference'],
];

function inertKeyWarnings(input: unknown, source: string): string[] {
  const out: string[] = [];
  for (const [path, why] of INERT_KEYS) {
    if (valueAt(input, path.split('.')) !== undefined) out.push(`${source}: '${path}' has no effect: ${why}`);
  }
  return out;
}

type Path = readonly PropertyKey[];

function formatPath(path: Path): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '(top level)' : out;
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Reflect.get(v, p);
  }
  return v;
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'nothing (empty value)';
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === 'string') return `string '${v}'`;
  if (typeof v === 'number') return `number ${v}`;
  if (typeof v === 'boolean') return `boolean ${v}`;
  return 'a mapping';
}

const EXPECTED: Readonly<Record<string, string>> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'a mapping (key: value section)',
  record: 'a mapping of model keys to model entries',
  tuple: 'a [low, high] list',
  array: 'a list',
};

/** Valid keys at a mapping path, for the "Unknown configuration key" hint. */
function validKeysAt(defaults: unknown, path: Path): readonly string[] {
  if (path.length === 0) return [...Object.keys(configFileSchema.shape)];
  if (path[0] === 'model_configs' && path.length === 2) return MODEL_ENTRY_KEYS;
  const v = valueAt(defaults, path);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v) : [];
}

function issueMessage(issue: z.core.$ZodIssue, input: unknown, defaults: unknown): string[] {
  const where = formatPath(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => {
        const valid = validKeysAt(defaults, issue.path);
        return `Unknown configuration key '${formatPath([...issue.path, k])}'${valid.length > 0 ? ` (valid keys here: ${valid.join(', ')})` : ''}`;
      });
    case 'invalid_type': {
      const expected = issue.message === INTEGER_EXPECTED ? 'int' : issue.expected;
      return [`'${where}' has the wrong type: expected ${EXPECTED[expected] ?? expected}, got ${describe(valueAt(input, issue.path))}`];
    }
    case 'invalid_value':
      return [
        `'${where}' must be one of ${issue.values.map((v) => `'${String(v)}'`).join(', ')}, got ${describe(valueAt(input, issue.path))}`,
      ];
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'array')
        return [`'${where}' must be a [low, high] list of exactly 2 values, got ${describe(valueAt(input, issue.path))}`];
      const op = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      return [`'${where}' must be ${op} ${String(bound)}, got ${describe(valueAt(input, issue.path))}`];
    }
    default:
      return [`'${where}' ${issue.message}`];
  }
}

function problemsOf(error: z.ZodError, input: unknown, source: string): string[] {
  const defaults = configFileSchema.parse({});
  return error.issues.flatMap((i) => issueMessage(i, input, defaults)).map((m) => `${source}: ${m}`);
}

/** Copies a parsed value into plain JSON (drops undefined, which zod leaves for absent optionals). */
function toJson(v: unknown): JsonValue {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object') return objectToJson(v);
  return null;
}

function objectToJson(v: object): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toJson(x);
  return out;
}

function loaded(file: ConfigFile, path: string | undefined): LoadedConfig {
  return {
    ...(path !== undefined ? { path } : {}),
    settings: settingsOf(file),
    models: buildModelTable(file.model_configs),
    effective: objectToJson(file),
    warnings: [],
  };
}

/** Built-in defaults: what a run without --config uses. */
export function defaultConfig(): LoadedConfig {
  return loaded(configFileSchema.parse({}), undefined);
}

/** Validates YAML text; `source` names it in messages. Throws ConfigError listing every problem. */
export function parseConfigText(text: string, source: string): LoadedConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => `${source}: invalid YAML: ${e.message.split('\n')[0].replace(/:\s*$/, '')}`));
  }
  const input: unknown = doc.toJS() ?? {}; // an empty file is an empty configuration, as in the reference
  const result = configFileSchema.safeParse(input);
  const problems = result.success ? [] : problemsOf(result.error, input, source);
  for (const p of modelTableProblems(valueAt(input, ['model_configs']))) {
    problems.push(`${source}: '${formatPath(['model_configs', ...p.path])}' ${p.message}`);
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return { ...loaded(result.data, source), warnings: inertKeyWarnings(input, source) };
}

/** Reads and validates a config file. Throws ConfigError naming the file when it is missing, unreadable or invalid. */
export function loadConfigFile(path: string): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e: unknown) {
    const code = e instanceof Error && 'code' in e ? String(e.code) : '';
    const why =
      code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : messageOf(e);
    throw new ConfigError([`config file '${path}' cannot be read: ${why}`]);
  }
  return parseConfigText(text, `config file '${path}'`);
}
