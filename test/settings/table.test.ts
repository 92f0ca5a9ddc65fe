// The settings table is the one source: every flag row reaches --help and effective_config, every
// config key the schema accepts is declared with help text and echoed. (The reference's flags: test/cli/flags.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as z from 'zod';
import { FLAG_ROWS, FLAG_TABLE, flagDefaults } from '../../src/settings/flags.js';
import { configFileSchema, DEFAULT_SETTINGS, settingsFrom } from '../../src/settings/config-keys.js';
import { helpText } from '../../src/cli/help.js';
import { parseRunArgs } from '../../src/cli/run-args.js';

test('every row appears in --help and in effective_config.args under its snake_case name', () => {
  const help = helpText();
  const { config } = parseRunArgs(['--seed', '1'], new Date(2026, 0, 2, 3, 4, 5), () => 0.5);
  const args = config.effective.args as Record<string, unknown>;
  for (const f of FLAG_ROWS) {
    assert.match(help, new RegExp(`\\n  --${f.name}\\b`), `--${f.name} in --help`);
    assert.ok(Object.hasOwn(args, f.name.replace(/-/g, '_')), `--${f.name} in effective_config.args`);
  }
  assert.equal(Object.keys(args).length, FLAG_ROWS.length + 1, 'rows plus seed_given, nothing else');
});

test('defaults come from the rows; computed defaults use the start time and the random source', () => {
  const { config } = parseRunArgs([], new Date(2026, 0, 2, 3, 4, 5), () => 0.25);
  const plain = flagDefaults();
  for (const f of FLAG_ROWS) {
    if (f.defaultAt !== undefined) continue;
    assert.deepEqual(f.field === 'model' ? config.model.key : config[f.field], plain[f.field], f.name);
  }
  assert.equal(config.output, 'benchmark_results_20260102_030405.json');
  assert.equal(config.seed, 2 ** 29);
  assert.equal(config.seedGiven, false);
  assert.equal(FLAG_TABLE.numUsers.default, 100);
});

/** Every leaf key path of a zod object schema (wrappers such as default/prefault unwrapped). */
function leafPaths(schema: z.ZodType, prefix: string[] = []): Array<{ path: string[]; leaf: z.ZodType }> {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: z.ZodType; in?: z.ZodType };
    if ((def.type === 'default' || def.type === 'prefault' || def.type === 'optional') && def.innerType !== undefined) s = def.innerType;
    else if (def.type === 'pipe' && def.in !== undefined) s = def.in;
    else break;
  }
  if (s instanceof z.ZodObject) {
    return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
  }
  return [{ path: prefix, leaf: schema }];
}

test('every config key the schema accepts is declared with help text and echoed in effective_config.config', () => {
  const { config } = parseRunArgs(['--seed', '1'], new Date(), () => 0.5);
  const echo = config.effective.config as Record<string, unknown>;
  const leaves = leafPaths(configFileSchema).filter((l) => l.path[0] !== 'model_configs');
  assert.ok(leaves.length >= 60, `found ${leaves.length} keys`);
  for (const { path, leaf } of leaves) {
    const key = path.join('.');
    assert.ok((leaf.description ?? '').length > 10, `${key} has help text`);
    let v: unknown = echo;
    for (const p of path) v = (v as Record<string, unknown>)[p];
    assert.notEqual(v, undefined, `${key} is echoed`);
  }
});

test('Settings are the schema’s defaults in camelCase, and overrides change only what they name', () => {
  assert.deepEqual(DEFAULT_SETTINGS.userTemplates.coding.thinkTimeRange, [0.2, 1.0]);
  assert.equal(DEFAULT_SETTINGS.qosProfiles.interactive.targetLatencyP95Ms, 50);
  assert.equal(DEFAULT_SETTINGS.rag.largeModelDocTokensMax, 4096);
  assert.equal(DEFAULT_SETTINGS.validationLimits.maxUsers, 100000);
  const s = settingsFrom({ rag: { top_k_chunks: 2 } });
  assert.equal(s.rag.topKChunks, 2);
  assert.deepEqual({ ...s.rag, topKChunks: 5 }, DEFAULT_SETTINGS.rag);
  assert.deepEqual(s.conversation, DEFAULT_SETTINGS.conversation);
  assert.throws(() => settingsFrom({ rag: { top_k_chunks: 0 } }));
});
