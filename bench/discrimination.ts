// Discrimination: do kv-cache's headline figures follow a real change of the device?
//
// The same device is measured twice per round: as it is ("fast") and with reads throttled by the
// kernel ("slow": cgroup v2 io.max rbps/riops, or cgroup v1 blkio.throttle.read_*_device, on the block
// device under --dir). In each condition a read-heavy storage-only kv-cache run (`--decode-only`, zero
// think time, no CPU/GPU tier) and `fio --rw=read --ioengine=psync --direct=1` with the same
// concurrency and I/O size run inside the same cgroup, launched the same way (a shell that moves itself
// into the group, then execs the program). Fast/slow and fio/kv-cache alternate from round to round.
//
// For each headline figure of kv-cache it prints the fast/slow factor (for a latency, slow/fast) next
// to fio's fast/slow read-bandwidth factor: a figure that ranks devices faithfully moves as fio does.
//
// Needs root (it creates cgroups). Cleans up its cgroups and files at the end and on Ctrl-C.
//
// Usage: node dist/bench/discrimination.js [--dir D] [--seconds 15] [--users 4] [--model tiny-1b]
//          [--rounds 3] [--read-mib-per-sec 50] [--read-iops 0]
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IO_CHUNK_BYTES } from '../src/engine/tier-stack.js';
import { DiskWatch } from '../src/metrics/diskstats.js';
import { messageOf } from '../src/util/errors.js';
import { GiB, MiB } from '../src/util/units.js';
import { ChildRunner, quote } from './lib/child.js';
import { ensureFio, reserveHugePages } from './lib/fio.js';
import type { HugePageReservation } from './lib/fio.js';
import { PROJECT_ROOT, writeZeroThinkConfig } from './lib/kv-cache.js';
import { freeBytes } from './lib/machine.js';
import { ReadThrottle, detectThrottle, removeThrottleLoudly } from './lib/throttle.js';
import { Interrupted, UsageError, parseOptions, prepopBytes } from './lib/discrimination/options.js';
import type { Options } from './lib/discrimination/options.js';
import { runRound } from './lib/discrimination/phases.js';
import type { Context, FioPhase, KvPhase } from './lib/discrimination/phases.js';
import { printPhases, printSetting, printSummary } from './lib/discrimination/report.js';

const SCRIPT = 'bench:discrimination';
/** Share of the free space the fio files and one kv-cache run may occupy together. */
const SPACE_SHARE = 0.5;

/** Refusals before anything is created: exit 2 with one message. */
async function preflight(opts: Options): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new UsageError('needs root: it creates cgroups and sets their read limits (run it as root, e.g. with sudo)');
  if (opts.dir !== undefined) {
    const s = await stat(opts.dir).catch(() => undefined);
    if (!s?.isDirectory()) throw new UsageError(`--dir ${opts.dir} is not an existing directory (create it first)`);
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  await preflight(opts);
  const support = detectThrottle();
  if (typeof support === 'string') throw new UsageError(support);
  const parent = opts.dir ?? tmpdir();
  const watch = await DiskWatch.forPath(parent);
  if (watch === undefined)
    throw new UsageError(
      `no single block device under ${parent} (tmpfs, overlay on several disks, NFS?): nothing to throttle; pick another --dir`,
    );
  const perJob = Math.ceil(prepopBytes(opts) / opts.users / IO_CHUNK_BYTES) * IO_CHUNK_BYTES;
  const need = prepopBytes(opts) * 1.5 + perJob * opts.users;
  const free = await freeBytes(parent);
  if (need > free * SPACE_SHARE)
    throw new UsageError(
      `not enough free space under ${parent}: needs ${(need / GiB).toFixed(1)} GiB, ≤ ${SPACE_SHARE * 100} % of the ${(free / GiB).toFixed(1)} GiB free; use fewer --users or a smaller --model`,
    );
  ensureFio(SCRIPT);

  const root = await mkdtemp(join(parent, 'kv_discrimination_'));
  const runner = new ChildRunner(PROJECT_ROOT);
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${SCRIPT}: ${sig}: stopping the current child, then removing the cgroups and files`);
    runner.interrupt(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let throttle: ReadThrottle | undefined;
  let huge: HugePageReservation | undefined;
  try {
    throttle = await ReadThrottle.create(
      support,
      { major: watch.device.major, minor: watch.device.minor, bytesPerSec: opts.readBytesPerSec, iops: opts.readIops },
      `kvcache-discrimination-${process.pid}`,
    );
    // A 4 MiB buffer per fio job in 2 MiB huge pages; fio rounds each job's buffer up (alignment), so be generous.
    huge = await reserveHugePages(opts.users * (Math.ceil(IO_CHUNK_BYTES / (2 * MiB)) + 2) + 8);
    const fioDir = join(root, 'fio');
    const ctx: Context = {
      opts,
      root,
      device: watch.device,
      runner,
      throttle,
      fioJob: {
        name: 'kvd',
        dir: fioDir,
        rw: 'read',
        engine: 'psync',
        numjobs: opts.users,
        iodepth: 1,
        sizeBytes: perJob,
        extra: [...huge.fioFlags],
      },
      capacityGiB: Math.ceil((prepopBytes(opts) * 1.5) / GiB),
      zeroThink: writeZeroThinkConfig(root),
      commands: new Map(),
    };
    console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
    await printSetting(ctx);
    console.log(`fio buffers: ${huge.note}`);
    const fio: FioPhase[] = [];
    const kv: KvPhase[] = [];
    for (let r = 1; r <= opts.rounds; r++) {
      console.log(`--- round ${r} ---`);
      const got = await runRound(ctx, r);
      fio.push(...got.fio);
      kv.push(...got.kv);
      console.log('');
      printPhases(got.fio, got.kv);
      console.log('');
    }
    printSummary(opts, fio, kv);
    console.log('\ncommands (output paths are per round; each run enters its cgroup through the `sh -c` prefix, then execs the program):');
    for (const [what, cmd] of ctx.commands) console.log(`  ${what}: ${cmd}`);
  } finally {
    await huge?.release().catch((e: unknown) => console.error(`${SCRIPT}: huge pages not released: ${messageOf(e)}`));
    await rm(root, { recursive: true, force: true });
    console.log(`\nremoved ${root}`);
    if (throttle !== undefined) await removeThrottleLoudly(throttle, SCRIPT);
  }
}

await main().catch((e: unknown) => {
  console.error(`${SCRIPT}: ${messageOf(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : e instanceof Interrupted ? 130 : 1;
});
