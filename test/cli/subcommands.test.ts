// The subcommand table: one meaning per short option, an -o on every subcommand that writes a file,
// the usage lines of `kv-cache --help` made from the declarations, and mlperf declaring every flag
// its request reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSubcommandArgs, SHORT_OPTIONS, subcommandHelp } from '../../src/cli/sub-args.js';
import { DISTILL_ARGS, MERGE_ARGS, MLPERF_ARGS } from '../../src/cli/subcommand-args.js';
import { SUBCOMMANDS } from '../../src/cli/subcommands.js';
import { DEFAULT_MAX_IODEPTH } from '../../src/telemetry/distill.js';
import { VALUE_FLAGS } from '../../src/mlperf/options.js';
import { runCli } from '../e2e/run-cli.js';

test('a short option means the same in every subcommand, and every --output has -o', () => {
  for (const s of SUBCOMMANDS)
    for (const [name, o] of Object.entries(s.args.options)) {
      if (o.short !== undefined) assert.equal(SHORT_OPTIONS[o.short], name, `${s.name}: -${o.short} is --${SHORT_OPTIONS[o.short]}`);
      if (name === 'output') assert.equal(o.short, 'o', `${s.name} --output`);
      assert.notEqual(name, 'help', `${s.name}: --help is every subcommand's own`);
    }
  for (const s of SUBCOMMANDS)
    for (const g of s.args.groups ?? [])
      for (const n of g.options) assert.ok(Object.hasOwn(s.args.options, n), `${s.name}: group names --${n}`);
  const withO = SUBCOMMANDS.filter((s) => Object.values(s.args.options).some((o) => o.short === 'o')).map((s) => s.name);
  assert.deepEqual(withO, ['replay', 'aggregate', 'merge', 'distill-fio', 'trace', 'report']);
});

test('the usage lines of kv-cache --help come from the declarations', () => {
  assert.deepEqual(
    SUBCOMMANDS.map((s) => s.usage),
    [
      'kv-cache replay TRACE [options]',
      'kv-cache schema [run|replay|size]',
      'kv-cache models [--json]',
      'kv-cache aggregate DIR… [-o FILE]',
      'kv-cache mlperf --results-dir DIR [options]',
      'kv-cache merge DIR… [-o FILE]',
      'kv-cache check PATH… [--json FILE] [options]',
      'kv-cache distill-fio FILE [-o OUT.ini | --stdout] [options]',
      'kv-cache trace (--pid N | --command "CMD") [--fio] [options]',
      'kv-cache report RESULTS.json… [-o FILE]',
      'kv-cache compare RESULTS.json RESULTS.json… [--html FILE]',
      'kv-cache size [--capacities LIST] [--json FILE] [options]',
    ],
  );
  for (const s of SUBCOMMANDS) {
    const help = subcommandHelp(s.name, s.args);
    assert.ok(help.startsWith(`Usage: ${s.usage}\n\n`), s.name);
    assert.match(help, /^ {2}-h, --help +Show this help$/m, s.name);
  }
});

test("distill-fio's help states the distiller's own default iodepth clamp", () => {
  assert.equal(DISTILL_ARGS.options['max-iodepth'].defaultText, String(DEFAULT_MAX_IODEPTH));
});

test('mlperf declares every flag its request reads (the OPEN option values included)', () => {
  for (const flag of Object.values(VALUE_FLAGS)) assert.ok(Object.hasOwn(MLPERF_ARGS.options, flag), flag);
  const p = parseSubcommandArgs(MLPERF_ARGS, ['--results-dir', 'r', '--cache-dir', 'c', '--mpi-params', '--bind-to core', '--open']);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  assert.equal(p.args.values['mpi-params'], '--bind-to core');
});

test('merge takes -o like every subcommand that writes a file (it used to answer -o with its help)', async () => {
  const p = parseSubcommandArgs(MERGE_ARGS, ['run-dir', '-o', 'summary.json']);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  assert.equal(p.args.values.output, 'summary.json');
  const r = await runCli(['merge', '-o', 'summary.json']);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr,
    'kv-cache merge: error: Invalid configuration: give at least one directory (DIR), got 0\nUsage: kv-cache merge DIR… [-o FILE]\n',
  );
});
