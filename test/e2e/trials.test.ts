// End-to-end: --trials (per-trial files, the median trial in --output, the TRIALS block, a signal
// during a trial), --validation-trace (the validation key; a bad file refused before anything is
// created) and the storage-under-test line, through the real command on tiny-1b, storage only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, inTempDir, runCli, SMALL_USERS } from './run-cli.js';
import type { CliRun } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';

const BASE = ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'];

/** Storage-only args for a short run in `dir` (cache dir `dir/c`, small users from a config file). */
async function shortRun(dir: string, seconds: number): Promise<string[]> {
  const config = join(dir, 'small.yaml');
  await writeFile(config, SMALL_USERS);
  return [
    ...BASE,
    '--config',
    config,
    '--num-users',
    '3',
    '--duration',
    String(seconds),
    '--seed',
    '5',
    '--cache-dir',
    join(dir, 'c'),
    '--create-cache-dir',
  ];
}

/** Runs the command and sends `signal` once a line of its output matches `when`. */
function runUntil(args: readonly string[], when: RegExp, signal: NodeJS.Signals): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!sent && when.test(stdout)) {
        sent = true;
        child.kill(signal);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, sig) => resolve({ code, signal: sig, stdout, stderr }));
  });
}

test('--trials 2: a results file per trial, --output holds the median trial with the trials block', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli([...(await shortRun(dir, 2)), '--trials', '2', '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    const trial1 = await readValidResults(join(dir, 'r.trial-1.json'));
    const trial2 = await readValidResults(join(dir, 'r.trial-2.json'));
    const doc = await readValidResults(out);
    const t = doc.kvcache_bench.trials;
    assert.ok(t !== undefined);
    assert.equal(trial1.kvcache_bench.trials, undefined, 'a trial file holds that trial only');
    assert.deepEqual([t.requested, t.completed, t.median_by, t.cv_kind], [2, 2, 'storage_bytes_per_sec', 'sample']);
    assert.deepEqual(
      t.runs.map((x) => [x.trial, x.file, x.counted, x.stop_reason]),
      [
        [1, join(dir, 'r.trial-1.json'), true, 'duration'],
        [2, join(dir, 'r.trial-2.json'), true, 'duration'],
      ],
    );
    // The lower middle of two trials is the one with fewer storage bytes/s; --output is its results.
    const rate = (d: typeof doc): number =>
      d.kvcache_bench.storage_bytes.read_bytes_per_sec + d.kvcache_bench.storage_bytes.write_bytes_per_sec;
    const median = rate(trial1) <= rate(trial2) ? trial1 : trial2;
    assert.equal(t.median_trial, median === trial1 ? 1 : 2);
    assert.deepEqual(
      { ...doc, kvcache_bench: { ...doc.kvcache_bench, trials: undefined } },
      { ...median, kvcache_bench: { ...median.kvcache_bench, trials: undefined } },
    );
    assert.equal(t.stats.storage_bytes_per_sec?.min, Math.min(rate(trial1), rate(trial2)));
    assert.match(r.stdout, /--- Trial 1 of 2 ---[\s\S]*--- Trial 2 of 2 ---/);
    assert.match(r.stdout, /### TRIALS \(2 of 2 completed; median trial [12] by storage bytes\/s; MiB = 2\^20 bytes\) ###/);
    assert.match(r.stdout, /Storage under test: .*\/c — file system \S+, .*direct I\/O|Storage under test: .*buffered I\/O/);
    assert.deepEqual(await readdir(join(dir, 'c')), [], 'each trial removed its entry files');
  });
});

