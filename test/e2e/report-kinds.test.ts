// Every kind of results file a run writes goes through `report`, `compare` and `aggregate`: the
// reports read results through the results schema itself (report/html/run-input.ts), so a
// decode-only run (no write percentiles) or a trace-mode run (no storage percentiles) is a report,
// not "expected number, received undefined".
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { inTempDir, QUICK_RUN, runCli, shareGptText, smallWorkloadArgs } from './run-cli.js';

const BURST_HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

test('report, compare and aggregate accept synthetic, decode-only, prefill-only, trace-mode, ShareGPT, BurstGPT and trials results', async () => {
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

    // The trace-mode run's I/O trace, replayed: its results are a replay's, which aggregate names as such.
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
    assert.equal(rr.code, 2);
    assert.equal(
      rr.stderr,
      `kv-cache report: error: ${replayOut}: a kv-cache replay results file; expected the results JSON of a kv-cache run (--output)\n`,
    );

    const agg = await runCli(['aggregate', runs, '-o', join(dir, 'all.csv')]);
    assert.equal(agg.code, 0, agg.stderr);
    const trialFiles = readdirSync(runs).filter((n) => n.includes('.trial-'));
    assert.equal(trialFiles.length, 2);
    assert.match(agg.stdout, new RegExp(`Aggregated ${files.length} results file\\(s\\) \\(${trialFiles.length + 1} skipped\\)`));
    assert.match(agg.stdout, /^Skipped .*replay\.json: replay results \(kv-cache replay\), not a run$/m);
  });
});
