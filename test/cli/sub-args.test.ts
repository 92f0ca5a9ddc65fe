// The declaration-driven subcommand parser: values by kind, every problem at once with its message,
// the usage line and the --help text made from the same declaration.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSubcommandArgs, subcommandHelp, usageLine } from '../../src/cli/sub-args.js';
import type { ArgsSpec } from '../../src/cli/sub-args.js';

const SPEC = {
  about: 'Does a thing to FILEs.',
  positional: { name: 'FILE', noun: 'input file', min: 1, max: 2 },
  options: {
    output: { kind: 'string', short: 'o', value: 'OUT', help: 'Where to write', defaultText: 'out_<stamp>.txt' },
    mode: { kind: 'string', value: 'MODE', choices: ['fast', 'slow'], default: 'fast', help: 'How' },
    depth: { kind: 'number', value: 'N', integer: true, min: 1, max: 64, default: 8, help: 'How deep' },
    window: { kind: 'number', value: 'S', above: 0, what: 'seconds', help: 'How long' },
    tag: { kind: 'multiple', value: 'TAG', help: 'A label; may be repeated' },
    extra: { kind: 'string', value: '"ARGS"', dashValue: true, help: 'Passed on' },
    quiet: { kind: 'bool', inUsage: true, help: 'Say less' },
    loud: { kind: 'bool', help: 'Say more' },
    secret: { kind: 'string', value: 'X', hidden: true, help: 'Internal' },
  },
  groups: [{ options: ['quiet', 'loud'] }],
} as const satisfies ArgsSpec;

function ok(argv: readonly string[]) {
  const p = parseSubcommandArgs(SPEC, argv);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  return p.args;
}

function problems(argv: readonly string[]): readonly string[] {
  const p = parseSubcommandArgs(SPEC, argv);
  assert.ok(!p.help);
  return p.problems;
}

test('values come converted by their kind, with defaults, and `given` names only what was typed', () => {
  const a = ok(['f1', '-o', 'x.txt', '--depth', '16', '--window=0.5', '--tag', 'a', '--tag', 'b', '--extra', '--bind-to core', 'f2']);
  assert.deepEqual(a.positionals, ['f1', 'f2']);
  assert.deepEqual(a.values, {
    output: 'x.txt',
    mode: 'fast',
    depth: 16,
    window: 0.5,
    tag: ['a', 'b'],
    extra: '--bind-to core',
    quiet: false,
    loud: false,
    secret: undefined,
  });
  assert.deepEqual([...a.given].sort(), ['depth', 'extra', 'output', 'tag', 'window']);
  // The last of a repeated single-value option wins (as argparse); `--` ends the options.
  const b = ok(['--mode', 'slow', '--mode', 'fast', '--', '-o']);
  assert.equal(b.values.mode, 'fast');
  assert.deepEqual(b.positionals, ['-o']);
});

test('-h or --help anywhere asks for help, whatever else is wrong', () => {
  assert.deepEqual(parseSubcommandArgs(SPEC, ['--bogus', '-h']), { help: true });
  assert.deepEqual(parseSubcommandArgs(SPEC, ['--help']), { help: true });
});

test('every problem is reported at once, each naming its option', () => {
  assert.deepEqual(problems(['--outptu', 'x', '--depth', '0x10', '--window', '0', '--mode', 'Fast', '--quiet=yes', '-o']), [
    "unknown option '--outptu' (did you mean --output?)",
    "--quiet is a switch and takes no value (got 'yes')",
    '-o/--output OUT: no value given',
    "--mode: invalid choice 'Fast'; valid choices: fast, slow",
    "--depth expects an integer from 1 to 64, got '0x10'",
    "--window expects seconds > 0, got '0'",
    'give at least one input file (FILE), got 0',
  ]);
  assert.deepEqual(problems(['a', '-o', '--loud']), ["-o/--output OUT: no value given (got the option '--loud')"]);
  assert.deepEqual(problems(['a', 'b', 'c', '--depth', '1.5']), [
    "--depth expects an integer from 1 to 64, got '1.5'",
    'give at most two input files (FILE), got 3',
  ]);
  assert.deepEqual(problems(['a', '--quiet', '--loud']), ['give either --quiet or --loud, not both']);
});

test('positional choices, exact counts, required options and required groups', () => {
  const spec = {
    about: 'x',
    positional: { name: 'KIND', noun: 'kind', min: 1, max: 1, choices: ['run', 'replay'], hint: 'see kv-cache schema' },
    options: {
      dir: { kind: 'string', value: 'DIR', required: true, help: 'd' },
      pid: { kind: 'number', value: 'N', integer: true, min: 1, help: 'p' },
      command: { kind: 'string', value: '"CMD"', help: 'c' },
    },
    groups: [{ options: ['pid', 'command'], required: true }],
  } as const satisfies ArgsSpec;
  const p = parseSubcommandArgs(spec, ['walk']);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, [
    '--dir DIR is required',
    'give exactly one of --pid N or --command "CMD"',
    "invalid kind 'walk'; valid: run, replay",
  ]);
  const q = parseSubcommandArgs(spec, ['--dir', 'd', '--pid', '3', 'run', 'replay']);
  assert.ok(!q.help);
  assert.deepEqual(q.problems, ['give exactly one kind (KIND), got 2; see kv-cache schema']);
  const none = parseSubcommandArgs({ about: 'x', options: {} }, ['stray']);
  assert.ok(!none.help);
  assert.deepEqual(none.problems, ["unexpected argument 'stray' (this command takes options only)"]);
});

test('the usage line: positionals, groups, options marked for it, then [options] for the rest (hidden ones never)', () => {
  assert.equal(usageLine('thing', SPEC), 'kv-cache thing FILE… [--quiet | --loud] [options]');
  const base = { about: 'x', options: {} } as const;
  assert.equal(usageLine('a', { ...base, positional: { name: 'K', noun: 'k', min: 0, max: 1, choices: ['x', 'y'] } }), 'kv-cache a [x|y]');
  assert.equal(usageLine('a', { ...base, positional: { name: 'R.json', noun: 'r', min: 2, max: Infinity } }), 'kv-cache a R.json R.json…');
  assert.equal(usageLine('a', { ...base, positional: { name: 'D', noun: 'd', min: 0, max: Infinity } }), 'kv-cache a [D…]');
  assert.equal(
    usageLine('a', {
      about: 'x',
      options: {
        out: { kind: 'string', short: 'o', value: 'F', inUsage: true, help: 'h' },
        dir: { kind: 'string', value: 'D', required: true, help: 'h' },
      },
    }),
    'kv-cache a --dir D [-o F]',
  );
});

test('--help: usage, about, each visible option with its default, then -h', () => {
  assert.equal(
    subcommandHelp('thing', SPEC),
    [
      'Usage: kv-cache thing FILE… [--quiet | --loud] [options]',
      '',
      'Does a thing to FILEs.',
      '',
      '  -o, --output OUT   Where to write (default: out_<stamp>.txt)',
      '  --mode MODE        How (default: fast)',
      '  --depth N          How deep (default: 8)',
      '  --window S         How long',
      '  --tag TAG          A label; may be repeated',
      '  --extra "ARGS"     Passed on',
      '  --quiet            Say less',
      '  --loud             Say more',
      '  -h, --help         Show this help',
    ].join('\n'),
  );
});
