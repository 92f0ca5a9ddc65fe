// Storage-only kv-cache runs against fio on the same file system, same I/O size, same concurrency.
//
// Measures, per round and workload, the device-level bandwidth (bytes the kernel counted in
// /proc/diskstats for the block device under --dir, divided by the phase's wall time):
//   write-heavy: `kv-cache --prefill-only` (no CPU/GPU tier, no multi-turn, no prefix caching) vs
//                `fio --rw=write --ioengine=psync --numjobs=N --direct=1 --bs=K`
//   read-heavy:  `kv-cache --decode-only` (entries pre-populated before the measured phase) vs
//                `fio --rw=read  --ioengine=psync --numjobs=N --direct=1 --bs=K` on laid-out files
// psync with N jobs = N threads each with one K-sized I/O outstanding, close to what kv-cache does
// (each of its N users has one 4 MiB syscall in flight on libuv's threadpool when writing, up to two
// when reading an entry: READS_IN_FLIGHT). A libaio iodepth=N single-job run is printed as a reference
// point only. fio's buffers are in huge pages (`--iomem=shmhuge`, when root can reserve them), as
// kv-cache's are, so both reach the device in requests of the same size. kv-cache's figure is its own results JSON
// `kvcache_bench.device_io` (diskstats over its measured window, after setup); ours around the whole
// child and around the measured phase (seen from its stdout) are printed for comparison. fio's figure
// is our diskstats delta around the fio process ÷ fio's own runtime (fio's own bandwidth and the
// delta ÷ the process's wall time alongside). Diagnostics per phase (device op size, utilisation,
// queue depth, flushes, CPU of the child and of the machine) hint at why one side is slower.
//
// The pieces: bench/fio/ (options, phases, report) on the bench library bench/lib/.
//
// Usage: node dist/bench/fio.js [--dir D] [--seconds 30] [--users 20] [--model llama3.1-8b]
//                               [--rounds 2] [--io-kib 4096] [--workloads write,read]
import { isUsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../src/engine/prepare.js';
import { DiskWatch } from '../src/metrics/diskstats.js';
import { messageOf } from '../src/util/errors.js';
import { GiB, MiB } from '../src/util/units.js';
import { ChildRunner, quote } from './lib/child.js';
import { ensureFio, reserveHugePages } from './lib/fio.js';
import type { HugePageReservation } from './lib/fio.js';
import { PROJECT_ROOT } from './lib/kv-cache.js';
import { freeBytes } from './lib/machine.js';
import { parseOptions } from './fio/options.js';
import type { Options } from './fio/options.js';
import { ReadLayout, SPACE_SHARE, prepopBytes, runRound } from './fio/phases.js';
import type { Context, Phase } from './fio/phases.js';
import { printMachine, printRound, printSummary } from './fio/report.js';

/** Bad options: one line, exit 2. */
function fail(message: string): never {
  console.error(`bench:fio: ${message}`);
  process.exit(2);
}

/** fio read files per job: about the tool's pre-populated set, so neither side reads a smaller (cacheable) region. */
function readFileBytes(opts: Options, free: number): { perJob: number; wanted: number } {
  const wanted = Math.ceil(prepopBytes(opts) / opts.users / opts.ioBytes) * opts.ioBytes;
  const bound = Math.floor((free * SPACE_SHARE) / opts.users / opts.ioBytes) * opts.ioBytes;
  return { perJob: Math.min(wanted, bound), wanted };
}

async function main(): Promise<void> {
  let opts: Options;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    fail(messageOf(e));
  }
  ensureFio('bench:fio');
  const parent = opts.dir ?? tmpdir();
  await mkdir(parent, { recursive: true });
  const root = await mkdtemp(join(parent, 'kv_fio_bench_'));
  const runner = new ChildRunner(PROJECT_ROOT);
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`bench:fio: ${sig}: stopping the current child and cleaning up`);
    runner.interrupt(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let huge: HugePageReservation | undefined;
  try {
    const watch = await DiskWatch.forPath(root);
    if (watch === undefined)
      throw new Error(`no block device resolvable under ${root} (tmpfs, overlay on several disks, NFS?): nothing to measure`);
    console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
    await printMachine(watch, root, opts);
    const free = await freeBytes(root);
    const prepop = prepopBytes(opts);
    const { perJob, wanted } = readFileBytes(opts, free);
    if (perJob < 4 * opts.ioBytes) throw new Error(`not enough free space (${(free / GiB).toFixed(1)} GiB) for the fio read files`);
    const keep = prepop + perJob * opts.users <= free * 0.6;
    console.log(
      `read working sets: kv-cache pre-populates ${opts.users * PREPOP_ENTRIES_PER_USER} × ${PREPARE_ENTRY_TOKENS}-token entries = ${(prepop / GiB).toFixed(1)} GiB; ` +
        `fio reads ${opts.users} × ${(perJob / MiB).toFixed(0)} MiB = ${((perJob * opts.users) / GiB).toFixed(1)} GiB` +
        (perJob < wanted ? ' (reduced to fit the free space)' : '') +
        `; fio read files ${keep ? 'kept across rounds' : 'laid out and removed every round'}\n`,
    );
    // fio's buffers in huge pages, as kv-cache's are: like-for-like device requests (bench/lib/fio.ts).
    // psync: one buffer per job; libaio: one job with `users` buffers in flight; +2 pages each for alignment.
    huge = await reserveHugePages(opts.users * (Math.ceil(opts.ioBytes / (2 * MiB)) + 2) + 8);
    console.log(`fio buffers: ${huge.note}\n`);
    const ctx: Context = { opts, root, device: watch.device.name, runner, fioFlags: huge.fioFlags, commands: new Map() };
    const layout = new ReadLayout(ctx, perJob, keep);
    const all: Phase[] = [];
    try {
      for (let r = 1; r <= opts.rounds; r++) {
        console.log(`--- round ${r} (${r % 2 === 1 ? 'kv-cache first' : 'fio first'}) ---`);
        const phases = await runRound(ctx, r, layout);
        all.push(...phases);
        console.log('');
        printRound(phases);
        console.log('');
      }
    } finally {
      await layout.drop(true);
    }
    printSummary(all, opts.rounds, opts.users);
    console.log(
      '\ncommands (output paths are per round; kv-cache --storage-capacity-gb is 50 % of the free space at the time, a guard against filling the disk):',
    );
    for (const [what, cmd] of ctx.commands) console.log(`  ${what}: ${cmd}`);
  } finally {
    await huge?.release().catch((e: unknown) => console.error(`bench:fio: huge pages not released: ${messageOf(e)}`));
    await rm(root, { recursive: true, force: true });
    console.log(`\nremoved ${root}`);
  }
}

await main().catch((e: unknown) => {
  console.error(`bench:fio: ${messageOf(e)}`);
  process.exitCode = isUsageError(e) ? 2 : 1;
});
