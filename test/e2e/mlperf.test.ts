// `kv-cache mlperf` end to end: three ranks under mpirun on this host (short runs, no delays), the
// merged summary checked against the rank files; the barrier timeout of a rank alone; the CLOSED
// file-system rule; `kv-cache merge` of a run with a rank file removed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { onPath } from '../../src/cli/mlperf.js';
import { storageDeviceOf } from '../../src/metrics/diskstats.js';
import type { RunSummary } from '../../src/mlperf/merge.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { readValidResults } from '../report/validate-results.js';
import { withTempDir } from '../util/temp-dir.js';
import { BIN, runCli, SMALL_USERS } from './run-cli.js';

const MPIRUN = onPath('mpirun');
const MPI_SKIP = MPIRUN ? false : 'mpirun is not on PATH (apt-get install openmpi-bin; .ci/run installs it)';

/** One rank run with `env` added; `stdout` is kept only when asked (the runs' console is long). */
function runWithEnv(
  args: readonly string[],
  env: Record<string, string>,
  keepStdout = false,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', keepStdout ? 'pipe' : 'ignore', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, stdout }));
  });
}

async function rankFiles(trialDir: string): Promise<ResultsDocument[]> {
  const docs: ResultsDocument[] = [];
  for (const r of [0, 1, 2]) {
    const dir = join(trialDir, `rank_${r}`);
    const [name] = await readdir(dir);
    docs.push(await readValidResults(join(dir, name)));
  }
  return docs;
}

test(
  'mlperf --option all --open --trials 1 with 3 ranks under mpirun: the summary matches the rank files',
  { skip: MPI_SKIP },
  async () => {
    await withTempDir(async (dir) => {
      const results = join(dir, 'results');
      const cache = join(dir, 'cache');
      await mkdir(results);
      await mkdir(cache);
      await writeFile(join(dir, 'small.yaml'), SMALL_USERS);
      const run = await runCli([
        'mlperf',
        '--open',
        '--option',
        'all',
        '--trials',
        '1',
        '--num-processes',
        '3',
        ...['--start-delay', '0', '--end-delay', '0', '--inter-option-delay', '0', '--skip-precondition'],
        ...['--model', 'tiny-1b', '--num-users', '2', '--duration', '3', '--cpu-mem-gb', '0', '--config', join(dir, 'small.yaml')],
        ...['--results-dir', results, '--cache-dir', cache, '--no-progress'],
      ]);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stderr, /are on the same file system: writing results would load the storage under test/);
      const [runDir] = await readdir(results);
      const names = await readdir(join(results, runDir));
      const summaryName = names.find((n) => n.startsWith('kvcache_run_summary_'));
      assert.ok(summaryName !== undefined, names.join(' '));
      const summary = JSON.parse(await readFile(join(results, runDir, summaryName), 'utf8')) as RunSummary;
      assert.deepEqual(
        [summary.total_ranks, summary.host_count, summary.npernode, summary.trials_per_option, summary.partial_failure],
        [3, 1, 3, 1, false],
      );
      assert.deepEqual(Object.keys(summary.options), ['1', '2', '3']);
      for (const opt of ['1', '2', '3']) {
        const docs = await rankFiles(join(results, runDir, `option_${opt}`, 'trial_1'));
        const o = summary.options[opt];
        const sum = (f: (d: ResultsDocument) => number): number => docs.reduce((a, d) => a + f(d), 0);
        assert.equal(
          o.aggregated_read_bandwidth_gbps,
          sum((d) => d.summary.cache_stats.tier_storage_read_bandwidth_gbps),
        );
        assert.equal(
          o.aggregated_storage_throughput_tokens_per_sec,
          sum((d) => d.summary.storage_throughput_tokens_per_sec),
        );
        assert.equal(o.aggregated_device_read_p95_ms, Math.max(...docs.map((d) => d.summary.cache_stats.storage_read_device_p95_ms ?? 0)));
        assert.deepEqual([o.rank_count, o.trial_count, o.missing_files], [3, 1, []]);
        const ranks = docs.map((d) => d.kvcache_bench.ranks);
        assert.deepEqual(
          ranks.map((r) => [r?.rank, r?.world_size, r?.launcher]),
          [0, 1, 2].map((r) => [r, 3, 'openmpi']),
        );
        assert.deepEqual(
          docs.map((d) => d.seed),
          [42, 43, 44],
        );
        // One decision: every rank was given the same start and end instants.
        assert.equal(new Set(ranks.map((r) => r?.agreed_start_epoch_ms)).size, 1);
        assert.equal((ranks[0]?.agreed_end_epoch_ms ?? 0) - (ranks[0]?.agreed_start_epoch_ms ?? 0), 3000);
        const t = o.kvcache_bench.trials[0];
        const starts = ranks.map((r) => r?.window_start_epoch_ms ?? 0);
        const ends = ranks.map((r) => r?.window_end_epoch_ms ?? 0);
        assert.equal(t.common_window_sec, (Math.max(...ends) - Math.min(...starts)) / 1000);
        assert.equal(
          t.storage_read_bytes,
          sum((d) => d.kvcache_bench.storage_bytes.read_bytes),
        );
        assert.equal(t.storage_read_bytes_per_sec, t.storage_read_bytes / t.common_window_sec);
        assert.equal(t.start_spread_ms, Math.max(...starts) - Math.min(...starts));
        assert.equal(
          o.kvcache_bench.storage_read_device_latency.count,
          sum((d) => d.kvcache_bench.latency_histograms.storage_read_device?.count ?? 0),
        );
        // The flat layout's metadata calibrations, before and after the window, in turns: one meeting, then a turn per rank of the host.
        const barrier = await readdir(join(results, runDir, `option_${opt}`, 'trial_1', 'barrier'));
        for (const phase of ['calibrate-before', 'calibrate-after'])
          assert.deepEqual(
            barrier.filter((n) => n.startsWith(phase) && n.endsWith('.go.json')).sort(),
            [0, 1, 2].map((k) => `${phase}-turn-${k}.go.json`).concat(`${phase}.go.json`),
          );
      }
      // Merge again with one rank file gone: partial, named, no crash.
      const gone = join(results, runDir, 'option_2', 'trial_1', 'rank_1');
      await rm(gone, { recursive: true });
      const out = join(dir, 'again.json');
      const merged = await runCli(['merge', join(results, runDir), '--output', out]);
      assert.equal(merged.code, 0, merged.stderr);
      const again = JSON.parse(await readFile(out, 'utf8')) as RunSummary;
      assert.equal(again.partial_failure, true);
      assert.deepEqual(again.options['2'].missing_files, [`${gone}/kvcache_results_*.json: rank 1 wrote nothing`]);
    });
  },
);

