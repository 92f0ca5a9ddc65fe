// Ranks against fio: 1, 2 and 3 kv-cache ranks (mpirun, write-heavy storage-only runs) vs fio with
// the same number of writers, alternating which goes first, for --rounds rounds. Per run it prints the ranks'
// summed device write bandwidth over their common window (from `kv-cache merge`: each host's device
// bytes once ÷ earliest window start to latest window end) next to fio's (fio's own write bandwidth,
// 4 MiB, O_DIRECT, fsync on close), their ratio (goal ≥ 0.9) and the ranks' start
// skew (spread of their window starts, and the largest distance from the agreed instant).
// fio's side is `numjobs` = ranks × users per rank psync jobs: each rank's user is one thread with one
// 4 MiB O_DIRECT write in flight, as in bench:fio (fio jobs = ranks with libaio iodepth = users was
// tried too: it queues without the per-entry fsync kv-cache does, and is not the same load).
//
// Before each program the script waits for the device under --dir to be quiet (lib/settle.ts): the
// previous program's writeback slowed the next one's round 1 on a RAM-backed device. Each ranks count
// starts with --warm-up unmeasured passes of both programs (default 1, as bench:fast-device's warm-up):
// round 1 on a freshly made RAM device was slow for both, so its medians mixed a cold device in.
//
// --settle-limit S bounds each wait (default 120 s): on a machine others keep busy it is never quiet.
//
// Usage: node dist/bench/ranks.js [--seconds 10] [--rounds 3] [--users 4] [--max-ranks 3] [--warm-up 1] [--settle-limit 120] [--dir D]
import { isUsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeAndSave } from '../src/cli/merge.js';
import { GiB, MiB } from '../src/util/units.js';
import { numberArgs } from './lib/args.js';
import { quote } from './lib/child.js';
import { ensureFio, fioArgs, fioVersion } from './lib/fio.js';
import { KV_BIN, storageOnlyArgs, writeZeroThinkConfig } from './lib/kv-cache.js';
import { fileSystemOf, freeBytes, machineLine } from './lib/machine.js';
import { comparisonSchedule, median } from './lib/rounds.js';
import { settleDevice } from './lib/settle.js';
import { deviceForPath } from '../src/metrics/diskstats.js';

const IO_BYTES = 4 * MiB;

