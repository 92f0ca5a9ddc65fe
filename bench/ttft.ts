// bench:ttft — does the modelled time to first token (issue 23) follow the storage it was measured on?
//
// The same multi-turn, prefill-only, storage-only workload (no GPU or CPU tier, zero think time, no
// shared prefix, every earlier turn reloaded from the storage tier) runs on three storages, alternating their order round by
// round: a RAM-backed ext4 (a file in /dev/shm on a loop device), this machine's disk as it is, and the
// same disk with the run's reads throttled by a cgroup (v2 io.max or v1 blkio, as bench:discrimination).
// For each run it prints the modelled TTFT speedup (without ÷ with offload), the share of requests whose
// load was slower than recomputing, and the read rate the hits got; then the conditions ranked by the
// median delivered read rate and by the median speedup. Every mount, loop device and cgroup it makes is
// removed at the end and on Ctrl-C.
//
// Needs root. Usage: node dist/bench/ttft.js [--seconds 30] [--users 2] [--rounds 3] [--read-mib-per-sec 150]
//   [--ram-gib 6] [--min-tokens 1024] [--max-tokens 4096]; the model is deepseek-v3 on the default GPU profile.
import { UsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskWatch } from '../src/metrics/diskstats.js';
import { parseResults } from '../src/report/results-schema.js';
import { messageOf } from '../src/util/errors.js';
import { GiB } from '../src/util/units.js';
import { numberArgs } from './lib/args.js';
import { checkExit, ChildRunner, quote } from './lib/child.js';
import { table } from './lib/format.js';
import { KV_BIN, PROJECT_ROOT, storageOnlyArgs } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { makeRamDevice, ramDeviceUnavailable } from './lib/ram-device.js';
import type { RamDevice } from './lib/ram-device.js';
import { detectThrottle, ReadThrottle, removeThrottleLoudly } from './lib/throttle.js';
import { CONDITIONS, figuresOf, median, rankBy } from './lib/ttft/figures.js';
import type { Condition, RunFigures } from './lib/ttft/figures.js';

const SCRIPT = 'bench:ttft';
const MODEL = 'deepseek-v3';
const GPU_PROFILE = 'h100-sxm';

/** Every user type: contexts in [min, max] tokens and no think time, so the storage is kept busy. */
function workloadConfig(minTokens: number, maxTokens: number): string {
  const t = `{ context_range: [${minTokens}, ${maxTokens}], think_time_range: [0, 0] }`;
  return ['user_templates:', ...['chatbot', 'coding', 'document'].map((u) => `  ${u}: ${t}`)].join('\n');
}

const gbps = (v: number | null): string => (v === null ? 'n/a' : (v / 1e9).toFixed(3));
const fixed = (v: number | null, d: number): string => (v === null ? 'n/a' : v.toFixed(d));

