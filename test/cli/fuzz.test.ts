// Property and fuzz tests of the command line and the config file (issue 12): whatever the argv or
// the YAML text, parsing returns a RunConfig or throws a ConfigError — never another exception — and
// a message never echoes more than a short excerpt of the input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConfigError } from '../../src/cli/errors.js';
import { parseConfigText } from '../../src/cli/config-file.js';
import { FLAG_ROWS } from '../../src/settings/flags.js';
import { parse } from './helpers.js';

/** Runs `fn`; a ConfigError is an accepted outcome, anything else fails the property. */
function resultOrConfigError(fn: () => unknown): ConfigError | undefined {
  try {
    fn();
    return undefined;
  } catch (e: unknown) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
}

const flagNames = FLAG_ROWS.map((f) => `--${f.name}`);
const values = fc.oneof(
  fc.constantFrom(
    '0',
    '1',
    '-1',
    '2.5',
    '1e400',
    '-0',
    'NaN',
    'Infinity',
    '0x10',
    '',
    ' ',
    '--',
    '-',
    'none',
    'tiny-1b',
    '/',
    '/etc',
    '/dev/null',
  ),
  fc.string({ maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
);
const argvToken = fc.oneof(
  fc.constantFrom(...flagNames),
  fc.constantFrom(...flagNames).map((f) => `${f}=`),
  fc.tuple(fc.constantFrom(...flagNames), values).map(([f, v]) => `${f}=${v}`),
  fc.constantFrom('run', '-h', '-x', '---num-users', '--num_users', '--NUM-USERS', '--config', '--seed'),
  values,
);

test('parseRunArgs: any argv gives a config or a ConfigError', () => {
  fc.assert(
    fc.property(fc.array(argvToken, { maxLength: 12 }), (argv) => {
      const err = resultOrConfigError(() => parse(argv));
      if (err !== undefined) assert.ok(err.problems.length > 0 && !err.message.includes('    at '));
    }),
    { numRuns: 300 },
  );
});

test('parseRunArgs: a huge value is echoed as an 80-character excerpt', () => {
  const big = '9'.repeat(100_000) + 'x';
  const err = resultOrConfigError(() => parse(['--num-users', big, '--nonsense', big, big]));
  assert.ok(err !== undefined);
  assert.ok(err.message.length < 1_000, `message of ${err.message.length} characters`);
  assert.match(err.message, /--num-users expects an integer, got '9{80}… \(100001 characters\)'/);
});

const yamlish = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc
    .array(
      fc.constantFrom(
        'rag:',
        '  top_k_chunks: 3',
        '  chunk_size_tokens: -1',
        'model_configs:',
        '  m:',
        '    num_layers: 99999999999',
        '    hidden_dim: 1',
        'a: &x [1, 2]',
        'b: *x',
        'c: *y',
        '- 1',
        '[',
        '{a: 1, a: 2}',
        '? [a]',
        ': b',
        '!!binary aGk=',
        '!custom x',
        '---',
        '...',
        'user_templates: {chatbot: {context_range: [5, 1]}}',
        'qos_profiles: null',
        '"\\u0000": 1',
        '\t',
        'x: "unterminated',
        '<<: {a: 1}',
      ),
      { maxLength: 12 },
    )
    .map((lines) => lines.join('\n')),
);

test('parseConfigText: any text gives a configuration or a ConfigError', () => {
  fc.assert(
    fc.property(yamlish, (text) => {
      const err = resultOrConfigError(() => parseConfigText(text, 'config file'));
      if (err !== undefined) assert.ok(err.problems.length > 0 && err.problems.every((p) => p.startsWith('config file')));
    }),
    { numRuns: 300 },
  );
});