function run(cmd: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

interface RanksFigures {
  readonly deviceWriteBytesPerSec: number;
  readonly startSpreadMs: number;
  readonly maxSkewMs: number;
}

async function ranksRun(
  root: string,
  ranks: number,
  opts: { seconds: number; users: number },
  free: number,
  tag: string,
): Promise<RanksFigures> {
  const out = join(root, `kv-${tag}`);
  const cache = join(root, 'cache');
  await mkdir(out, { recursive: true });
  await mkdir(cache, { recursive: true });
  const kvArgs = storageOnlyArgs({
    model: 'llama3.1-8b',
    users: opts.users,
    seconds: opts.seconds,
    cacheDir: join(cache, 'unused'),
    capacityGiB: Math.max(1, Math.floor((free * 0.5) / ranks / GiB)),
    output: 'unused.json',
    config: writeZeroThinkConfig(root),
    node: 'prefill',
  });
  // The rank flags replace --cache-dir, --create-cache-dir, --seed and --output.
  const drop = new Set(['--cache-dir', '--seed', '--output']);
  const own: string[] = [];
  for (let i = 0; i < kvArgs.length; i++) {
    if (drop.has(kvArgs[i])) i++;
    else if (kvArgs[i] !== '--create-cache-dir') own.push(kvArgs[i]);
  }
  const mpirun = ['--oversubscribe', '-np', String(ranks), ...(process.getuid?.() === 0 ? ['--allow-run-as-root'] : [])];
  const args = [...mpirun, process.execPath, KV_BIN, ...own, '--rank-output-base', out, '--rank-cache-base', cache, '--seed-base', '1'];
  if (tag.endsWith('-1-1')) console.log(`  kv-cache: mpirun ${args.map(quote).join(' ')}`);
  const r = await run('mpirun', args);
  if (r.code !== 0) throw new Error(`kv-cache ranks exited ${r.code}:\n${r.out.slice(-2000)}`);
  const summary = mergeAndSave([out], join(out, 'summary.json'), new Date());
  const t = Object.values(summary.options)[0]?.kvcache_bench.trials[0];
  if (t === undefined) throw new Error('no merged trial');
  return {
    deviceWriteBytesPerSec: t.device_write_bytes_per_sec ?? 0,
    startSpreadMs: t.start_spread_ms ?? 0,
    maxSkewMs: t.max_abs_start_skew_ms ?? 0,
  };
}

/** Each fio job's file: 1 GiB, or less so that all of them fit in half the free space (a small RAM device). */
function fioFileBytes(free: number, jobs: number): number {
  const share = Math.floor((free * 0.5) / jobs / IO_BYTES) * IO_BYTES;
  return Math.max(IO_BYTES * 16, Math.min(GiB, share));
}

async function fioRun(root: string, ranks: number, opts: { seconds: number; users: number }, free: number, tag: string): Promise<number> {
  const dir = join(root, `fio-${tag}`);
  await mkdir(dir, { recursive: true });
  const output = join(dir, 'fio.json');
  const args = fioArgs(
    {
      name: 'ranks',
      dir,
      rw: 'write',
      engine: 'psync',
      numjobs: ranks * opts.users,
      iodepth: 1,
      sizeBytes: fioFileBytes(free, ranks * opts.users),
      extra: [],
    },
    IO_BYTES,
    opts.seconds,
    output,
  );
  if (tag.endsWith('-1-1')) console.log(`  fio: fio ${args.map(quote).join(' ')}`);
  const r = await run('fio', args);
  if (r.code !== 0) throw new Error(`fio exited ${r.code}:\n${r.out.slice(-2000)}`);
  const json = JSON.parse(await readFile(output, 'utf8')) as { jobs: Array<{ write: { bw_bytes: number } }> };
  await rm(dir, { recursive: true, force: true });
  return json.jobs[0]?.write.bw_bytes ?? 0;
}

async function main(): Promise<void> {
  const o = numberArgs({ seconds: 10, rounds: 3, users: 4, 'max-ranks': 3, 'warm-up': 1, 'settle-limit': 120 }, ['dir']);
  const dirArg = process.argv.indexOf('--dir');
  const parent = dirArg >= 0 ? (process.argv[dirArg + 1] ?? tmpdir()) : tmpdir();
  ensureFio('bench:ranks');
  const root = await mkdtemp(join(parent, 'kv_ranks_bench_'));
  try {
    console.log(machineLine(fioVersion()));
    console.log(
      `file system: ${await fileSystemOf(root)}; cores ${availableParallelism()}; ${o.users} users per rank, ${o.seconds} s, ${o.rounds} rounds, ${o['warm-up']} warm-up pass(es) per ranks count`,
    );
    const free = await freeBytes(root);
    const device = await deviceForPath(root);
    const settle = async (): Promise<void> => {
      if (device === undefined) return;
      const waited = await settleDevice(device.name, root, undefined, o['settle-limit'] * 1000);
      if (waited > 2.5) console.log(`  (settled for ${waited.toFixed(1)} s: the previous program's writeback)`);
    };
    if (device === undefined) console.log(`(no block device found for ${root}: programs run back to back, without settling)`);
    const rows: string[] = [];
    const counts = Array.from({ length: o['max-ranks'] }, (_, i) => i + 1);
    const schedule = comparisonSchedule(counts, ['kv', 'fio'] as const, o.rounds, o['warm-up']);
    const opts = { seconds: o.seconds, users: o.users };
    for (const ranks of counts) {
      const ratios: number[] = [];
      const spreads: number[] = [];
      console.log(`--- ${ranks} rank(s) ---`);
      const runs = schedule.filter((r) => r.group === ranks);
      for (const round of [...new Set(runs.map((r) => r.round))]) {
        let kv: RanksFigures | undefined;
        let fio = 0;
        for (const step of runs.filter((r) => r.round === round)) {
          const tag = step.measured ? `${ranks}-${round}` : `${ranks}-warm`;
          await settle();
          if (step.side === 'kv') kv = await ranksRun(root, ranks, opts, free, tag);
          else fio = await fioRun(root, ranks, opts, free, tag);
        }
        if (kv === undefined) continue;
        const ratio = fio > 0 ? kv.deviceWriteBytesPerSec / fio : 0;
        const line = `ranks ${(kv.deviceWriteBytesPerSec / MiB).toFixed(1)} MiB/s, fio ${(fio / MiB).toFixed(1)} MiB/s, ratio ${ratio.toFixed(3)}; start spread ${kv.startSpreadMs.toFixed(2)} ms, max skew vs agreed ${kv.maxSkewMs.toFixed(2)} ms`;
        if (round === 0) {
          console.log(`  warm-up (not measured): ${line}`);
          continue;
        }
        ratios.push(ratio);
        spreads.push(kv.startSpreadMs);
        console.log(`  round ${round}: ${line}`);
      }
      rows.push(
        `${ranks} rank(s): ranks ÷ fio median ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}); start spread median ${median(spreads).toFixed(2)} ms (max ${Math.max(...spreads).toFixed(2)})`,
      );
    }
    console.log('\nsummary (goal: ranks ÷ fio ≥ 0.9, start spread < 50 ms; MiB = 2^20 bytes):');
    for (const r of rows) console.log(`  ${r}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main().catch((e: unknown) => {
  console.error(`bench:ranks: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = isUsageError(e) ? 2 : 1;
});
