// Every kind of results file the tool writes goes through `report`, `compare` and `aggregate`: the
// reports read results through the results schema itself (report/html/run-input.ts), so a
// decode-only run (no write percentiles) or a trace-mode run (no storage percentiles) is a report,
// not "expected number, received undefined"; a replay's results and an mlperf run's rank files and
// merged summary are accepted too (report/html/inputs.ts), its plan manifest refused by name.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { onPath } from '../../src/cli/mlperf.js';
import { parseCsv } from '../util/csv.js';
import { inTempDir, QUICK_RUN, runCli, shareGptText, smallWorkloadArgs } from './run-cli.js';

const MPI_SKIP = onPath('mpirun') ? false : 'mpirun is not on PATH (apt-get install openmpi-bin; .ci/run installs it)';

const BURST_HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

test('report, compare and aggregate accept synthetic, decode-only, prefill-only, trace-mode, ShareGPT, BurstGPT, trials and replay results', async () => {
  await inTempDir(async (dir) => {
    const small = await smallWorkloadArgs(dir);
    const runs = join(dir, 'runs');
    await mkdir(runs);
    await writeFile(join(dir, 'sg.json'), shareGptText([2, 1]));
    const burst = join(dir, 'burst');
    await mkdir(burst);
    await writeFile(
      join(burst, 'BurstGPT_1.csv'),
      [
        BURST_HEADER,
        ...[0, 1, 2].map((i) => `${i * 0.01},ChatGPT,${(i + 1) * 100},${(i + 1) * 20},${(i + 1) * 120},Conversation log`),
      ].join('\n'),
    );
    const kinds: Record<string, string[]> = {
      synthetic: [...small, '--duration', '1'],
      decode_only: [...small, '--duration', '1', '--decode-only'],
      prefill_only: [...small, '--duration', '1', '--prefill-only'],
      trace_mode: [...small, '--duration', '1', '--io-trace-log', join(dir, 'io.csv')],
      sharegpt: ['--duration', '30', '--dataset-path', join(dir, 'sg.json'), '--replay-cycles', '1', '--tokenizer', 'chars'],
      burstgpt: ['--duration', '30', '--use-burst-trace', '--burst-trace-path', burst, '--trace-speedup', '0', '--replay-cycles', '1'],
      trials: [...small, '--duration', '1', '--trials', '2'],
    };
    const files: string[] = [];
    for (const [kind, args] of Object.entries(kinds)) {
      const out = join(runs, `${kind}.json`);
      const r = await runCli([...QUICK_RUN, ...args, '--cache-dir', join(dir, `c_${kind}`), '--create-cache-dir', '--output', out]);
      assert.ok(existsSync(out), `${kind}: exit ${r.code}: ${r.stderr}`);
      files.push(out);
      const rep = await runCli(['report', out, '-o', join(dir, `${kind}.html`)]);
      assert.equal(rep.code, 0, `${kind}: ${rep.stderr}`);
      assert.equal(rep.stderr, '');
    }
    const cmp = await runCli(['compare', ...files]);
    assert.equal(cmp.code, 0, cmp.stderr);
    assert.equal(cmp.stdout.split('\n').filter((l) => /^ {2}#\d+ {2}/.test(l)).length, files.length);
    const all = await runCli(['report', ...files, '-o', join(dir, 'all.html')]);
    assert.equal(all.code, 0, all.stderr);

    // The trace-mode run's I/O trace, replayed: a report of its own, beside the runs in compare, a row of aggregate.
    const replayOut = join(runs, 'replay.json');
    const rp = await runCli([
      'replay',
      join(dir, 'io.csv'),
      '--cache-dir',
      join(dir, 'c_replay'),
      '--create-cache-dir',
      '--output',
      replayOut,
    ]);
    assert.equal(rp.code, 0, rp.stderr);
    const rr = await runCli(['report', replayOut, '-o', join(dir, 'replay.html')]);
    assert.equal(rr.code, 0, rr.stderr);
    assert.equal(rr.stderr, '');
    const replayHtml = await readFile(join(dir, 'replay.html'), 'utf8');
    assert.ok(replayHtml.includes('id="section-replay"'));
    assert.ok(!replayHtml.includes('id="section-throughput"'), 'no run section for a replay alone');
    const withReplay = await runCli(['compare', files[0], replayOut]);
    assert.equal(withReplay.code, 0, withReplay.stderr);
    assert.match(withReplay.stdout, /^Validity {2,}\S+( \S+)? {2,}no verdict$/m);
    assert.match(withReplay.stdout, /^Requests {2,}req\/s {2,}\S+ +n\/a$/m);

    const agg = await runCli(['aggregate', runs, '-o', join(dir, 'all.csv')]);
    assert.equal(agg.code, 0, agg.stderr);
    const trialFiles = readdirSync(runs).filter((n) => n.includes('.trial-'));
    assert.equal(trialFiles.length, 2);
    assert.match(agg.stdout, new RegExp(`Aggregated ${files.length + 1} results file\\(s\\) \\(${trialFiles.length} skipped\\)`));
    const rows = parseCsv(await readFile(join(dir, 'all.csv'), 'utf8')).filter((r) => r.length > 1);
    assert.deepEqual(
      rows.slice(1).map((r) => r[0]),
      [...files, replayOut].sort(),
    );
  });
});

/** The one *.json file of a directory. */
function onlyJson(dir: string): string {
  const names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  assert.equal(names.length, 1, `${dir}: ${names.join(' ')}`);
  return join(dir, names[0]);
}

test(
  'report, compare and aggregate accept the rank files of an mlperf run (2 ranks under mpirun) and its merged summary; its manifest is refused by name',
  { skip: MPI_SKIP },
  async () => {
    await inTempDir(async (dir) => {
      const small = await smallWorkloadArgs(dir);
      const results = join(dir, 'results');
      await mkdir(results);
      await mkdir(join(dir, 'cache'));
      const ml = await runCli([
        'mlperf',
        '--open',
        '--option',
        '1',
        '--trials',
        '1',
        '--num-processes',
        '2',
        ...['--start-delay', '0', '--end-delay', '0', '--inter-option-delay', '0', '--skip-precondition'],
        ...[...small, '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0'],
        ...['--results-dir', results, '--cache-dir', join(dir, 'cache')],
      ]);
      assert.equal(ml.code, 0, ml.stderr + ml.stdout);
      const [runName] = readdirSync(results);
      const runDir = join(results, runName);
      const trial = join(runDir, 'option_1', 'trial_1');
      const ranks = [0, 1].map((r) => onlyJson(join(trial, `rank_${r}`)));
      const summary = join(runDir, readdirSync(runDir).find((n) => n.startsWith('kvcache_run_summary_')) ?? 'missing');

      for (const [i, file] of [...ranks, summary].entries()) {
        const rep = await runCli(['report', file, '-o', join(dir, `r${i}.html`)]);
        assert.equal(rep.code, 0, `${file}: ${rep.stderr}`);
        assert.equal(rep.stderr, '');
      }
      assert.match(await readFile(join(dir, 'r0.html'), 'utf8'), /, rank 0 of 2 on /);
      assert.ok((await readFile(join(dir, 'r2.html'), 'utf8')).includes('id="section-merged-summary"'));

      const cmp = await runCli(['compare', ...ranks, summary]);
      assert.equal(cmp.code, 0, cmp.stderr);
      assert.match(cmp.stdout, /^ {2}#3 {2}kvcache_run_summary_\S+ option 1 \(2 ranks\) {2}/m);
      const both = await runCli(['report', ...ranks, summary, '-o', join(dir, 'all.html')]);
      assert.equal(both.code, 0, both.stderr);

      const manifest = await runCli(['report', join(runDir, 'run.json'), '-o', join(dir, 'manifest.html')]);
      assert.equal(manifest.code, 2);
      assert.equal(
        manifest.stderr,
        `kv-cache report: error: ${join(runDir, 'run.json')}: the plan manifest of a kv-cache mlperf run (run.json): it holds no results; give its kvcache_run_summary_*.json or its rank files (option_*/trial_*/rank_*/*.json)\n`,
      );
      assert.equal(existsSync(join(dir, 'manifest.html')), false);

      const csv = join(dir, 'ranks.csv');
      const agg = await runCli(['aggregate', join(trial, 'rank_0'), join(trial, 'rank_1'), runDir, '-o', csv]);
      assert.equal(agg.code, 0, agg.stderr);
      assert.match(agg.stdout, /Aggregated 3 results file\(s\) \(1 skipped\)/);
      const rows = parseCsv(await readFile(csv, 'utf8')).filter((r) => r.length > 1);
      assert.deepEqual(
        rows.slice(1).map((r) => r[0]),
        [`${summary} option 1`, ...ranks].sort(),
      );
    });
  },
);
