// Every rule on hand-made evidence (fixtures.ts): the clean CLOSED run passes every rule that applies,
// and each edit makes exactly the rule it concerns change its verdict.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCheck } from '../../../src/mlperf/check/rules.js';
import type { CheckInput, Status } from '../../../src/mlperf/check/types.js';
import { closedRun, docOf, edit, RANKS, summaryOf } from './fixtures.js';

const statuses = (input: CheckInput): Record<string, Status> => Object.fromEntries(runCheck(input).results.map((r) => [r.id, r.status]));

const CLEAN: Record<string, Status> = {
  '6.3.1.1': 'PASS',
  '6.3.2.1': 'PASS',
  '6.3.2.2': 'PASS',
  '6.6.1': 'PASS',
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

/** Only `id` differs from the clean run, and it has `status`; returns its evidence lines as text. */
function onlyChange(input: CheckInput, id: string, status: Status): string[] {
  const got = runCheck(input);
  assert.deepEqual(Object.fromEntries(got.results.map((r) => [r.id, r.status])), { ...CLEAN, [id]: status });
  const rule = got.results.find((r) => r.id === id);
  return (rule?.evidence ?? []).map((e) => `${e.file}: ${e.field} = ${e.value} (required: ${e.required})`);
}

test('the clean CLOSED run: every applicable rule passes, the verdict is PASS', () => {
  const c = runCheck(closedRun());
  assert.deepEqual(statuses(closedRun()), CLEAN);
  assert.equal(c.verdict, 'PASS');
});

describe('each rule fails alone', () => {
  test('6.3.1.1: a rank ran cpu-mem-gb 8 in Option 2 (KVCache-1 says 4)', () => {
    const lines = onlyChange(
      edit(closedRun(), (c) => void (docOf(c, 2, 1, 1).kvcache_bench.effective_config.args.cpu_mem_gb = 8)),
      '6.3.1.1',
      'FAIL',
    );
    assert.equal(lines[0], 'option_2/trial_1/rank_1/kvcache_results_x.json: effective_config.args.cpu_mem_gb = 8 (required: 4 (Option 2))');
  });

  test('6.3.2.1: a rank ran seed 50 instead of 42 + its rank', () => {
    const lines = onlyChange(
      edit(closedRun(), (c) => void (docOf(c, 1, 2, 1).seed = 50)),
      '6.3.2.1',
      'FAIL',
    );
    assert.equal(lines[0], 'option_1/trial_2/rank_1/kvcache_results_x.json: seed = 50 (required: 42 + rank 1 = 43)');
  });

  test('6.3.2.1: two trials of Option 3 only', () => {
    const input = edit(closedRun(), (c) => {
      c.trials = c.trials.filter((t) => !(t.option === '3' && t.trial === 3));
      c.summary = { path: c.summary?.path ?? '', options: summaryOf(c.trials) };
    });
    assert.equal(onlyChange(input, '6.3.2.1', 'FAIL')[0], 'option_3: trial directories = 2 (required: 3)');
  });

  test('6.3.2.1: --config given (in the ranks and in run.json)', () => {
    const input = edit(closedRun(), (c) => {
      docOf(c, 1, 1, 0).kvcache_bench.effective_config.args.config = '/etc/x.yaml';
      if (c.manifest?.fields.sequence !== undefined) c.manifest.fields.sequence.config = '/etc/x.yaml';
    });
    assert.deepEqual(onlyChange(input, '6.3.2.1', 'FAIL').slice(0, 2), [
      'option_1/trial_1/rank_0/kvcache_results_x.json: effective_config.args.config = /etc/x.yaml (required: null (no --config))',
      'run.json: sequence.config = /etc/x.yaml (required: null (no --config))',
    ]);
  });

  test('6.3.2.1: the inter-option delay is judged against both texts: 90 and 20 pass (naming which), 30 fails, absent cannot be told', () => {
    const withDelay = (d: number | undefined): CheckInput =>
      edit(closedRun(), (c) => {
        if (c.manifest?.fields.sequence !== undefined) c.manifest.fields.sequence.inter_option_delay_sec = d;
      });
    const delayLine = (input: CheckInput): string | undefined =>
      runCheck(input)
        .results.find((r) => r.id === '6.3.2.1')
        ?.evidence.find((e) => e.field === 'sequence.inter_option_delay_sec')?.value;
    assert.equal(delayLine(withDelay(90)), "90 s: satisfies 6.3.2.1 (90 s), not 6.6.1 / upstream's code (20 s)");
    assert.equal(delayLine(withDelay(20)), "20 s: satisfies 6.6.1 / upstream's code (20 s), not 6.3.2.1 (90 s)");
    assert.equal(statuses(withDelay(20))['6.3.2.1'], 'PASS');
    assert.equal(delayLine(withDelay(30)), '30 s: satisfies neither text');
    onlyChange(withDelay(30), '6.3.2.1', 'FAIL');
    assert.equal(delayLine(withDelay(undefined)), 'not recorded');
    onlyChange(withDelay(undefined), '6.3.2.1', 'CANNOT TELL');
  });

  test('6.3.2.2: a rank ran with --enable-autoscaling', () => {
    const lines = onlyChange(
      edit(closedRun(), (c) => void (docOf(c, 3, 3, 0).kvcache_bench.effective_config.args.enable_autoscaling = true)),
      '6.3.2.2',
      'FAIL',
    );
    assert.equal(
      lines[0],
      'option_3/trial_3/rank_0/kvcache_results_x.json: effective_config.args.enable_autoscaling = true (required: false)',
    );
  });

  test('6.6.1: a rank ran --io-mode buffered; run.json records an override; a 10 s start delay', () => {
    const lines = onlyChange(
      edit(closedRun(), (c) => void (docOf(c, 1, 1, 1).kvcache_bench.effective_config.args.io_mode = 'buffered')),
      '6.6.1',
      'FAIL',
    );
    assert.equal(
      lines[0],
      'option_1/trial_1/rank_1/kvcache_results_x.json: effective_config.args.io_mode = buffered (required: "direct" (the default))',
    );
    const manifest = edit(closedRun(), (c) => {
      const s = c.manifest?.fields.sequence;
      if (s !== undefined) Object.assign(s, { overrides: { 'num-users': 5 }, start_delay_sec: 10 });
    });
    assert.deepEqual(onlyChange(manifest, '6.6.1', 'FAIL').slice(0, 2), [
      'run.json: sequence.start_delay_sec = 10 (required: 90)',
      'run.json: sequence.overrides = {"num-users":5} (required: {} (no option value overridden))',
    ]);
  });

  test('6.3.3.1: run.json says 3 ranks on one host with npernode 2; a trial misses a rank file', () => {
    const total = edit(closedRun(), (c) => {
      if (c.manifest !== undefined) c.manifest.fields.total_ranks = 3;
    });
    assert.equal(statuses(total)['6.3.3.1'], 'FAIL');
    const missing = edit(closedRun(), (c) => {
      c.trials = c.trials.map((t, i) =>
        i === 4 ? { ...t, files: t.files.slice(0, 1), missing: [`${t.dir}/rank_1/kvcache_results_*.json: rank 1 wrote nothing`] } : t,
      );
    });
    const got = statuses(missing);
    assert.equal(got['6.3.3.1'], 'FAIL');
    // The missing rank also changes option 2's recomputed figures, and its host's device now saw more than its ranks wrote.
    assert.deepEqual(
      Object.keys(got).filter((id) => got[id] !== CLEAN[id]),
      ['6.3.3.1', '6.3.4.1', '6.3.4.2', 'KB.3'],
    );
  });

  test('6.3.3.2: OPEN with num-users 4 recorded as an override, one client ran 2', () => {
    const input = edit(closedRun(), (c) => {
      c.division = 'open';
      if (c.manifest !== undefined) c.manifest = { ...c.manifest, fields: { ...c.manifest.fields, division: 'open' } };
      const s = c.manifest?.fields.sequence;
      if (s !== undefined) s.overrides = { 'num-users': 4 };
      for (const t of c.trials) for (const f of t.files) f.doc.kvcache_bench.effective_config.args.num_users = 4;
      docOf(c, 1, 1, 1).kvcache_bench.effective_config.args.num_users = 2;
    });
    const got = runCheck(input).results.find((r) => r.id === '6.3.3.2');
    assert.equal(got?.status, 'FAIL');
    assert.equal(got?.evidence[0].value, '2');
    assert.equal(got?.evidence[0].required, '4 per client');
  });

  test('6.3.3.3: two ranks of a trial share a cache directory', () => {
    const lines = onlyChange(
      edit(closedRun(), (c) => void (docOf(c, 1, 1, 1).kvcache_bench.effective_config.args.cache_dir = '/cache/rank_0')),
      '6.3.3.3',
      'FAIL',
    );
    assert.deepEqual(lines.slice(0, 2), [
      'option_1/trial_1/rank_1/kvcache_results_x.json: effective_config.args.cache_dir = /cache/rank_0 (required: <cache-dir>/rank_1/)',
      'option_1/trial_1: effective_config.args.cache_dir = host-a:/cache/rank_0 shared by ranks 0, 1 (required: one cache directory per rank)',
    ]);
  });

  test('6.3.3.4: on two hosts, one host wrote under another results path', () => {
    const input = edit(closedRun(), (c) => {
      for (const t of c.trials)
        for (const f of t.files) if (f.rank === 1 && f.doc.kvcache_bench.ranks) f.doc.kvcache_bench.ranks.host = 'host-b';
      if (c.manifest !== undefined)
        c.manifest = { ...c.manifest, fields: { ...c.manifest.fields, host_count: 2, npernode: 1, hosts: ['host-a', 'host-b'] } };
      const d = docOf(c, 2, 2, 1);
      d.kvcache_bench.effective_config.args.output = '/elsewhere/option_2/trial_2/rank_1/kvcache_results_x.json';
    });
    const got = runCheck(input).results;
    assert.equal(got.find((r) => r.id === '6.3.3.4')?.status, 'FAIL');
    // Only the option 2 trial 2 line fails (failures first); the other 8 trials pass.
    const lines = got.find((r) => r.id === '6.3.3.4')?.evidence ?? [];
    assert.equal(lines.length, 9);
    assert.equal(lines[0].file, 'option_2/trial_2');
    assert.equal(lines[0].value, '/runs/kvcache_1/option_2/trial_2 on host-a; /elsewhere/option_2/trial_2 on host-b');
    assert.equal(got.find((r) => r.id === '6.3.3.1')?.status, 'PASS');
  });

  test('6.4.1: results and cache on one file system; not recorded is CANNOT TELL', () => {
    const same = edit(closedRun(), (c) => {
      const s = c.manifest?.fields.sequence;
      if (s?.results_dir !== undefined)
        s.results_dir = { path: '/results', device_id: 259, file_system: 'ext2/3/4', block_device: 'nvme9n1' };
    });
    const lines = onlyChange(same, '6.4.1', 'FAIL');
    assert.equal(
      lines[0],
      'run.json: sequence.results_dir / cache_dir = results ext2/3/4 on nvme9n1, cache ext2/3/4 on nvme9n1 (required: different file systems)',
    );
    const unknown = edit(closedRun(), (c) => {
      const s = c.manifest?.fields.sequence;
      if (s !== undefined) s.results_dir = undefined;
    });
    onlyChange(unknown, '6.4.1', 'CANNOT TELL');
  });

  test('6.5.2: a cache dir on NFS is CANNOT TELL (the client set-up is not recorded)', () => {
    const input = edit(closedRun(), (c) => {
      const m = docOf(c, 1, 1, 0).kvcache_bench.machine;
      if (m.cache_dir !== null) m.cache_dir.file_system = 'nfs';
    });
    const lines = onlyChange(input, '6.5.2', 'CANNOT TELL');
    assert.match(
      lines[0],
      /^option_1\/trial_1\/rank_0\/kvcache_results_x\.json: machine\.cache_dir\.file_system = nfs \(required: gateway/,
    );
  });

  test('6.3.4.1 / 6.3.4.3: a summary figure that the rank files do not give; no summary at all', () => {
    const off = edit(closedRun(), (c) => {
      c.summary = {
        path: c.summary?.path ?? '',
        options: { ...c.summary?.options, '2': { ...c.summary?.options?.['2'], aggregated_read_bandwidth_gbps: 9 } },
      };
    });
    assert.match(
      onlyChange(off, '6.3.4.1', 'FAIL')[0],
      /^kvcache_run_summary_x\.json: options\.2\.aggregated_read_bandwidth_gbps = 9 \(required: 1\.14\d* \(recomputed from 3 trial/,
    );
    const p95 = edit(closedRun(), (c) => {
      c.summary = {
        path: c.summary?.path ?? '',
        options: { ...c.summary?.options, '1': { ...c.summary?.options?.['1'], aggregated_device_read_p95_ms: 5 } },
      };
    });
    // max over ranks and trials of 3 + rank + trial = 3 + 1 + 3
    assert.match(onlyChange(p95, '6.3.4.3', 'FAIL')[0], /aggregated_device_read_p95_ms = 5 \(required: 7 /);
    const none = edit(closedRun(), (c) => void (c.summary = undefined));
    const got = statuses(none);
    assert.deepEqual([got['6.3.4.1'], got['6.3.4.2'], got['6.3.4.3']], ['CANNOT TELL', 'CANNOT TELL', 'CANNOT TELL']);
  });

  test('6.3.4.4: every rank of Option 3 kept everything in the CPU tier: FAIL in CLOSED, PASS (OPEN-only) in OPEN', () => {
    const cpuOnly = (division: 'closed' | 'open'): CheckInput =>
      edit(closedRun(), (c) => {
        c.division = division;
        for (const t of c.trials) if (t.option === '3') for (const f of t.files) f.doc.summary.cache_stats.storage_entries = 0;
      });
    assert.equal(
      onlyChange(cpuOnly('closed'), '6.3.4.4', 'FAIL')[0],
      `option_3: summary.cache_stats.storage_entries = 6 of 6 rank file(s) with storage_entries = 0 (ranks 0, 1) (required: not every rank CPU-tier only (CLOSED))`,
    );
    const open = runCheck(cpuOnly('open')).results.find((r) => r.id === '6.3.4.4');
    assert.equal(open?.status, 'PASS');
    assert.equal(open?.evidence[2].required, 'OPEN-only result (every rank CPU-tier)');
  });

  test('KB.1: a rank NOT VALID for its own reasons fails; a device-byte reason alone is judged per host (KB.3)', () => {
    const input = edit(closedRun(), (c) => {
      docOf(c, 1, 1, 0).kvcache_bench.validity = { valid: false, reasons: [{ code: 'harness_saturated', message: 'x' }], warnings: [] };
      docOf(c, 1, 1, 1).kvcache_bench.validity = {
        valid: false,
        reasons: [{ code: 'device_reads_exceed_tool', message: 'x' }],
        warnings: [],
      };
    });
    assert.deepEqual(onlyChange(input, 'KB.1', 'FAIL'), [
      'option_1/trial_1/rank_0/kvcache_results_x.json: kvcache_bench.validity.reasons = harness_saturated (required: none (VALID))',
      `.: kvcache_bench.validity = ${9 * RANKS - 1} of ${9 * RANKS} rank file(s) VALID (device bytes judged per host) (required: VALID)`,
    ]);
  });

  test("KB.2: a rank whose window ended before the other's began", () => {
    const input = edit(closedRun(), (c) => {
      const r = docOf(c, 2, 1, 1).kvcache_bench.ranks;
      if (r != null) Object.assign(r, { window_start_epoch_ms: 0, window_end_epoch_ms: 1000 });
    });
    assert.equal(
      onlyChange(input, 'KB.2', 'FAIL')[0].startsWith(
        'option_2/trial_1: kvcache_bench.ranks.window_{start,end}_epoch_ms = all 2 ranks overlap -',
      ),
      true,
    );
  });

  test('KB.3: the host device wrote more than its ranks', () => {
    const input = edit(closedRun(), (c) => {
      for (const r of [0, 1]) {
        const io = docOf(c, 3, 2, r).kvcache_bench.device_io;
        if (io !== null) io.written_bytes = 5 * 2 ** 30;
      }
    });
    assert.match(
      onlyChange(input, 'KB.3', 'FAIL')[0],
      /^option_3\/trial_2: device host-a:nvme9n1 \(ranks 0, 1\) = .*: device_writes_exceed_tool/,
    );
  });

  test('KB.4: a rank interrupted', () => {
    const input = edit(closedRun(), (c) => {
      const k = docOf(c, 1, 3, 0).kvcache_bench;
      k.stop_reason = 'interrupted';
      k.interrupted = true;
    });
    assert.equal(
      onlyChange(input, 'KB.4', 'FAIL')[0],
      'option_1/trial_3/rank_0/kvcache_results_x.json: kvcache_bench.stop_reason = interrupted (interrupted) (required: duration (ran its 60 s))',
    );
  });
});

describe('scopes', () => {
  test('OPEN: the CLOSED-only rules are NOT APPLICABLE; unknown division: CANNOT TELL naming what is missing', () => {
    const open = statuses(edit(closedRun(), (c) => void (c.division = 'open')));
    assert.deepEqual(
      ['6.3.1.1', '6.3.2.1', '6.3.2.2', '6.6.1'].map((id) => open[id]),
      ['NOT APPLICABLE', 'NOT APPLICABLE', 'NOT APPLICABLE', 'NOT APPLICABLE'],
    );
    const unknown = runCheck(
      edit(closedRun(), (c) => Object.assign(c, { division: undefined, divisionFrom: 'not recorded (no run.json)' })),
    );
    const r = unknown.results.find((x) => x.id === '6.6.1');
    assert.equal(r?.status, 'CANNOT TELL');
    assert.equal(r?.evidence[0].value, 'not recorded (no run.json)');
    assert.equal(unknown.verdict, 'CANNOT TELL');
  });

  test('one results file: the run-directory rules are NOT APPLICABLE; its Option is found by its values', () => {
    const input = edit(closedRun(), (c) => {
      const f = c.trials[0].files[0];
      c.kind = 'file';
      c.root = f.path;
      c.manifest = undefined;
      c.summary = undefined;
      c.trials = [{ option: 'file', trial: 1, dir: '/runs', files: [f], missing: [] }];
    });
    const got = statuses(input);
    assert.deepEqual(
      ['6.3.3.1', '6.3.3.3', '6.3.3.4', '6.4.1', '6.3.4.1', '6.3.4.2', '6.3.4.3', 'KB.2'].map((id) => got[id]),
      Array<Status>(8).fill('NOT APPLICABLE'),
    );
    assert.deepEqual(
      ['6.3.1.1', '6.3.2.1', '6.6.1', 'KB.1', 'KB.4'].map((id) => got[id]),
      ['PASS', 'PASS', 'PASS', 'PASS', 'PASS'],
    );
  });
});