async function main(): Promise<void> {
  const opts = numberArgs({
    seconds: 30,
    users: 2,
    rounds: 3,
    'read-mib-per-sec': 150,
    'ram-gib': 6,
    'min-tokens': 1024,
    'max-tokens': 4096,
  });
  if (process.getuid?.() !== 0) throw new UsageError('needs root: a loop device, a mount and cgroups');
  const ramProblem = ramDeviceUnavailable();
  if (ramProblem !== undefined) throw new UsageError(`no RAM device: ${ramProblem}`);
  const support = detectThrottle();
  if (typeof support === 'string') throw new UsageError(support);
  const parent = tmpdir();
  const watch = await DiskWatch.forPath(parent);
  if (watch === undefined) throw new UsageError(`no single block device under ${parent}: nothing to throttle`);

  const root = await mkdtemp(join(parent, 'kv_ttft_'));
  const runner = new ChildRunner(PROJECT_ROOT);
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${SCRIPT}: ${sig}: stopping the current run, then removing the mount, loop device and cgroups`);
    runner.interrupt(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let ram: RamDevice | undefined;
  let throttle: ReadThrottle | undefined;
  try {
    const readBytesPerSec = opts['read-mib-per-sec'] * 1024 * 1024;
    throttle = await ReadThrottle.create(
      support,
      { major: watch.device.major, minor: watch.device.minor, bytesPerSec: readBytesPerSec, iops: 0 },
      `kvcache-ttft-${process.pid}`,
    );
    ram = makeRamDevice(opts['ram-gib'] * GiB);
    const config = join(root, 'workload.yaml');
    await writeFile(config, workloadConfig(opts['min-tokens'], opts['max-tokens']));
    const capacityGiB = Math.max(1, Math.floor(opts['ram-gib'] * 0.6));
    console.log(machineLine(`disk ${watch.device.name}, RAM device ${ram.name} (${opts['ram-gib']} GiB in /dev/shm)`));
    console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
    console.log(
      `workload: ${MODEL}, ${opts.users} users, ${opts.seconds} s, contexts ${opts['min-tokens']}–${opts['max-tokens']} tokens, ` +
        `multi-turn reloads and prefill writes only (--prefill-only, --disable-prefix-caching), storage tier only, capacity ${capacityGiB} GiB; ` +
        `--gpu-profile ${GPU_PROFILE} --mfu 0.5; throttled: reads ≤ ${opts['read-mib-per-sec']} MiB/s on ${watch.device.name} (${await throttle.describe('slow')})`,
    );
    const runs: RunFigures[] = [];
    const commands = new Map<Condition, string>();
    for (let round = 1; round <= opts.rounds; round++) {
      // Rotate the order each round, so no condition always runs first (or right after another).
      const order = CONDITIONS.map((_, i) => CONDITIONS[(i + round - 1) % CONDITIONS.length]);
      for (const condition of order) {
        const dir = join(condition === 'ram' ? ram.mount : root, `cache-${condition}-${round}`);
        const output = join(root, `${condition}-${round}.json`);
        const args = [
          ...storageOnlyArgs({ model: MODEL, users: opts.users, seconds: opts.seconds, cacheDir: dir, capacityGiB, output, config }),
          '--prefill-only',
          // Hits are then the earlier turns only: a 5–9-token system prompt costs more to read than to recompute.
          '--disable-prefix-caching',
          '--gpu-profile',
          GPU_PROFILE,
          '--mfu',
          '0.5',
        ];
        const cmd = throttle.wrap(condition === 'throttled' ? 'slow' : 'fast', process.execPath, [KV_BIN, ...args]);
        const run = await runner.run(cmd.file, cmd.args, condition === 'ram' ? ram.name : watch.device.name);
        checkExit(run, `kv-cache (${condition}, round ${round})`);
        commands.set(condition, run.command);
        const f = figuresOf(parseResults(await readFile(output, 'utf8')), condition, round);
        if (typeof f === 'string') throw new Error(`${condition} round ${round}: ${f}`);
        runs.push(f);
        await rm(dir, { recursive: true, force: true });
        console.log(
          `round ${round} ${condition}: speedup p50 ${fixed(f.speedupP50, 2)}, delivered ${gbps(f.deliveredBytesPerSec)} GB/s, ` +
            `offload lost ${fixed(f.loadSlowerShare === null ? null : f.loadSlowerShare * 100, 1)} %`,
        );
      }
    }
    console.log('');
    console.log(
      table(
        [
          'condition',
          'round',
          'reqs',
          'with hits',
          'delivered GB/s',
          'break-even GB/s',
          'storage read GB/s',
          'speedup p5',
          'speedup p50',
          'offload lost %',
          'TTFT p50 offload ms',
          'TTFT p50 recompute ms',
        ],
        runs.map((r) => [
          r.condition,
          String(r.round),
          String(r.requests),
          String(r.withHits),
          gbps(r.deliveredBytesPerSec),
          gbps(r.breakEvenBytesPerSec),
          gbps(r.storageReadBytesPerSec),
          fixed(r.speedupP5, 2),
          fixed(r.speedupP50, 2),
          fixed(r.loadSlowerShare === null ? null : r.loadSlowerShare * 100, 1),
          r.offloadP50Ms.toFixed(1),
          r.recomputeP50Ms.toFixed(1),
        ]),
      ),
    );
    console.log('');
    for (const c of CONDITIONS) {
      const mine = runs.filter((r) => r.condition === c);
      const share = median(mine.map((r) => r.loadSlowerShare));
      console.log(
        `median ${c.padEnd(9)}: delivered ${gbps(median(mine.map((r) => r.deliveredBytesPerSec)))} GB/s, ` +
          `speedup p50 ${fixed(median(mine.map((r) => r.speedupP50)), 2)}, p5 ${fixed(median(mine.map((r) => r.speedupP5)), 2)}, ` +
          `offload lost in ${fixed(share === null ? null : share * 100, 1)} % of requests with hits`,
      );
    }
    const byBandwidth = rankBy(runs, (r) => r.deliveredBytesPerSec);
    const bySpeedup = rankBy(runs, (r) => r.speedupP50);
    console.log(`ranked by delivered read rate: ${byBandwidth.join(' > ')}`);
    console.log(`ranked by TTFT speedup p50:    ${bySpeedup.join(' > ')}`);
    console.log(`the two rankings ${byBandwidth.join() === bySpeedup.join() ? 'agree' : 'DISAGREE'}`);
    console.log('\ncommands (each run enters its cgroup through the `sh -c` prefix, then execs kv-cache):');
    for (const [c, cmd] of commands) console.log(`  ${c}: ${cmd}`);
  } finally {
    ram?.remove();
    if (ram !== undefined) console.log(`\nremoved RAM device ${ram.name} and its mount ${ram.mount}`);
    await rm(root, { recursive: true, force: true });
    if (throttle !== undefined) await removeThrottleLoudly(throttle, SCRIPT);
  }
}

await main().catch((e: unknown) => {
  console.error(`${SCRIPT}: ${messageOf(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
});
