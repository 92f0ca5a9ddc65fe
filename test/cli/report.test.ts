// `kv-cache report` and `kv-cache compare` through the real command: bad input is one message and exit
// 2 with nothing written; good input writes the report / prints the table.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { inTempDir, runCli } from '../e2e/run-cli.js';
import type { CliRun } from '../e2e/run-cli.js';
import { fixtureDoc } from '../report/html/docs.js';

function assertBadInput(r: CliRun, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

/** Writes the fixture run and the bad inputs the tests use into `dir`. */
function files(dir: string): Record<'good' | 'other' | 'notJson' | 'foreign' | 'replay' | 'future', string> {
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const future = fixtureDoc() as unknown as { kvcache_bench: { schema_version: string } };
  future.kvcache_bench.schema_version = '2.99.0';
  return {
    good: write('good.json', JSON.stringify(fixtureDoc())),
    other: write('other.json', JSON.stringify(fixtureDoc())),
    notJson: write('not.json', '{ "truncated": '),
    foreign: write('foreign.json', '{"name": "package"}'),
    replay: write('replay.json', JSON.stringify({ replay: {}, kvcache_bench: { tool: 'kvcache-bench', schema_version: '2.0.0' } })),
    future: write('future.json', JSON.stringify(future)),
  };
}

test('kv-cache report: bad input → one message, exit 2, nothing written', () =>
  inTempDir(async (dir) => {
    const f = files(dir);
    const out = join(dir, 'r.html');
    const cases: Array<[string[], RegExp]> = [
      [[join(dir, 'missing.json'), '-o', out], /^kv-cache report: error: .*missing\.json: file not found\n$/],
      [[f.notJson, '-o', out], /^kv-cache report: error: .*not\.json: not JSON \(.*\); expected a kv-cache results file\n$/],
      [[f.foreign, '-o', out], /foreign\.json: not a kv-cache results file \(no kvcache_bench\.tool \/ schema_version\)/],
      // A replay's results are accepted (test/e2e/report-kinds.test.ts); one without its fields is named as a bad replay file.
      [[f.replay, '-o', out], /replay\.json: not a valid kv-cache replay results file: replay\.trace: Invalid input: expected string/],
      [
        [f.future, '-o', out],
        /future\.json: schema_version 2\.99\.0 is newer than this kvcache-bench knows; this kvcache-bench reads schema 2\.x up to /,
      ],
      [[f.good, '-o', dir], /--output .* is a directory; give a file path/],
      [[f.good, '-o', f.good], /is the same file as results file/],
      [[f.good, '-o', join(dir, 'x.json')], /ends in \.json; give the HTML file's path/],
      [['-o', out], /give at least one results file/],
      [[f.good, '--bogus'], /^kv-cache report: error: Invalid configuration: unknown option '--bogus'\nUsage: kv-cache report /],
    ];
    for (const [args, message] of cases) assertBadInput(await runCli(['report', ...args], { cwd: dir }), message);
    // Two bad files: both named in the one message.
    const both = await runCli(['report', f.notJson, f.future, '-o', out]);
    assertBadInput(both, /not\.json: not JSON[^\n]*\n[^\n]*future\.json: schema_version 2\.99\.0/);
    assert.deepEqual(readdirSync(dir).sort(), ['foreign.json', 'future.json', 'good.json', 'not.json', 'other.json', 'replay.json']);
  }));

test('kv-cache report writes one HTML file (its directory made), and --help says what it does', () =>
  inTempDir(async (dir) => {
    const f = files(dir);
    const out = join(dir, 'sub', 'r.html');
    const r = await runCli(['report', f.good, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Report written to ${out.replace(/[.]/g, '\\.')} \\(\\d+ KiB\\)\\n$`));
    assert.ok(readFileSync(out, 'utf8').startsWith('<!DOCTYPE html>'));
    const help = await runCli(['report', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: kv-cache report RESULTS\.json… \[-o FILE\]\n\nWrites one self-contained HTML report/);
    assert.match(help.stdout, /^ {2}-o, --output FILE {3}The HTML file to write \(default: report\.html\)$/m);
    const top = await runCli(['--help']);
    assert.match(top.stdout, /kv-cache report RESULTS\.json… \[-o FILE\] +Writes a self-contained HTML report/);
    assert.match(top.stdout, /kv-cache compare RESULTS\.json RESULTS\.json… \[--html FILE\] +Prints headline figures/);
  }));

test('kv-cache compare: a table with ratios; --html writes the comparison view; bad input exits 2 with nothing written', () =>
  inTempDir(async (dir) => {
    const f = files(dir);
    assertBadInput(
      await runCli(['compare', f.good]),
      /give at least two results files \(RESULTS\.json\), got 1; for one run use kv-cache report\nUsage: kv-cache compare /,
    );
    assertBadInput(await runCli(['compare', f.good, f.future]), /future\.json: schema_version 2\.99\.0 is newer/);
    mkdirSync(join(dir, 'd'));
    assertBadInput(await runCli(['compare', f.good, f.other, '--html', join(dir, 'd')]), /--html .* is a directory/);
    const ok = await runCli(['compare', f.good, f.other, '--html', join(dir, 'c.html')]);
    assert.equal(ok.code, 0, ok.stderr);
    const lines = ok.stdout.split('\n');
    assert.equal(lines[4], 'Figure                     Unit   #1         #2         #2 ÷ #1');
    assert.equal(lines[5], 'Storage read               GiB/s  0.400      0.400      ×1.00 ?');
    assert.match(ok.stdout, /Report written to .*c\.html/);
    assert.ok(existsSync(join(dir, 'c.html')));
  }));
