// The validity verdict through the real command: trace mode is never a storage measurement, and a run
// on a device another process reads is NOT VALID while the same run on the quiet device is VALID.
// The device runs use a small loop-mounted ext4 file system of their own (root and mkfs.ext4 needed,
// as in CI), so nothing else on the machine touches that device.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inTempDir, runCli, SMALL_USERS } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';

const run = promisify(execFile);

const COMMON = [
  '--model',
  'tiny-1b',
  '--generation-mode',
  'none',
  '--no-progress',
  '--gpu-mem-gb',
  '0',
  '--cpu-mem-gb',
  '0',
  '--seed',
  '7',
];

test('trace mode: storage_health is not PASS and the run is NOT VALID with trace_mode', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const out = join(dir, 'run.json');
    const r = await runCli([
      ...COMMON,
      '--config',
      config,
      '--num-users',
      '3',
      '--duration',
      '30',
      '--max-requests',
      '20',
      '--io-trace-log',
      join(dir, 'trace.csv'),
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const j = await readValidResults(out);
    const health = j.summary.cache_stats.storage_health;
    assert.equal(health.overall_status, 'INCOMPLETE');
    assert.deepEqual(
      health.criteria.slice(0, 2).map((c) => [c.actual, c.passed, c.samples]),
      [
        [null, null, 0],
        [null, null, 0],
      ],
    );
    const v = j.kvcache_bench.validity;
    assert.equal(v.valid, false);
    assert.equal(v.reasons[0]?.code, 'trace_mode');
    assert.match(r.stdout, /\nNOT VALID: trace_mode[^\n]*\n {2}trace_mode: trace mode \(--io-trace-log\)/);
    assert.doesNotMatch(r.stdout, /Overall: PASS/);
  });
});

/** Why this machine cannot run the loop-device test, or undefined when it can. */
async function loopDeviceUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root to mount a loop device (CI runs it)';
  for (const tool of ['mkfs.ext4', 'mount', 'umount', 'dd']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `needs ${tool} (apt-get install e2fsprogs coreutils mount)`;
    }
  }
  return undefined;
}

/** A fresh 300 MiB ext4 on a loop device at `<dir>/mnt`, unmounted after `fn` whatever happens. */
async function withLoopFs<T>(dir: string, fn: (mnt: string) => Promise<T>): Promise<T> {
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  await mkdir(mnt);
  await run('truncate', ['-s', '300M', img]);
  // Inode tables and journal initialised now: no lazy-init writes on the device during the runs.
  await run('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', img]);
  await run('mount', ['-o', 'loop', img, mnt]);
  try {
    return await fn(mnt);
  } finally {
    // If something still holds it, detach lazily: the temp dir's removal must never walk into a mount.
    await run('umount', [mnt]).catch(() => run('umount', ['-l', mnt]));
  }
}

/** Reads `file` with O_DIRECT over and over (each pass a real device read) until stopped. */
function startDirectReader(file: string): { stop: () => Promise<void> } {
  let stopped = false;
  const passes = (async () => {
    while (!stopped) await run('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M', 'iflag=direct', 'status=none']);
  })();
  return {
    stop: async () => {
      stopped = true;
      await passes; // the pass in progress ends on its own (a 48 MiB read): nothing holds the mount after
    },
  };
}

async function deviceRun(mnt: string, config: string, out: string): Promise<{ doc: ResultsDocument; stdout: string }> {
  const cache = join(mnt, 'cache');
  const r = await runCli([
    ...COMMON,
    '--config',
    config,
    '--num-users',
    '4',
    '--duration',
    '4',
    '--storage-capacity-gb',
    '0.15', // eviction by intent: the 300 MiB file system never fills
    '--cache-dir',
    cache,
    '--create-cache-dir',
    '--output',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return { doc: await readValidResults(out), stdout: r.stdout };
}

/** Attempts at the quiet run: on a shared, overloaded host the harness check may (rightly) fail one. */
const QUIET_ATTEMPTS = 3;

/** The reasons say only that the host could not keep up (CPU starvation shows as event-loop delay). */
const onlyHostOverload = (reasons: ReadonlyArray<{ code: string }>): boolean =>
  reasons.length > 0 && reasons.every((r) => r.code === 'harness_saturated');

/** The run on the quiet device, again (up to QUIET_ATTEMPTS) while only host overload spoils it. */
async function quietRun(t: TestContext, mnt: string, config: string, out: string): Promise<Awaited<ReturnType<typeof deviceRun>>> {
  let r = await deviceRun(mnt, config, out);
  for (let attempt = 2; attempt <= QUIET_ATTEMPTS && onlyHostOverload(r.doc.kvcache_bench.validity.reasons); attempt++) {
    t.diagnostic(`quiet run attempt ${attempt - 1}: ${r.doc.kvcache_bench.validity.reasons[0]?.message ?? ''}`);
    r = await deviceRun(mnt, config, out);
  }
  return r;
}

test('another process reading the same device makes the run NOT VALID (device_reads_exceed_tool); the quiet device, VALID', async (t: TestContext) => {
  const why = await loopDeviceUnavailable();
  if (why !== undefined) {
    t.skip(why);
    return;
  }
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    await withLoopFs(dir, async (mnt) => {
      const noise = join(mnt, 'noise.bin');
      await run('dd', ['if=/dev/zero', `of=${noise}`, 'bs=1M', 'count=48', 'oflag=direct', 'status=none']);

      const quiet = await quietRun(t, mnt, config, join(dir, 'quiet.json'));
      const q = quiet.doc.kvcache_bench;
      assert.ok(q.device_io !== null, 'the loop device is resolved');
      if (onlyHostOverload(q.validity.reasons)) {
        // The verdict is right (the host, not the device, was the bottleneck) but the VALID case
        // could not be shown on this machine; the device-bytes part is still checked below.
        t.diagnostic(`quiet run: host overloaded in ${QUIET_ATTEMPTS} attempts (${q.validity.reasons[0]?.message ?? ''}); VALID not shown`);
      } else {
        assert.deepEqual(q.validity.reasons, [], 'quiet device');
        assert.equal(q.validity.valid, true);
        assert.match(quiet.stdout, /\nVALID\n/);
      }
      assert.ok(!q.validity.reasons.some((r) => r.code.startsWith('device_')), 'device bytes match the tool on the quiet device');

      const reader = startDirectReader(noise);
      let busy: Awaited<ReturnType<typeof deviceRun>>;
      try {
        busy = await deviceRun(mnt, config, join(dir, 'busy.json'));
      } finally {
        await reader.stop();
      }
      const b = busy.doc.kvcache_bench;
      assert.equal(b.validity.valid, false);
      assert.ok(
        b.validity.reasons.some((r) => r.code === 'device_reads_exceed_tool'),
        JSON.stringify(b.validity.reasons),
      );
      assert.ok(b.device_io !== null && b.device_io.read_bytes > 1.05 * b.storage_bytes.read_bytes);
      assert.match(busy.stdout, /\nNOT VALID: [^\n]*device_reads_exceed_tool/);
      // The figures behind the verdicts, for the record.
      t.diagnostic(
        `quiet: device read ${q.device_io.read_bytes} B vs tool ${q.storage_bytes.read_bytes} B; busy: device ${b.device_io.read_bytes} B vs tool ${b.storage_bytes.read_bytes} B`,
      );
    });
  });
});