test('a signal during trial 2 saves trial 1, trial 2 marked interrupted and not counted, and exits 130', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runUntil([...(await shortRun(dir, 2)), '--trials', '3', '--output', out], /--- Trial 2 of 3 ---/, 'SIGINT');
    assert.equal(r.code, 130, r.stderr);
    const trial2 = await readValidResults(join(dir, 'r.trial-2.json'));
    assert.equal(trial2.kvcache_bench.stop_reason, 'interrupted');
    assert.equal(existsSync(join(dir, 'r.trial-3.json')), false);
    const t = (await readValidResults(out)).kvcache_bench.trials;
    assert.deepEqual(
      t?.runs.map((x) => [x.trial, x.counted]),
      [
        [1, true],
        [2, false],
      ],
    );
    assert.equal(t?.median_trial, 1);
    assert.equal(t?.completed, 1);
  });
});

test('--validation-trace: the run compared with the trace in the validation key and the VALIDATION block', async () => {
  await inTempDir(async (dir) => {
    const trace = join(dir, 'trace.json');
    const entry = (i: number, hit: boolean) => ({
      timestamp: i,
      request_id: `r${i}`,
      user_id: 'u1',
      context_tokens: 400 + 100 * i,
      generation_tokens: 32,
      phase: 'prefill',
      cache_hit: hit,
      cache_tier: 'storage',
      read_bytes: hit ? 1 << 20 : 0,
      write_bytes: 1 << 20,
      read_latency_ms: 1,
      write_latency_ms: 2,
      model_name: 'tiny-1b',
    });
    await writeFile(trace, JSON.stringify([entry(0, false), entry(1, true), entry(2, true), entry(3, true)]));
    const out = join(dir, 'r.json');
    const r = await runCli([...(await shortRun(dir, 2)), '--validation-trace', trace, '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    const v = (await readValidResults(out)).validation;
    assert.ok(v !== undefined);
    assert.equal(v.trace_file, trace);
    assert.deepEqual(v.trace_stats, {
      total_requests: 4,
      cache_hit_rate: 0.75,
      read_write_ratio: 0.75,
      bytes_per_request: (7 << 20) / 4,
      context_tokens_mean: 550,
      context_tokens_p50: 500,
      context_tokens_p95: 700,
      generation_tokens_mean: 32,
    });
    assert.deepEqual(Object.keys(v.comparison), [
      'cache_hit_rate',
      'read_write_ratio',
      'bytes_per_request',
      'context_tokens_mean',
      'context_tokens_p50',
      'context_tokens_p95',
    ]);
    assert.match(r.stdout, /### VALIDATION \(vs .*trace\.json: 4 requests\) ###/);
  });
});

test('a missing or malformed validation trace: exit 2 naming the file and the problem, nothing created', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const args = await shortRun(dir, 2);
    const missing = await runCli([...args, '--validation-trace', join(dir, 'nope.json'), '--output', out]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /validation trace '.*nope\.json': file not found\. A valid file is a JSON array/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');
    await writeFile(join(dir, 'bad.json'), '[{"timestamp": 1}]');
    const bad = await runCli([...args, '--validation-trace', join(dir, 'bad.json'), '--output', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /record 0 field 'request_id' is missing/);
    assert.deepEqual((await readdir(dir)).sort(), ['bad.json', 'small.yaml'], 'no output, no cache dir');
  });
});

test('--trials with --io-trace-log is refused (one trace per run), and so is a trial file that is a directory', async () => {
  await inTempDir(async (dir) => {
    const r = await runCli([...BASE, '--trials', '2', '--io-trace-log', join(dir, 't.csv'), '--output', join(dir, 'r.json')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--io-trace-log records one run: it cannot be combined with --trials > 1/);
    await writeFile(join(dir, 'keep'), '');
    await mkdir(join(dir, 'r.trial-2.json'));
    const d = await runCli([...BASE, '--trials', '2', '--output', join(dir, 'r.json')]);
    assert.equal(d.code, 2);
    assert.match(d.stderr, /--output \(trial file\) .*r\.trial-2\.json is a directory/);
    assert.deepEqual((await readdir(dir)).sort(), ['keep', 'r.trial-2.json']);
  });
});
