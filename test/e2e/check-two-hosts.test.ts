// A two-host MLPerf run on one machine, merged and checked: `kv-cache mlperf --hosts host-a,host-b
// --npernode 2` launches its ranks through a test shim of mpirun that runs the real mpirun on this
// machine and puts each rank in its own UTS namespace (host name host-a or host-b, `unshare -u` +
// `hostname`) and mount namespace, where its host's own small loop-device file system is bound at
// the cache path: as on two real hosts, the same --cache-dir path is a different file system per host,
// and the results directory (a tmpfs of its own) is one path every host shares. The check must count
// 2 hosts, each host's device once (its two ranks see the same counters) and pass the isolation rule.
// Needs root, mpirun, unshare, losetup and mkfs.ext4; skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkPath } from '../../src/cli/check.js';
import { onPath } from '../../src/cli/mlperf.js';
import type { CheckDocument } from '../../src/mlperf/check/report.js';
import type { RunSummary } from '../../src/mlperf/merge.js';
import { BIN } from './run-cli.js';

const TOOLS = ['mpirun', 'unshare', 'losetup', 'mkfs.ext4', 'mount', 'hostname'];
const missingTool = TOOLS.find((t) => !onPath(t, `${process.env.PATH ?? ''}${delimiter}/usr/sbin${delimiter}/sbin`));
const SKIP =
  process.getuid?.() !== 0
    ? 'not root: the test mounts loop-device file systems and makes namespaces'
    : missingTool !== undefined
      ? `${missingTool} is not installed`
      : false;
if (SKIP !== false) process.stdout.write(`# two-host check e2e skipped: ${SKIP}\n`);

const HOSTS = ['host-a', 'host-b'];
/** Small entries (tiny-1b: 24 KiB per token) so that two ranks' storage tiers fit one 64 MiB file system. */
const TINY_USERS = `user_templates:
  chatbot: { context_range: [64, 256], generation_range: [16, 32], think_time_range: [0.01, 0.05] }
  coding: { context_range: [64, 256], generation_range: [16, 32], think_time_range: [0.01, 0.05] }
  document: { context_range: [64, 256], generation_range: [16, 32], think_time_range: [0.01, 0.05] }
`;
/** Each rank's storage tier: two of them fit a host's 64 MiB file system (the default, 95 % of the free space each, would not). */
const RANK_CAPACITY_GB = '0.02';

/** The real mpirun's absolute path (the shim must not find itself). */
function realMpirun(): string {
  const dir = (process.env.PATH ?? '').split(delimiter).find((d) => onPath('mpirun', d));
  return join(dir ?? '/usr/bin', 'mpirun');
}

/** The mpirun shim: the real mpirun with this machine's slots; --host/--npernode become the namespaces' host layout. */
const shim = (real: string): string => `#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --host) shift 2 ;;
    --npernode) CHECK_NPERNODE="$2"; export CHECK_NPERNODE; shift 2 ;;
    -np) np="$2"; shift 2 ;;
    --allow-run-as-root|--oversubscribe) shift ;;
    *) break ;;
  esac
done
exec ${real} --allow-run-as-root --oversubscribe -np "$np" "$(dirname "$0")/rank-host.sh" "$@"
`;

/** One rank as on its own host: host name by rank ÷ npernode, that host's file system bound at the cache path; trial ranks get a small storage tier. */
const RANK_HOST = `#!/bin/sh
i=$((OMPI_COMM_WORLD_RANK / CHECK_NPERNODE))
h=$(echo "$CHECK_HOSTS" | cut -d, -f$((i + 1)))
case " $* " in *" --rank-output-base "*) set -- "$@" --storage-capacity-gb ${RANK_CAPACITY_GB} ;; esac
exec unshare -u -m sh -c 'hostname "$0" && mount --bind "$CHECK_HOSTFS/$0" "$CHECK_CACHE" && exec "$@"' "$h" "$@"
`;

