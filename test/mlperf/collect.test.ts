// collect.ts against a results directory written by someone hostile: bounded by what is on disk,
// no link followed, no FIFO waited on, no file quoted.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { collectRun, readManifest } from '../../src/mlperf/collect.js';
import { mergeRun } from '../../src/mlperf/merge.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { runResultFixture } from '../report/fixtures.js';
import { withTempDir } from '../util/temp-dir.js';

const goodDoc = (): string => JSON.stringify(buildResultsJson(runResultFixture()));

function rankFile(trial: string, rank: number, text: string): string {
  mkdirSync(join(trial, `rank_${rank}`), { recursive: true });
  const path = join(trial, `rank_${rank}`, 'kvcache_results_1.json');
  writeFileSync(path, text);
  return path;
}

test('an empty rank_99999999 directory is named, not expanded into 10^8 missing ranks', () =>
  withTempDir(async (dir) => {
    const trial = join(dir, 'option_1', 'trial_1');
    rankFile(trial, 0, goodDoc());
    mkdirSync(join(trial, 'rank_99999999'));
    const { trials, meta } = collectRun([dir], new Date(0));
    assert.equal(trials.length, 1);
    assert.deepEqual(trials[0].missing, [
      `${join(trial, 'rank_99999999')}: not a rank directory of a run (rank numbers run from 0 to 999999)`,
    ]);
    assert.equal(meta.totalRanks, 1);
  }));

test('a high but believable rank number: the absent ranks before it are one line, and counted', () =>
  withTempDir(async (dir) => {
    const trial = join(dir, 'option_1', 'trial_1');
    rankFile(trial, 0, goodDoc());
    mkdirSync(join(trial, 'rank_999999'));
    const { trials, meta } = collectRun([dir], new Date(0));
    assert.deepEqual(trials[0].missing, [
      `${join(trial, 'rank_999999')}/kvcache_results_*.json: no results file (the rank failed or was stopped before saving)`,
      `${join(trial, 'rank_1')} … rank_999998: ranks 1–999998 (999998) wrote nothing`,
    ]);
    assert.equal(trials[0].rankCount, 1_000_000);
    assert.equal(meta.totalRanks, 1_000_000);
    assert.equal(mergeRun(trials, meta).options['1'].rank_count, 1_000_000);
  }));

test('run.json with total_ranks 1e9 is not believed: the files say how many ranks there are', () =>
  withTempDir(async (dir) => {
    rankFile(join(dir, 'option_1', 'trial_1'), 0, goodDoc());
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ total_ranks: 1e9, trials_per_option: 1e9, host_count: 1, division: 'closed' }));
    assert.deepEqual(readManifest(dir), { total_ranks: undefined, trials_per_option: undefined, host_count: 1, division: 'closed' });
    const { trials, meta } = collectRun([dir], new Date(0));
    assert.equal(meta.totalRanks, 1);
    assert.equal(meta.trialsPerOption, 1);
    assert.deepEqual(trials[0].missing, []);
  }));

test('run.json as a FIFO or a link to /dev/zero is passed over at once (no hang, no 2 GB read)', () =>
  withTempDir(async (dir) => {
    rankFile(join(dir, 'option_1', 'trial_1'), 0, goodDoc());
    execFileSync('mkfifo', [join(dir, 'run.json')]);
    assert.equal(readManifest(dir), undefined);
    const other = join(dir, 'other');
    mkdirSync(other);
    symlinkSync('/dev/zero', join(other, 'run.json'));
    assert.equal(readManifest(other), undefined);
    assert.equal(collectRun([dir, other], new Date(0)).meta.totalRanks, 1);
  }));

test('symlink loops and links out of the run directory are never followed', () =>
  withTempDir(async (dir) => {
    const run = join(dir, 'run');
    rankFile(join(run, 'option_1', 'trial_1'), 0, goodDoc());
    for (let k = 0; k < 10; k++) symlinkSync('.', join(run, `l${k}`));
    // Another run's trial, linked in as if it were an option of this one.
    const outside = join(dir, 'outside', 'trial_1');
    rankFile(outside, 0, goodDoc());
    symlinkSync(join(dir, 'outside'), join(run, 'option_9'));
    const { trials } = collectRun([run], new Date(0));
    assert.deepEqual(
      trials.map((t) => [t.option, t.trial, t.files.length]),
      [['1', 1, 1]],
    );
  }));

test('a symlinked rank file or rank directory is reported as such, and a secret it points at is never quoted', () =>
  withTempDir(async (dir) => {
    const secret = join(dir, 'secret');
    writeFileSync(secret, '{"password": "hunter2"');
    const trial = join(dir, 'run', 'option_1', 'trial_1');
    rankFile(trial, 0, goodDoc());
    mkdirSync(join(trial, 'rank_1'));
    symlinkSync(secret, join(trial, 'rank_1', 'kvcache_results_1.json'));
    symlinkSync(join(dir, 'run', 'option_1', 'trial_1', 'rank_0'), join(trial, 'rank_2'));
    const bad = rankFile(trial, 3, 'hunter2 is not JSON');
    const { trials } = collectRun([join(dir, 'run')], new Date(0));
    assert.deepEqual(trials[0].missing, [
      `${join(trial, 'rank_1', 'kvcache_results_1.json')}: not a readable results file (is a symbolic link (not followed))`,
      `${join(trial, 'rank_2')}: a symbolic link (not followed: merge reads only the run directory itself)`,
      `${bad}: not a readable results file (not JSON)`,
    ]);
    assert.equal(JSON.stringify(trials).includes('hunter2'), false);
  }));

test('a FIFO named like a rank file is refused at once', () =>
  withTempDir(async (dir) => {
    const trial = join(dir, 'option_1', 'trial_1');
    mkdirSync(join(trial, 'rank_0'), { recursive: true });
    execFileSync('mkfifo', [join(trial, 'rank_0', 'kvcache_results_1.json')]);
    const { trials } = collectRun([dir], new Date(0));
    assert.deepEqual(trials[0].missing, [
      `${join(trial, 'rank_0', 'kvcache_results_1.json')}: not a readable results file (is a FIFO (named pipe), not a regular file)`,
    ]);
  }));
