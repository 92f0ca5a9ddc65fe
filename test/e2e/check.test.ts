// `kv-cache check` on a real short run: `kv-cache mlperf --open` (2 ranks under mpirun, one 2 s trial
// of Option 1) with its results on a tmpfs of their own (mounted here: another file
// system than the cache, as 6.4.1 wants). That run is the clean OPEN fixture; an edited copy of it is
// the clean CLOSED one (its trial copied twice: CLOSED runs 3); further copies are each edited so that one rule fails alone. Root and mpirun
// are needed (the mount, the ranks); without them the file is skipped with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkPath, exitCodeOf } from '../../src/cli/check.js';
import { mergeAndSave } from '../../src/cli/merge.js';
import { onPath } from '../../src/cli/mlperf.js';
import { checkLines, CheckDocumentSchema } from '../../src/mlperf/check/report.js';
import type { CheckDocument } from '../../src/mlperf/check/report.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { runCli, SMALL_USERS } from './run-cli.js';

const SKIP =
  process.getuid?.() !== 0
    ? 'not root: the fixture run mounts a tmpfs for its results (another file system than the cache)'
    : !onPath('mpirun')
      ? 'mpirun is not on PATH (apt-get install openmpi-bin)'
      : false;
if (SKIP !== false) process.stdout.write(`# check e2e skipped: ${SKIP}\n`);

type Json = Record<string, unknown>;

async function editJson(path: string, change: (doc: Json) => void): Promise<void> {
  const doc = JSON.parse(await readFile(path, 'utf8')) as Json;
  change(doc);
  await writeFile(path, JSON.stringify(doc));
}

/** The results file of a rank directory (the run writes one). */
async function rankFile(run: string, option: number, trial: number, rank: number): Promise<string> {
  const dir = join(run, `option_${option}`, `trial_${trial}`, `rank_${rank}`);
  const [name] = (await readdir(dir)).filter((n) => n.endsWith('.json'));
  return join(dir, name);
}

async function editRank(run: string, option: number, trial: number, rank: number, change: (doc: ResultsDocument) => void): Promise<void> {
  await editJson(await rankFile(run, option, trial, rank), (d) => {
    change(d as unknown as ResultsDocument);
  });
}

async function summaryFile(run: string): Promise<string> {
  const [name] = (await readdir(run)).filter((n) => n.startsWith('kvcache_run_summary_'));
  return join(run, name);
}

const RANKS = [0, 1];

/** Every rank file of the run's `trials` trials, edited. */
async function eachRank(run: string, trials: number, change: (doc: ResultsDocument, trial: number, rank: number) => void): Promise<void> {
  for (let t = 1; t <= trials; t++)
    for (const r of RANKS)
      await editRank(run, 1, t, r, (d) => {
        change(d, t, r);
      });
}

/** Re-merges the run's summary after its rank files were edited (the summary then matches them again). */
async function remerge(run: string): Promise<void> {
  const path = await summaryFile(run);
  await rm(path);
  mergeAndSave([run], path, new Date());
}

function statuses(doc: CheckDocument): Record<string, string> {
  return Object.fromEntries(doc.rules.map((r) => [r.id, r.status]));
}

const OPEN_CLEAN: Record<string, string> = {
  '6.3.1.1': 'NOT APPLICABLE',
  '6.3.2.1': 'NOT APPLICABLE',
  '6.3.2.2': 'NOT APPLICABLE',
  '6.6.1': 'NOT APPLICABLE',
  '6.3.3.1': 'PASS',
  '6.3.3.2': 'PASS',
  '6.3.3.3': 'PASS',
  '6.3.3.4': 'NOT APPLICABLE',
  '6.4.1': 'PASS',
  '6.5.2': 'NOT APPLICABLE',
  '6.3.4.1': 'PASS',
  '6.3.4.2': 'PASS',
  '6.3.4.3': 'PASS',
  '6.3.4.4': 'PASS',
  'KB.1': 'PASS',
  'KB.2': 'PASS',
  'KB.3': 'PASS',
  'KB.4': 'PASS',
};
const CLOSED_CLEAN = { ...OPEN_CLEAN, '6.3.1.1': 'PASS', '6.3.2.1': 'PASS', '6.3.2.2': 'PASS', '6.6.1': 'PASS' };

