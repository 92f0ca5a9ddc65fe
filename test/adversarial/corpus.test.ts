// The adversarial corpus, through the real command: results directories, JSON files and names that
// a hostile colleague could leave in a shared directory. Each case must end (the test's timeout is
// the hang bound), write nothing outside its target, print no control character from the input and
// give one clear message. Memory is bounded by construction in each reader (see collect.ts, latency.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_RESULTS_FILE_BYTES } from '../../src/cli/aggregate.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { hasControl } from '../../src/util/safe-text.js';
import { inTempDir, runCli } from '../e2e/run-cli.js';
import { runResultFixture } from '../report/fixtures.js';

const TIMEOUT = { timeout: 120_000 };
const OSC52 = '\u001b]52;c;cm0gLXJmIH4=\u0007';
const FAKE_VALID = '\u001b[2K\rVALID';

/** No control character but the line ends: what reached the console is inert. */
function assertInert(output: string, what: string): void {
  assert.equal(hasControl(output.replaceAll('\n', '')), false, `${what} printed a control character`);
}

function runDoc(edit: (d: ReturnType<typeof buildResultsJson>) => void = () => undefined): string {
  const d = structuredClone(buildResultsJson(runResultFixture()));
  edit(d);
  return JSON.stringify(d);
}

test('merge: a hostile run directory ends, names each bad file inertly, and writes only its summary', TIMEOUT, () =>
  inTempDir(async (dir) => {
    const run = join(dir, 'run');
    const trial = join(run, 'option_1', 'trial_1');
    mkdirSync(join(trial, 'rank_0'), { recursive: true });
    writeFileSync(join(trial, 'rank_0', 'kvcache_results_1.json'), runDoc());
    // A FIFO manifest, symlink loops, a link out of the run, an absurd rank, a secret behind a link,
    // a corrupt histogram, and a file name carrying terminal escapes.
    execFileSync('mkfifo', [join(run, 'run.json')]);
    for (let k = 0; k < 10; k++) symlinkSync('.', join(run, `l${k}`));
    const outside = join(dir, 'other', 'trial_1', 'rank_0');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'kvcache_results_1.json'), runDoc());
    symlinkSync(join(dir, 'other'), join(run, 'option_9'));
    mkdirSync(join(trial, 'rank_99999999'));
    writeFileSync(join(dir, 'secret'), '{"password": "hunter2"');
    mkdirSync(join(trial, 'rank_1'));
    symlinkSync(join(dir, 'secret'), join(trial, 'rank_1', 'kvcache_results_1.json'));
    mkdirSync(join(trial, 'rank_2'));
    writeFileSync(
      join(trial, 'rank_2', `kvcache_results_${OSC52}.json`),
      runDoc((d) => {
        const h = d.kvcache_bench.latency_histograms;
        h.storage_read_device = { encoded: 'HISTFAAAAB', count: 1, sum_ms: 1 };
      }),
    );
    const out = join(dir, 'summary.json');
    const r = await runCli(['merge', run, '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    assertInert(r.stdout + r.stderr, 'merge');
    assert.equal((r.stdout + readFileSync(out, 'utf8')).includes('hunter2'), false);
    const summary = JSON.parse(readFileSync(out, 'utf8')) as { options: Record<string, { missing_files: string[]; rank_count: number }> };
    assert.deepEqual(Object.keys(summary.options), ['1']);
    assert.equal(summary.options['1'].rank_count, 3);
    assert.equal(summary.options['1'].missing_files.length, 3);
    assert.deepEqual(readdirSync(dir).sort(), ['other', 'run', 'secret', 'summary.json']);
  }),
);

