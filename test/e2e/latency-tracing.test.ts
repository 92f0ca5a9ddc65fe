// --enable-latency-tracing end to end (root and bpftrace: CI runs it; elsewhere it is skipped with the
// reason), the run going on without tracing when bpftrace is missing, and the distill-fio and trace
// commands' bad input.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRunArgs } from '../../src/cli/run-args.js';
import { runBenchmark } from '../../src/engine/run.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { monotonicClock } from '../../src/util/clock.js';
import { assertValidResults, readValidResults } from '../report/validate-results.js';
import { inTempDir, runCli, smallWorkloadArgs } from './run-cli.js';

const FIXTURE = new URL('../../../test/telemetry/fixtures/kv-cache-run.bpftrace.txt', import.meta.url).pathname;

function tracingUnavailable(): string | false {
  if (process.geteuid?.() !== 0) return 'needs root (CI runs it as root)';
  for (const tool of ['bpftrace', 'fio'])
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (.ci/run installs it)`;
    }
  return false;
}
const skipReason = tracingUnavailable();
if (skipReason !== false) process.stdout.write(`# latency-tracing e2e run skipped: ${skipReason}\n`);

test(
  'a traced run: block histograms with samples, the reasons, a fio job fio accepts, the console section',
  { skip: skipReason },
  async () => {
    await inTempDir(async (dir) => {
      const cache = join(dir, 'cache');
      mkdirSync(cache);
      const out = join(dir, 'out', 'r.json');
      const args = [...(await smallWorkloadArgs(dir)), '--num-users', '2', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--duration', '3'];
      const r = await runCli([
        ...args,
        '--cache-dir',
        cache,
        '--output',
        out,
        '--enable-latency-tracing',
        '--xlsx-output',
        join(dir, 'r.xlsx'),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Latency tracing: block probes on .+; syscall probes \(pread64\/preadv\/pwrite64\/pwritev\/fsync\/fdatasync\) on process \d+$/m,
      );
      assert.match(r.stdout, /### DEVICE LATENCY \(bpftrace: block layer and syscalls\) ###/);
      const doc = await readValidResults(out);
      const t = doc.device_latency_tracing;
      assert.ok(t !== undefined);
      assert.equal(Object.keys(t).length, 15);
      // Every run writes its entries with O_DIRECT: the device saw writes, and the process made pwrite64 calls.
      assert.ok(
        t.d2c_write_us.count > 0 && t.bssplit_write_kb.count > 0 && t.vfs_write_us.count > 0,
        JSON.stringify(doc.kvcache_bench.latency_tracing),
      );
      assert.equal(t.bssplit_write_kb.reason, null);
      assert.match(t.fadvise_to_read_us.reason ?? '', /never calls posix_fadvise/);
      const lt = doc.kvcache_bench.latency_tracing;
      assert.equal(lt?.status, 'traced');
      assert.equal(lt.block_requests?.write, t.bssplit_write_kb.count);
      // The capture's window is the measured phase (restarted as it opens), not bpftrace's attach → stop.
      const window = lt.window_sec ?? -1;
      const measured = doc.kvcache_bench.measured_window_sec;
      assert.ok(window >= measured - 0.05 && window <= measured + 1, `tracing window ${window} s vs measured ${measured} s`);
      const ini = readdirSync(join(dir, 'out')).filter((f) => /^fio_kv_cache_workload_\d{8}_\d{6}\.ini$/.test(f));
      assert.equal(ini.length, 1);
      const iniPath = join(dir, 'out', ini[0] ?? '');
      assert.equal(readFileSync(iniPath, 'utf8'), doc.fio_workload);
      execFileSync('fio', ['--parse-only', iniPath], { stdio: 'pipe' });
      // distill-fio reads the results back into the same job values.
      const again = await runCli(['distill-fio', out, '--stdout']);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`^bssplit=${lt.fio?.bssplit ?? 'x'}$`, 'm'));
      assert.ok(existsSync(join(dir, 'r.xlsx')));
    });
  },
);

test('bpftrace missing: one warning naming cause and fix, the run completes, valid results without histograms', async () => {
  await inTempDir(async (dir) => {
    const cache = join(dir, 'cache');
    mkdirSync(join(dir, 'tracing', 'events'), { recursive: true });
    mkdirSync(cache);
    const argv = [...(await smallWorkloadArgs(dir)), '--num-users', '1', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--duration', '1'];
    const { config } = parseRunArgs(
      [...argv, '--cache-dir', cache, '--max-requests', '3', '--enable-latency-tracing', '--seed', '1'],
      new Date(),
    );
    const lines: string[] = [];
    const missing = join(dir, 'no', 'bpftrace');
    const result = await runBenchmark(config, {
      clock: monotonicClock,
      toolVersion: 'test',
      log: (l) => lines.push(l),
      tracer: { bpftrace: missing, isRoot: () => true, tracefsDirs: [join(dir, 'tracing')] },
    });
    const why = `${missing} not found (fix: install bpftrace, e.g. apt-get install bpftrace)`;
    assert.deepEqual(result.latencyTracing, { failure: why });
    assert.ok(lines.includes(`Latency tracing: OFF (${why})`));
    assert.equal(result.warnings.filter((w) => w.startsWith('latency tracing')).length, 1);
    const doc = buildResultsJson(result);
    assertValidResults(doc);
    assert.equal(doc.device_latency_tracing, undefined);
    assert.equal(doc.fio_workload, undefined);
    assert.deepEqual(doc.kvcache_bench.latency_tracing, {
      status: 'unavailable',
      reason: why,
      block_filter: null,
      process_id: null,
      window_sec: null,
      block_requests: null,
      output_truncated: false,
      fio: null,
    });
  });
});

test('distill-fio on recorded bpftrace output; bad input exits 2 with one message and writes nothing', async () => {
  await inTempDir(async (dir) => {
    const ok = await runCli(['distill-fio', FIXTURE, '--stdout', '--window-s', '1.6']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^# iodepth: Little's law: device time 1\.824 s ÷ window 1\.600 s = 1\.14 → 1 \(clamped to \[1, 256\]\)$/m);
    assert.match(ok.stdout, /^\[kv-cache-traced\]$/m);
    const out = join(dir, 'job.ini');
    const saved = await runCli(['distill-fio', FIXTURE, '-o', out, '--max-iodepth', '8']);
    assert.equal(saved.code, 0, saved.stderr);
    assert.ok(existsSync(out));
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'hello\n');
    const json = join(dir, 'r.json');
    writeFileSync(json, '{"summary": {}}');
    const cases: Array<[string[], RegExp]> = [
      [['distill-fio', join(dir, 'none.txt'), '--stdout'], /none\.txt: cannot be read/],
      [['distill-fio', text, '--stdout'], /notes\.txt: no bpftrace maps found/],
      [['distill-fio', json, '--stdout'], /r\.json: a JSON file without device_latency_tracing histograms/],
      [
        ['distill-fio', FIXTURE, '--window-s', '0', '--max-iodepth', '0', '-o', join(dir, 'x.ini')],
        /--window-s expects seconds > 0[\s\S]*--max-iodepth expects an integer/,
      ],
      [['distill-fio', FIXTURE, '--stdout', '-o', join(dir, 'y.ini')], /either -o\/--output or --stdout/],
      [['trace'], /exactly one of --pid N or --command/],
      [['trace', '--pid', '999999999'], /--pid 999999999: no such process/],
      [['trace', '--command', 'true', '--device', 'nosuchdisk0'], /--device nosuchdisk0: no such block device/],
    ];
    for (const [argv, message] of cases) {
      const r = await runCli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /); // no stack trace
    }
    assert.deepEqual(readdirSync(dir).sort(), ['job.ini', 'notes.txt', 'r.json']); // nothing else written
  });
});