describe('kv-cache check on a real short MLPerf run', { skip: SKIP }, () => {
  let work = '';
  let mounted = '';
  let openRun = '';
  let closedRun = '';
  let mlperfStdout = '';

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'kvcache-check-'));
    const results = join(work, 'results');
    const cache = join(work, 'cache');
    await mkdir(results);
    await mkdir(cache);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', results]);
    mounted = results;
    await writeFile(join(work, 'small.yaml'), SMALL_USERS);
    const run = await runCli([
      'mlperf',
      '--open',
      ...['--option', '1', '--trials', '1', '--num-processes', String(RANKS.length)],
      ...['--start-delay', '0', '--end-delay', '0', '--inter-option-delay', '0', '--skip-precondition'],
      ...['--model', 'tiny-1b', '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0', '--config', join(work, 'small.yaml')],
      ...['--results-dir', results, '--cache-dir', cache, '--no-progress'],
    ]);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    mlperfStdout = run.stdout;
    const [runDir] = await readdir(results);
    // The copies live outside the tmpfs; run.json keeps what the launching host recorded about both directories.
    openRun = join(work, 'open');
    await cp(join(results, runDir), openRun, { recursive: true });
    // The real verdicts depend on this machine's load (harness_saturated on a busy 2-core VM; other I/O
    // on the shared device): the fixture is made VALID, its device bytes its ranks' own, and re-merged,
    // so that each edit below breaks exactly one rule.
    const toolBytes = new Map<number, { read: number; written: number }>();
    await eachRank(openRun, 1, (d, t) => {
      const b = toolBytes.get(t) ?? { read: 0, written: 0 };
      toolBytes.set(t, {
        read: b.read + d.kvcache_bench.storage_bytes.read_bytes,
        written: b.written + d.kvcache_bench.storage_bytes.written_bytes,
      });
    });
    await eachRank(openRun, 1, (d, t) => {
      d.kvcache_bench.validity = { ...d.kvcache_bench.validity, valid: true, reasons: [] };
      const b = toolBytes.get(t);
      if (d.kvcache_bench.device_io !== null && b !== undefined)
        d.kvcache_bench.device_io = { ...d.kvcache_bench.device_io, read_bytes: b.read, written_bytes: b.written };
    });
    await remerge(openRun);
    // CLOSED: what `kv-cache mlperf` (CLOSED) would have recorded for Option 1 with these ranks.
    closedRun = join(work, 'closed');
    await cp(openRun, closedRun, { recursive: true });
    // CLOSED runs 3 trials: trial 1 copied as trials 2 and 3, each rank file naming its own path.
    for (const t of [2, 3]) {
      const to = join(closedRun, 'option_1', `trial_${t}`);
      await cp(join(closedRun, 'option_1', 'trial_1'), to, { recursive: true });
      for (const r of RANKS)
        await editRank(closedRun, 1, t, r, (d) => {
          const args = d.kvcache_bench.effective_config.args;
          for (const key of ['rank_output_base', 'output'])
            if (typeof args[key] === 'string') args[key] = args[key].replace(/\/trial_1(\/|$)/, `/trial_${t}$1`);
        });
    }
    await editJson(join(closedRun, 'run.json'), (m) => {
      m.division = 'closed';
      m.trials_per_option = 3;
      const seq = m.sequence as Json;
      Object.assign(seq, {
        seed: 42,
        start_delay_sec: 90,
        end_delay_sec: 90,
        inter_option_delay_sec: 90,
        config: null,
        preconditioned: true,
        overrides: {},
      });
    });
    await eachRank(closedRun, 3, (d) => {
      Object.assign(d.kvcache_bench.effective_config.args, {
        model: 'llama3.1-8b',
        num_users: 200,
        duration: 300,
        gpu_mem_gb: 0,
        cpu_mem_gb: 0,
        max_concurrent_allocs: 16,
        generation_mode: 'none',
        config: null,
      });
    });
    await remerge(closedRun);
  });

  after(async () => {
    if (mounted !== '') execFileSync('umount', [mounted]);
    if (work !== '') await rm(work, { recursive: true, force: true });
  });

  /** A copy of `base` edited by `change`, checked in-process: its document and console lines. */
  async function checkEdited(
    base: string,
    name: string,
    change: (run: string) => Promise<void>,
  ): Promise<{ doc: CheckDocument; lines: string[] }> {
    const run = join(work, name);
    await cp(base, run, { recursive: true });
    await change(run);
    const doc = checkPath(run, undefined);
    return { doc, lines: checkLines(doc) };
  }

  test('run.json records what the rank files cannot tell: the sequence, and both directories as this host sees them', async () => {
    const [runDir] = await readdir(mounted);
    const m = JSON.parse(await readFile(join(mounted, runDir, 'run.json'), 'utf8')) as { sequence: Json };
    const { results_dir: results, cache_dir: cache, ...rest } = m.sequence as { results_dir: Json; cache_dir: Json } & Json;
    assert.deepEqual(rest, {
      seed: 42,
      start_delay_sec: 0,
      end_delay_sec: 0,
      inter_option_delay_sec: 0,
      config: join(work, 'small.yaml'),
      preconditioned: false,
      overrides: { model: 'tiny-1b', 'num-users': 2, duration: 2, 'cpu-mem-gb': 0 },
      launch_host: hostname(),
    });
    assert.deepEqual([results.path, results.file_system, results.block_device], [mounted, 'tmpfs', null]);
    assert.deepEqual([cache.path, cache.file_system], [join(work, 'cache'), 'ext2/3/4']);
    assert.notEqual(results.device_id, cache.device_id);
  });

  test('kv-cache mlperf prints the check of its run last', () => {
    const lines = mlperfStdout.trimEnd().split('\n');
    assert.match(
      lines[lines.length - 1],
      /^Check verdict: (PASS|FAIL|CANNOT TELL) \(\d+ PASS, \d+ FAIL, 6 NOT APPLICABLE, \d+ CANNOT TELL\)$/,
    );
    assert.ok(lines.includes('6.3.1.1 kvcacheFixedWorkloadPerOption NOT APPLICABLE'), mlperfStdout);
  });

  test('the clean OPEN run: CLOSED-only rules NOT APPLICABLE, the rest PASS, exit 0; --json writes the same as a document', async () => {
    const out = join(work, 'open-check.json');
    const r = await runCli(['check', openRun, '--json', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const doc = CheckDocumentSchema.parse(JSON.parse(await readFile(out, 'utf8')));
    assert.deepEqual(statuses(doc), OPEN_CLEAN);
    assert.equal(doc.verdict, 'PASS');
    assert.equal(r.stdout, `${checkLines(doc).join('\n')}\n`);
    const printed = await runCli(['check', openRun, '--json', '-']);
    assert.deepEqual(CheckDocumentSchema.parse(JSON.parse(printed.stdout)).rules, doc.rules);
  });

  test('the clean CLOSED run (the OPEN run edited to Option 1 and the CLOSED sequence) passes every rule that applies', async () => {
    const r = await runCli(['check', closedRun]);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(statuses(checkPath(closedRun, undefined)), CLOSED_CLEAN);
  });

  const OPEN_CASES: Array<{ id: string; why: string; change: (run: string) => Promise<void> }> = [
    { id: '6.3.3.1', why: 'run.json says 3 ranks', change: (run) => editJson(join(run, 'run.json'), (m) => void (m.total_ranks = 3)) },
    {
      id: '6.3.3.2',
      why: 'a client ran 1 user instead of 2',
      change: (run) => editRank(run, 1, 1, 1, (d) => void (d.kvcache_bench.effective_config.args.num_users = 1)),
    },
    {
      id: '6.3.3.3',
      why: "rank 1 used rank 0's cache dir",
      change: async (run) => {
        const cache = (JSON.parse(await readFile(await rankFile(run, 1, 1, 0), 'utf8')) as ResultsDocument).kvcache_bench.effective_config
          .args.cache_dir;
        await editRank(run, 1, 1, 1, (d) => void (d.kvcache_bench.effective_config.args.cache_dir = cache));
      },
    },
    {
      id: '6.4.1',
      why: 'results on the cache file system',
      change: (run) =>
        editJson(join(run, 'run.json'), (m) => {
          const seq = m.sequence as Record<string, Json>;
          seq.results_dir = { ...seq.cache_dir, path: '/results' };
        }),
    },
    {
      id: '6.3.4.1',
      why: 'the summary read bandwidth doubled',
      change: async (run) =>
        editJson(await summaryFile(run), (s) => {
          const o = (s.options as Record<string, Json>)['1'];
          o.aggregated_read_bandwidth_gbps = (o.aggregated_read_bandwidth_gbps as number) * 2;
        }),
    },
    {
      id: '6.3.4.2',
      why: 'the summary throughput changed',
      change: async (run) =>
        editJson(
          await summaryFile(run),
          (s) => void ((s.options as Record<string, Json>)['1'].aggregated_storage_throughput_tokens_per_sec = 1),
        ),
    },
    {
      id: '6.3.4.3',
      why: 'the summary write p95 changed',
      change: async (run) =>
        editJson(await summaryFile(run), (s) => void ((s.options as Record<string, Json>)['1'].aggregated_device_write_p95_ms = 0.001)),
    },
    {
      id: 'KB.1',
      why: 'a rank NOT VALID',
      change: (run) =>
        editRank(run, 1, 1, 0, (d) => {
          d.kvcache_bench.validity = {
            ...d.kvcache_bench.validity,
            valid: false,
            reasons: [{ code: 'harness_saturated', message: 'edited' }],
          };
        }),
    },
    {
      id: 'KB.2',
      why: "rank 1's window moved an hour earlier",
      change: (run) =>
        editRank(run, 1, 1, 1, (d) => {
          const r = d.kvcache_bench.ranks;
          if (r != null)
            Object.assign(r, {
              window_start_epoch_ms: r.window_start_epoch_ms - 3.6e6,
              window_end_epoch_ms: r.window_end_epoch_ms - 3.6e6,
            });
        }),
    },
    {
      id: 'KB.3',
      why: 'the device read 1 GiB more than the ranks',
      change: async (run) => {
        for (const r of RANKS)
          await editRank(run, 1, 1, r, (d) => {
            if (d.kvcache_bench.device_io !== null) d.kvcache_bench.device_io.read_bytes += 2 ** 30;
          });
      },
    },
    {
      id: 'KB.4',
      why: 'a rank interrupted',
      change: (run) =>
        editRank(run, 1, 1, 0, (d) => {
          d.kvcache_bench.stop_reason = 'interrupted';
          d.kvcache_bench.interrupted = true;
        }),
    },
  ];

  for (const c of OPEN_CASES)
    test(`OPEN, ${c.why}: ${c.id} fails alone, exit 1`, async () => {
      const { doc, lines } = await checkEdited(openRun, `open-${c.id}`, c.change);
      assert.deepEqual(statuses(doc), { ...OPEN_CLEAN, [c.id]: 'FAIL' });
      assert.ok(
        lines.some((l) => l.startsWith(`${c.id} `) && l.endsWith(' FAIL')),
        lines.join('\n'),
      );
      assert.equal(exitCodeOf([doc]), 1);
    });

  test('OPEN, the device wrote 1 GiB more than the ranks, within their calibrated metadata: KB.3 passes and names the metadata', async () => {
    const { doc } = await checkEdited(openRun, 'open-KB.3-metadata', async (run) => {
      for (const r of RANKS)
        await editRank(run, 1, 1, r, (d) => {
          if (d.kvcache_bench.device_io !== null) d.kvcache_bench.device_io.written_bytes += 2 ** 30; // the host counts it once
          d.kvcache_bench.metadata_calibration = {
            layout: 'flat',
            files_per_round: 128,
            file_bytes: 65_536,
            rounds_bytes_per_file: [9000, 9000, 9000],
            bytes_per_new_file: 9000,
            rounds_bytes_per_file_in_new_dir: null,
            bytes_per_new_dir: null,
            new_dirs_in_window: 0,
            disturbed: false,
            seconds: 0.4,
            new_files_in_window: 100_000,
            after_window: null,
            allowed_bytes_per_new_file: 9000,
            expected_write_bytes: 2 ** 30 / RANKS.length, // the two ranks' bills together: the excess
          };
        });
    });
    assert.deepEqual(statuses(doc), OPEN_CLEAN);
    const kb3 = doc.rules.find((r) => r.id === 'KB.3')?.evidence.find((e) => e.field.startsWith('device '));
    assert.match(String(kb3?.value), /\(\+ up to 1073741824 B of file-system metadata\): device_writes_metadata$/);
  });

  const CLOSED_CASES: Array<{ id: string; why: string; change: (run: string) => Promise<void> }> = [
    {
      id: '6.3.1.1',
      why: 'a rank ran cpu-mem-gb 8',
      change: (run) => editRank(run, 1, 1, 1, (d) => void (d.kvcache_bench.effective_config.args.cpu_mem_gb = 8)),
    },
    { id: '6.3.2.1', why: 'a rank ran seed 7', change: (run) => editRank(run, 1, 2, 0, (d) => void (d.seed = 7)) },
    {
      id: '6.3.2.2',
      why: 'a rank autoscaled',
      change: (run) => editRank(run, 1, 3, 1, (d) => void (d.kvcache_bench.effective_config.args.enable_autoscaling = true)),
    },
    {
      id: '6.6.1',
      why: 'a rank ran buffered I/O',
      change: (run) => editRank(run, 1, 1, 0, (d) => void (d.kvcache_bench.effective_config.args.io_mode = 'buffered')),
    },
    {
      id: '6.3.4.4',
      why: 'every rank kept everything in the CPU tier',
      change: (run) => eachRank(run, 3, (d) => void (d.summary.cache_stats.storage_entries = 0)),
    },
  ];

  for (const c of CLOSED_CASES)
    test(`CLOSED, ${c.why}: ${c.id} fails alone, exit 1`, async () => {
      const { doc, lines } = await checkEdited(closedRun, `closed-${c.id}`, c.change);
      assert.deepEqual(statuses(doc), { ...CLOSED_CLEAN, [c.id]: 'FAIL' });
      assert.ok(
        lines.some((l) => l.startsWith(`${c.id} `) && l.endsWith(' FAIL')),
        lines.join('\n'),
      );
    });

  test('a rule failing through the command: exit 1 and the rule id in the output', async () => {
    const run = join(work, 'open-6.3.3.3');
    const r = await runCli(['check', run]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^6\.3\.3\.3 kvcachePerClientIsolation FAIL$/m);
    assert.match(r.stdout, /^Check verdict: FAIL \(11 PASS, 1 FAIL, 6 NOT APPLICABLE, 0 CANNOT TELL\)$/m);
  });

  test('a cache dir on NFS: 6.5.2 CANNOT TELL (nothing fails, exit 0)', async () => {
    const { doc } = await checkEdited(openRun, 'open-nfs', (run) =>
      editRank(run, 1, 1, 0, (d) => {
        if (d.kvcache_bench.machine.cache_dir !== null) d.kvcache_bench.machine.cache_dir.file_system = 'nfs';
      }),
    );
    assert.deepEqual(statuses(doc), { ...OPEN_CLEAN, '6.5.2': 'CANNOT TELL' });
    assert.equal(exitCodeOf([doc]), 0);
  });

  test('unreadable input: one message, exit 2, nothing written', async () => {
    const out = join(work, 'never.json');
    await mkdir(join(work, 'empty'));
    for (const [path, message] of [
      [join(work, 'nothing-here'), /nothing-here: not found \(a run directory of kv-cache mlperf, or a results file\)/],
      [join(work, 'empty'), /empty: no run\.json and no rank results \(rank_<N>\/kvcache_results_\*\.json\) under it: not a run directory/],
      [join(work, 'small.yaml'), /small\.yaml: not a readable results file \(not JSON\)/],
    ] as const) {
      const r = await runCli(['check', path, '--json', out]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
      assert.equal(r.stdout, '');
      await assert.rejects(readFile(out));
    }
  });

  test('one rank file alone: the run rules NOT APPLICABLE, CLOSED rules CANNOT TELL without --division', async () => {
    const file = await rankFile(openRun, 1, 1, 0);
    const doc = checkPath(file, undefined);
    assert.equal(statuses(doc)['6.3.1.1'], 'CANNOT TELL');
    assert.equal(statuses(doc)['6.3.3.1'], 'NOT APPLICABLE');
    const open = await runCli(['check', file, '--division', 'open']);
    assert.equal(open.code, 0, open.stdout);
    assert.match(open.stdout, /^6\.3\.1\.1 kvcacheFixedWorkloadPerOption NOT APPLICABLE$/m);
  });
});