function run(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let work = '';
const mounts: string[] = [];
const loops: string[] = [];
let runDir = '';
let mlperf = { code: null as number | null, stdout: '', stderr: '' };

before(async () => {
  if (SKIP !== false) return;
  work = await mkdtemp(join(tmpdir(), 'kvcache-two-hosts-'));
  const bin = join(work, 'bin');
  const results = join(work, 'results');
  const cache = join(work, 'cache');
  for (const d of [bin, results, cache]) await mkdir(d);
  await writeFile(join(bin, 'mpirun'), shim(realMpirun()));
  await writeFile(join(bin, 'rank-host.sh'), RANK_HOST);
  await chmod(join(bin, 'mpirun'), 0o755);
  await chmod(join(bin, 'rank-host.sh'), 0o755);
  for (const h of HOSTS) {
    const image = join(work, `${h}.img`);
    const mountAt = join(work, 'hostfs', h);
    await mkdir(mountAt, { recursive: true });
    execFileSync('truncate', ['-s', '64M', image]);
    // No lazy initialisation: nothing writes to the device in the background during the measurement.
    execFileSync('mkfs.ext4', ['-q', '-E', 'lazy_itable_init=0,lazy_journal_init=0', image]);
    const loop = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
    loops.push(loop);
    execFileSync('mount', [loop, mountAt]);
    mounts.push(mountAt);
  }
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', results]);
  mounts.push(results);
  await writeFile(join(work, 'tiny.yaml'), TINY_USERS);
  mlperf = await run(
    [
      'mlperf',
      '--open',
      ...['--option', '1', '--trials', '1', '--hosts', HOSTS.join(','), '--npernode', '2'],
      ...['--start-delay', '0', '--end-delay', '0', '--inter-option-delay', '0', '--skip-precondition'],
      ...['--model', 'tiny-1b', '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0', '--config', join(work, 'tiny.yaml')],
      ...['--results-dir', results, '--cache-dir', cache, '--no-progress'],
    ],
    {
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      CHECK_HOSTS: HOSTS.join(','),
      CHECK_HOSTFS: join(work, 'hostfs'),
      CHECK_CACHE: cache,
    },
  );
  const [name] = await readdir(results);
  runDir = join(results, name);
});

after(async () => {
  for (const m of mounts.reverse()) execFileSync('umount', [m]);
  for (const l of loops) execFileSync('losetup', ['-d', l]);
  if (work !== '') await rm(work, { recursive: true, force: true });
});

test('two hosts in namespaces, two ranks each on its own loop device: merged and checked', { skip: SKIP }, async () => {
  assert.equal(mlperf.code, 0, mlperf.stderr + mlperf.stdout);
  const summaryName = (await readdir(runDir)).find((n) => n.startsWith('kvcache_run_summary_')) ?? '';
  const summary = JSON.parse(await readFile(join(runDir, summaryName), 'utf8')) as RunSummary;
  assert.deepEqual([summary.host_count, summary.npernode, summary.total_ranks], [2, 2, 4]);
  const rows = summary.options['1'].kvcache_bench.rank_table;
  assert.deepEqual(
    rows.map((r) => [r.rank, r.host]),
    [
      [0, 'host-a'],
      [1, 'host-a'],
      [2, 'host-b'],
      [3, 'host-b'],
    ],
  );
  assert.deepEqual(
    rows.map((r) => r.stop_reason),
    ['duration', 'duration', 'duration', 'duration'],
  );

  const doc: CheckDocument = checkPath(runDir, undefined);
  const rule = (id: string) => doc.rules.find((r) => r.id === id);
  // Host count and layout, isolation, the shared results path, results and cache on different file systems.
  for (const id of ['6.3.3.1', '6.3.3.3', '6.3.3.4', '6.4.1', 'KB.3']) assert.equal(rule(id)?.status, 'PASS', JSON.stringify(rule(id)));
  assert.equal(rule('6.3.3.1')?.evidence[0].value, '4');
  assert.equal(rule('6.3.3.3')?.evidence[0].value, '4 rank(s), 4 results file(s), 4 cache dir(s)');
  // Each host's device once: two lines, one per host and loop device, each with its two ranks.
  const devices = summary.options['1'].kvcache_bench.trials[0].device_per_host;
  assert.deepEqual(
    devices.map((d) => [d.host, d.device, d.ranks]),
    [
      ['host-a', loops[0].replace('/dev/', ''), [0, 1]],
      ['host-b', loops[1].replace('/dev/', ''), [2, 3]],
    ],
  );
  const kb3 = rule('KB.3')?.evidence.map((e) => e.field);
  assert.deepEqual(kb3, [`device host-a:${devices[0].device} (ranks 0, 1)`, `device host-b:${devices[1].device} (ranks 2, 3)`]);
  // Counted once: the host's figure is what each of its ranks saw of the device, not their sum.
  const rankFiles = await Promise.all(
    [0, 1].map(async (r) => {
      const dir = join(runDir, 'option_1', 'trial_1', `rank_${r}`);
      const [f] = await readdir(dir);
      return JSON.parse(await readFile(join(dir, f), 'utf8')) as { kvcache_bench: { device_io: { read_bytes: number } } };
    }),
  );
  assert.equal(devices[0].read_bytes, Math.max(...rankFiles.map((f) => f.kvcache_bench.device_io.read_bytes)));
  assert.match(mlperf.stdout, /^6\.3\.3\.4 kvcacheSharedResultsDir PASS$/m);
});
