// Loads the optional YAML config file (--config) into typed Settings and the merged model table.
// Every problem in the file — YAML syntax, unknown keys at any depth, wrong types, out-of-range values —
// is reported together in one ConfigError, each naming the file and the key path.
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import type { Document } from 'yaml';
import type * as z from 'zod';
import { configFileSchema, settingsOf } from '../settings/config-keys.js';
import type { ConfigFile, Settings } from '../settings/config-keys.js';
import { ConfigError } from './errors.js';
import { INTEGER_EXPECTED } from '../settings/schema-int.js';
import { buildModelTable, MODEL_ENTRY_KEYS, modelTableProblems } from '../settings/model-entries.js';
import type { ModelConfig } from '../model/models.js';
import type { JsonObject, JsonValue } from '../settings/run-config.js';
import { messageOf } from '../util/errors.js';
import { formatBytes, readInputText } from '../util/input-file.js';
import { excerpt } from '../util/excerpt.js';

/**
 * Limits of a config file. The reference's config.yaml is ~5 KiB with ~150 keys; these bounds are far
 * above any real file and keep a hostile one from hanging the parser (duplicate-key checks and error
 * listing are per key) or exhausting memory (alias expansion).
 */
export const CONFIG_LIMITS = {
  /** Bytes of the file (and characters of a text given to parseConfigText). */
  maxBytes: 1024 * 1024,
  /** Mapping keys plus list items, anywhere in the file. */
  maxNodes: 10_000,
  /** Alias (*name) expansions while converting the document (the yaml package's guard against alias bombs). */
  maxAliasCount: 100,
} as const;

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
    else out += out === '' ? excerpt(String(p)) : `.${excerpt(String(p))}`;
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
  if (typeof v === 'string') return `string '${excerpt(v)}'`;
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
        return `Unknown configuration key '${excerpt(formatPath([...issue.path, k]))}'${valid.length > 0 ? ` (valid keys here: ${valid.join(', ')})` : ''}`;
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

/**
 * Node count and duplicate keys of a parsed document, in one linear walk. (The yaml package's own
 * duplicate-key check compares every key with every other: 30,000 keys took 27 s.)
 */
function structureProblems(doc: Document, lines: LineCounter, source: string): string[] {
  let nodes = 0;
  const duplicates: string[] = [];
  visit(doc, {
    Map(_, map) {
      nodes += map.items.length;
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (!seen.has(key)) seen.add(key);
        else {
          const at = pair.key.range === undefined || pair.key.range === null ? undefined : lines.linePos(pair.key.range[0]);
          duplicates.push(`'${excerpt(key)}'${at !== undefined ? ` at line ${at.line}, column ${at.col}` : ''}`);
        }
      }
    },
    Seq(_, seq) {
      nodes += seq.items.length;
    },
  });
  if (nodes > CONFIG_LIMITS.maxNodes)
    return [
      `${source}: has ${nodes} keys and list items; at most ${CONFIG_LIMITS.maxNodes} are accepted (a real config file has a few hundred at most)`,
    ];
  return duplicates.map((k) => `${source}: invalid YAML: Map keys must be unique: ${k} repeats a key of the same mapping`);
}

/** The document as plain data, or the problem (an alias bomb, or anything else the converter refuses). */
function toPlain(doc: Document, source: string): { readonly value: unknown } | { readonly problem: string } {
  try {
    return { value: doc.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount }) };
  } catch (e: unknown) {
    const msg = messageOf(e);
    return {
      problem: /alias/i.test(msg)
        ? `${source}: invalid YAML: its aliases (*name) expand to too much data (more than ${CONFIG_LIMITS.maxAliasCount} expansions); write the values out`
        : `${source}: invalid YAML: ${excerpt(msg)}`,
    };
  }
}

/** Validates YAML text; `source` names it in messages. Throws ConfigError listing every problem. */
export function parseConfigText(text: string, source: string): LoadedConfig {
  if (text.length > CONFIG_LIMITS.maxBytes)
    throw new ConfigError([`${source}: is ${text.length} characters; at most ${formatBytes(CONFIG_LIMITS.maxBytes)} are accepted`]);
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter: lines });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => `${source}: invalid YAML: ${excerpt(e.message.split('\n')[0].replace(/:\s*$/, ''), 200)}`);
    throw new ConfigError(problems);
  }
  const structure = structureProblems(doc, lines, source);
  if (structure.length > 0) throw new ConfigError(structure);
  const plain = toPlain(doc, source);
  if ('problem' in plain) throw new ConfigError([plain.problem]);
  const input: unknown = plain.value ?? {}; // an empty file is an empty configuration, as in the reference
  const result = configFileSchema.safeParse(input);
  const problems = result.success ? [] : problemsOf(result.error, input, source);
  for (const p of modelTableProblems(valueAt(input, ['model_configs']))) {
    problems.push(`${source}: '${formatPath(['model_configs', ...p.path])}' ${p.message}`);
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return { ...loaded(result.data, source), warnings: inertKeyWarnings(input, source) };
}

/**
 * Reads and validates a config file. Throws ConfigError naming the file when it is missing, not a
 * regular file (checked before opening: a FIFO would block), too large, unreadable or invalid.
 */
export function loadConfigFile(path: string): LoadedConfig {
  // One open, judged on what was opened (no check by path then a read by path: the file could be swapped in between).
  const read = readInputText(path, { maxBytes: CONFIG_LIMITS.maxBytes });
  if (!read.ok)
    throw new ConfigError([
      `config file '${path}' cannot be read: ${read.problem} (expected a YAML file such as the reference's config.yaml)`,
    ]);
  return parseConfigText(read.text, `config file '${path}'`);
}