test('report and compare: escapes in a results file stay text; a FIFO input is one message and exit 2', TIMEOUT, () =>
  inTempDir(async (dir) => {
    const a = join(dir, 'a.json');
    const b = join(dir, `b${OSC52}.json`);
    writeFileSync(a, runDoc());
    writeFileSync(
      b,
      runDoc((d) => {
        d.kvcache_bench.storage_io_mode = `direct${OSC52}${FAKE_VALID}`;
        d.kvcache_bench.validity = { valid: false, reasons: [{ code: `x${FAKE_VALID}`, message: OSC52 }], warnings: [] };
      }),
    );
    const cmp = await runCli(['compare', a, b]);
    assert.equal(cmp.code, 0, cmp.stderr);
    assertInert(cmp.stdout, 'compare');
    const rep = await runCli(['report', a, b, '-o', join(dir, 'r.html')]);
    assert.equal(rep.code, 0, rep.stderr);
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const bad = await runCli(['report', fifo, '-o', join(dir, 'f.html')]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, `kv-cache report: error: ${fifo}: is a FIFO (named pipe), not a regular file\n`);
    assert.equal(readdirSync(dir).includes('f.html'), false);
  }),
);

test('aggregate -o x.csv: formula cells from a results file are neutralised', TIMEOUT, () =>
  inTempDir(async (dir) => {
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    writeFileSync(
      join(runs, 'evil.json'),
      runDoc((d) => {
        d.kvcache_bench.storage_io_mode = '=HYPERLINK("http://evil.example","x")';
        d.kvcache_bench.storage_file_system = "=cmd|' /C calc'!A0";
      }),
    );
    const out = join(dir, 'x.csv');
    const r = await runCli(['aggregate', runs, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const csv = readFileSync(out, 'utf8');
    assert.equal(/(^|,)"?[=+@]/m.test(csv.split('\n').slice(1).join('\n')), false, csv.slice(0, 300));
    assert.ok(csv.includes(`'=cmd|' /C calc'!A0`));
  }),
);

test(
  'aggregate and report: a results file over the 256 MiB bound (a sparse file: no disk filled) is one message, exit 2, nothing read or written',
  TIMEOUT,
  () =>
    inTempDir(async (dir) => {
      const runs = join(dir, 'runs');
      mkdirSync(runs);
      writeFileSync(join(runs, 'a.json'), runDoc());
      const huge = join(runs, 'huge.json');
      writeFileSync(huge, '');
      truncateSync(huge, MAX_RESULTS_FILE_BYTES + 1); // a hole: takes no disk blocks
      const out = join(dir, 'out', 'x.csv');
      const r = await runCli(['aggregate', runs, '-o', out]);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        `kv-cache aggregate: error: Invalid configuration: ${huge}: is 256.0 MiB (268435457 bytes); a results file may be at most 256 MiB (268435456 bytes) (aggregate parses each file whole in memory)\nUsage: kv-cache aggregate DIR… [-o FILE]\n`,
      );
      const rep = await runCli(['report', huge, '-o', join(dir, 'r.html')]);
      assert.equal(rep.code, 2);
      assert.equal(
        rep.stderr,
        `kv-cache report: error: ${huge}: is 256.0 MiB (268435457 bytes); at most 256 MiB (268435456 bytes) are accepted\n`,
      );
      assert.deepEqual(readdirSync(dir), ['runs'], 'nothing written');
      assert.deepEqual(readdirSync(runs).sort(), ['a.json', 'huge.json']);
    }),
);

test('mlperf --dry-run: a results dir named "res\\nid #" cannot smuggle a command line into the plan', TIMEOUT, () =>
  inTempDir(async (dir) => {
    const results = join(dir, 'res\nid #');
    mkdirSync(results);
    mkdirSync(join(dir, 'cache'));
    const r = await runCli([
      'mlperf',
      '--dry-run',
      '--open',
      '--option',
      '1',
      '--trials',
      '1',
      '--results-dir',
      results,
      '--cache-dir',
      join(dir, 'cache'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    for (const l of lines) assert.match(l, /^(# |sleep |\S*node )/, l);
    assert.equal(lines.includes('id #'), false);
    assert.deepEqual(readdirSync(results), []);
  }),
);