test('a rank whose peer never arrives fails alone after --barrier-timeout, naming it; the late peer finds the abort', async () => {
  await withTempDir(async (dir) => {
    const args = [
      ...['--model', 'tiny-1b', '--generation-mode', 'none', '--num-users', '1', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'],
      ...['--duration', '2', '--no-progress', '--rank-output-base', dir, '--barrier-timeout', '1'],
    ];
    const r0 = await runWithEnv(args, { OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '2' });
    assert.equal(r0.code, 1, r0.stderr);
    // The first meeting of a flat run is its metadata calibration's (then 'start').
    assert.match(r0.stderr, /kv-cache: error: rank\(s\) 1 of 2 did not arrive at the 'calibrate-before' barrier within 1 s/);
    assert.equal(existsSync(join(dir, 'rank_0')), false, 'nothing measured, nothing saved');
    const r1 = await runWithEnv(args, { OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_SIZE: '2' });
    assert.equal(r1.code, 1, r1.stderr);
    assert.match(r1.stderr, /kv-cache: error: rank 0 gave up: rank\(s\) 1 of 2 did not arrive/);
  });
});

test('a calibration slower than half of --barrier-timeout gives up in its turn: the ranks go on, not calibrated, none times out', async () => {
  await withTempDir(async (dir) => {
    // A syncfs that hangs (a device with minutes of another writer's backlog): `sync -f` never returns in time.
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'sync'), '#!/bin/sh\nexec sleep 20\n', { mode: 0o755 });
    const cacheBase = join(dir, 'cache');
    await mkdir(cacheBase);
    const args = [
      ...['--model', 'tiny-1b', '--generation-mode', 'none', '--num-users', '1', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'],
      ...[
        '--duration',
        '2',
        '--no-progress',
        '--rank-output-base',
        join(dir, 'out'),
        '--rank-cache-base',
        cacheBase,
        '--barrier-timeout',
        '4',
      ],
    ];
    const env = (rank: number) => ({
      OMPI_COMM_WORLD_RANK: String(rank),
      OMPI_COMM_WORLD_SIZE: '2',
      PATH: `${bin}:${process.env.PATH ?? ''}`,
    });
    const device = await storageDeviceOf(cacheBase);
    if (device.kind !== 'device') {
      process.stdout.write(`# skipped: ${cacheBase} is on no single block device (${device.kind}), so nothing calibrates\n`);
      return;
    }
    const runs = await Promise.all([0, 1].map((r) => runWithEnv(args, env(r), true)));
    for (const [rank, r] of runs.entries()) {
      assert.equal(r.code, 0, `rank ${rank}: ${r.stderr}`);
      assert.match(
        r.stdout,
        /File-system metadata: not calibrated \(it was still running after 2 s, half of --barrier-timeout/,
        `rank ${rank}`,
      );
    }
  });
});

test("a rank killed in the window: its peer's end barrier fails, and the peer takes no calibration turn after it (it would wait out the timeout again)", async () => {
  await withTempDir(async (dir) => {
    const args = [
      ...['--model', 'tiny-1b', '--generation-mode', 'none', '--num-users', '1', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'],
      ...['--duration', '6', '--no-progress', '--rank-output-base', dir, '--barrier-timeout', '5'],
    ];
    const world = (rank: number) => ({ OMPI_COMM_WORLD_RANK: String(rank), OMPI_COMM_WORLD_SIZE: '2' });
    let kill1: ((s: NodeJS.Signals) => void) | undefined;
    let armed = false;
    const [r0, r1] = await Promise.all([
      runCli(args, { env: world(0) }),
      runCli(args, {
        env: world(1),
        onStart: (k) => (kill1 = k),
        // Its calibration before the window is over: the window opens ~1 s later and runs 6 s; killed in it.
        onStdout: (soFar) => {
          if (armed || !/^File-system metadata: .*before the window/m.test(soFar)) return;
          armed = true;
          setTimeout(() => kill1?.('SIGKILL'), 3500);
        },
      }),
    ]);
    assert.equal(r1.signal, 'SIGKILL', 'rank 1 was killed');
    assert.equal(r0.code, 0, r0.stderr);
    const [file] = (await readdir(join(dir, 'rank_0'))).filter((n) => n.endsWith('.json'));
    const k = (JSON.parse(await readFile(join(dir, 'rank_0', file ?? ''), 'utf8')) as ResultsDocument).kvcache_bench;
    assert.match(k.ranks?.barrier?.end_problem ?? '', /rank\(s\) 1 of 2 did not arrive at the 'end' barrier/);
    if (k.metadata_calibration !== undefined) {
      assert.match(r0.stdout, /File-system metadata: not calibrated after the window \(the end barrier failed: /);
      assert.equal(k.metadata_calibration.after_window, null);
    }
    assert.equal(existsSync(join(dir, 'barrier', 'calibrate-after.arrive.rank_0.json')), false, 'no turn taken');
  });
});

test('CLOSED refuses a cache dir on the results dir’s file system and locked flags, exit 2, nothing created', async () => {
  await withTempDir(async (dir) => {
    const run = await runCli(['mlperf', '--results-dir', dir, '--cache-dir', dir, '--trials', '1']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--trials is locked in CLOSED \(it uses 3\); run with --open to change it/);
    const again = await runCli(['mlperf', '--results-dir', dir, '--cache-dir', dir]);
    assert.equal(again.code, 2);
    assert.match(
      again.stderr,
      /are on the same file system: writing results would load the storage under test; CLOSED needs them on different file systems/,
    );
    assert.deepEqual(await readdir(dir), []);
  });
});
