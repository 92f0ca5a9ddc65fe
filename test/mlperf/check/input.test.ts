// What the check reads, on directories written here: links inside a run are never followed, a broken
// summary is evidence (not a crash), a path that is neither a run nor a results file is an input
// error, the division's sources must agree, and nothing read from a file reaches the console raw.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { readCheckInput, CheckInputError } from '../../../src/mlperf/check/input.js';
import { checkDocument, checkLines, CheckDocumentSchema } from '../../../src/mlperf/check/report.js';
import { runCheck } from '../../../src/mlperf/check/rules.js';
import { readManifest } from '../../../src/mlperf/collect.js';
import { withTempDir } from '../../util/temp-dir.js';
import { rankDoc } from './fixtures.js';

const NOW = new Date('2026-01-01T00:00:00Z');

/** A run directory of option 1, one trial, ranks 0 and 1, with a run.json saying OPEN. */
async function writeRun(dir: string): Promise<string> {
  const trial = join(dir, 'option_1', 'trial_1');
  for (const r of [0, 1]) {
    await mkdir(join(trial, `rank_${r}`), { recursive: true });
    await writeFile(join(trial, `rank_${r}`, 'kvcache_results_x.json'), JSON.stringify(rankDoc(1, 1, r)));
  }
  await writeFile(join(dir, 'run.json'), JSON.stringify({ division: 'open', total_ranks: 2, npernode: 2, host_count: 1 }));
  return trial;
}

const statusOf = (dir: string, id: string): string | undefined =>
  runCheck(readCheckInput(dir, undefined, NOW)).results.find((r) => r.id === id)?.status;

test("a rank directory that is a link is not followed: that rank is missing (6.3.3.1 FAIL), the link's target unread", async () => {
  await withTempDir(async (dir) => {
    const run = join(dir, 'run');
    const trial = await writeRun(run);
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'kvcache_results_x.json'), JSON.stringify(rankDoc(1, 1, 2)));
    await symlink(elsewhere, join(trial, 'rank_2'));
    const input = readCheckInput(run, undefined, NOW);
    assert.deepEqual(
      input.trials[0].files.map((f) => f.rank),
      [0, 1],
    );
    const r = runCheck(input).results.find((x) => x.id === '6.3.3.1');
    assert.equal(r?.status, 'FAIL');
    assert.equal(
      r?.evidence[0].value,
      `${join(trial, 'rank_2')}: a symbolic link (not followed: merge reads only the run directory itself)`,
    );
  });
});

test('a summary that is a link is not read (CANNOT TELL); one that is not JSON is a FAIL naming why', async () => {
  await withTempDir(async (dir) => {
    const run = join(dir, 'run');
    await writeRun(run);
    await writeFile(join(dir, 'real.json'), JSON.stringify({ options: {} }));
    await symlink(join(dir, 'real.json'), join(run, 'kvcache_run_summary_1.json'));
    assert.equal(statusOf(run, '6.3.4.1'), 'CANNOT TELL');
    await writeFile(join(run, 'kvcache_run_summary_2.json'), '{ not json');
    const r = runCheck(readCheckInput(run, undefined, NOW)).results.find((x) => x.id === '6.3.4.1');
    assert.equal(r?.status, 'FAIL');
    assert.equal(r?.evidence[0].value, 'not JSON');
  });
});

test('input errors: nothing there, a FIFO, an empty directory, a file that is no results document, a division that contradicts run.json', async () => {
  await withTempDir(async (dir) => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await writeFile(join(dir, 'x.json'), '{"a": 1}');
    await mkdir(join(dir, 'empty'));
    const run = join(dir, 'run');
    await writeRun(run);
    const cases: Array<[string, 'closed' | undefined, RegExp]> = [
      [join(dir, 'none'), undefined, /\/none: not found \(a run directory of kv-cache mlperf, or a results file\)$/],
      [fifo, undefined, /\/fifo: neither a run directory nor a results file$/],
      [
        join(dir, 'empty'),
        undefined,
        /\/empty: no run\.json and no rank results \(rank_<N>\/kvcache_results_\*\.json\) under it: not a run directory$/,
      ],
      [join(dir, 'x.json'), undefined, /\/x\.json: not a readable results file \(not a results document: /],
      [run, 'closed', /^--division closed, but .*\/run\/run\.json records the division open$/],
    ];
    for (const [path, division, message] of cases)
      assert.throws(
        () => readCheckInput(path, division, NOW),
        (e: unknown) => e instanceof CheckInputError && message.test(e.message),
        path,
      );
  });
});

test('names with control characters reach the console escaped, one line each; the document validates against its schema', async () => {
  await withTempDir(async (dir) => {
    const run = join(dir, 'run\n\u001b[2Kforged');
    await writeRun(run);
    const doc = checkDocument(runCheck(readCheckInput(run, undefined, NOW)));
    CheckDocumentSchema.parse(doc);
    const lines = checkLines(doc);
    assert.equal(lines[0], `kv-cache check ${dir}/run\\n\\e[2Kforged: run directory, division OPEN (run.json division)`);
    // eslint-disable-next-line no-control-regex -- the point: no raw control character in any line
    for (const l of lines) assert.doesNotMatch(l, /[\n\u001b]/);
  });
});

test("run.json's sequence is believed field by field: a malformed field is absent, the others stand", async () => {
  await withTempDir(async (dir) => {
    const sequence = {
      seed: -1,
      start_delay_sec: 90,
      inter_option_delay_sec: 'ninety',
      config: null,
      overrides: {},
      results_dir: { path: '/r' },
    };
    await writeFile(join(dir, 'run.json'), JSON.stringify({ division: 'closed', total_ranks: 2, sequence }));
    const seq = readManifest(dir)?.sequence;
    assert.deepEqual(
      [seq?.seed, seq?.start_delay_sec, seq?.inter_option_delay_sec, seq?.config, seq?.overrides, seq?.results_dir],
      [undefined, 90, undefined, null, {}, undefined],
    );
  });
});
