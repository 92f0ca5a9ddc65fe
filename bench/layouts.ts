// bench:layouts — what each KV layout costs per block (issue 34 items 6 and 7).
//
// The same block workload — the Mooncake conversation trace replayed closed loop (`--trace-speedup 0`,
// passes repeated until --seconds), storage only (no GPU or CPU tier, no generation time) — runs with
// `--kv-layout flat`, `fanout` and `slab` on a RAM-backed ext4 (bench/lib/ram-device.ts: the harness is
// the limit there) and on a directory of this machine's disk (--dir), alternating the order of devices
// and layouts round by round. The default model, kv32, has 32 bytes per token, so a 512-token block is
// 16 KiB and a run is mostly block operations; --models kv32,tiny-1b adds a row of 12 MiB blocks.
//
// Per run, from its results file: the storage tier's read and write GiB/s, CPU-s per GiB moved, block
// operations (storage reads + writes) per CPU-second and per wall second, metadata operations per GiB
// (`kvcache_bench.metadata_ops`, n/a on builds without it), the p95 of block reads, device ÷ tool bytes
// per direction (slab's pool lay-out is before the window, in neither, and printed on its own), and the
// run's validity. Then medians per device × model × layout with a verdict on the goals: device bytes =
// tool bytes ±5 %; kv32 on the RAM device ≥ 30,000 block operations per CPU-second.
//
// The RAM device needs root; elsewhere it is left out, saying why (and with only it asked for, the
// script exits 0 without measuring). Everything it makes is removed at the end and on Ctrl-C.
// Usage: node dist/bench/layouts.js [--rounds 3] [--seconds 15] [--layouts flat,fanout,slab] [--devices ram,disk]
//          [--models kv32[,tiny-1b]] [--users 8] [--capacity-gib 2] [--ram-gib 8] [--dir D] [--trace FILE]
//          [--warm-up 1] [--settle-busy-pct 15] [--settle-limit 120]
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deviceForPath } from '../src/metrics/diskstats.js';
import { messageOf } from '../src/util/errors.js';
import { GiB } from '../src/util/units.js';
import { ChildRunner, checkExit, quote } from './lib/child.js';
import { readJson } from './lib/json.js';
import { KV_BIN, PROJECT_ROOT, storageOnlyArgs } from './lib/kv-cache.js';
import { figuresOf, OPS_PER_CORE_GOAL } from './lib/layouts/figures.js';
import { parseOptions, SMALL_MODEL, SMALL_MODEL_CONFIG, UsageError } from './lib/layouts/options.js';
import type { DeviceKind, Layout, Options } from './lib/layouts/options.js';
import { medianRows, runRows } from './lib/layouts/report.js';
import type { LayoutRun } from './lib/layouts/report.js';
import { fileSystemOf, freeBytes, machineLine } from './lib/machine.js';
import { makeRamDevice, ramDeviceUnavailable } from './lib/ram-device.js';
import type { RamDevice } from './lib/ram-device.js';
import { inRoundOrder } from './lib/rounds.js';
import { settleDevice } from './lib/settle.js';

const SCRIPT = 'bench:layouts';
/** The share of a device's free space one run's capacity may take: fan-out directories and inodes come on top. */
const CAPACITY_SHARE = 0.4;

/** A device the runs go to: its kind, its block device's name and the directory the cache directories go in. */
interface Target {
  readonly kind: DeviceKind;
  readonly device: string;
  readonly root: string;
}

class Interrupted extends Error {}

class Bench {
  readonly runner = new ChildRunner(PROJECT_ROOT);
  readonly runs: LayoutRun[] = [];
  /** One kv-cache command per device × model × layout, printed at the end. */
  readonly commands = new Map<string, string>();

  constructor(
    private readonly opts: Options,
    private readonly config: string,
    private readonly outDir: string,
  ) {}

  async run(target: Target, model: string, layout: Layout, round: number): Promise<void> {
    if (this.runner.interrupted) throw new Interrupted();
    const waited = await settleDevice(target.device, target.root, this.opts.settleBusyPct, this.opts.settleLimitSec * 1000);
    if (waited > 2.5) console.log(`(settled for ${waited.toFixed(1)} s: the previous run's writeback, or other work on ${target.device})`);
    const cacheDir = join(target.root, `kv-${layout}`);
    const output = join(this.outDir, `${target.kind}-${model}-${layout}-${round}.json`);
    await rm(cacheDir, { recursive: true, force: true });
    const { users, seconds, capacityGiB, trace } = this.opts;
    const args = [
      ...storageOnlyArgs({ model, users, seconds, cacheDir, capacityGiB, output, config: this.config }),
      ...['--mooncake-trace', trace, '--trace-speedup', '0', '--replay-cycles', '0', '--kv-layout', layout],
    ];
    const child = await this.runner.run(process.execPath, [KV_BIN, ...args], target.device);
    if (this.runner.interrupted) throw new Interrupted();
    checkExit(child, `kv-cache (${target.kind}, ${model}, ${layout}, round ${round})`);
    this.commands.set(`${target.kind} ${model} ${layout}`, child.command);
    const figures = figuresOf(await readJson(output));
    await rm(output, { force: true });
    await rm(cacheDir, { recursive: true, force: true });
    if (typeof figures === 'string') throw new Error(`${target.kind} ${model} ${layout} round ${round}: ${figures}`);
    const run: LayoutRun = { device: target.kind, model, layout, round, figures };
    this.runs.push(run);
    console.log(runRows([run]).split('\n').slice(2).join('\n'));
  }
}

/** The disk target: a fresh directory under --dir, on one block device. */
async function diskTarget(opts: Options): Promise<Target> {
  const root = await mkdtemp(join(opts.dir, 'kv_layouts_'));
  const dev = await deviceForPath(root);
  if (dev === undefined) {
    await rm(root, { recursive: true, force: true });
    throw new UsageError(`--dir ${opts.dir}: no single block device under it (tmpfs, overlay, RAID?): its bytes cannot be counted`);
  }
  return { kind: 'disk', device: dev.name, root };
}

/** Refuses a capacity a device cannot hold several times over: a full device would measure ENOSPC, not a layout. */
async function checkRoom(target: Target, capacityGiB: number): Promise<void> {
  const free = await freeBytes(target.root);
  if (capacityGiB * GiB > free * CAPACITY_SHARE)
    throw new UsageError(
      `--capacity-gib ${capacityGiB} is over ${CAPACITY_SHARE * 100} % of the ${(free / GiB).toFixed(1)} GiB free on the ${target.kind} device (${target.root}); give less`,
    );
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const why = opts.devices.includes('ram') ? ramDeviceUnavailable() : undefined;
  const kinds = why === undefined ? opts.devices : opts.devices.filter((d) => d !== 'ram');
  if (why !== undefined) console.log(`${SCRIPT}: the RAM device is left out: ${why}`);
  if (kinds.length === 0) {
    console.log(`${SCRIPT}: skipped: no device left to measure`);
    return;
  }
  console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
  console.log(machineLine());

  const outDir = await mkdtemp(join(tmpdir(), 'kv_layouts_out_'));
  const targets: Target[] = [];
  let ram: RamDevice | undefined;
  let bench: Bench | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${SCRIPT}: ${sig}: stopping the current run, then removing what the bench made`);
    bench?.runner.interrupt(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    for (const kind of kinds) {
      if (kind === 'ram') {
        ram = makeRamDevice(opts.ramGiB * GiB);
        targets.push({ kind, device: ram.name, root: ram.mount });
      } else targets.push(await diskTarget(opts));
    }
    for (const t of targets) {
      await checkRoom(t, opts.capacityGiB);
      const what = t.kind === 'ram' ? `${opts.ramGiB} GiB RAM-backed ext4 in /dev/shm` : 'the disk';
      console.log(`${t.kind}: ${what}, ${t.device}, ${await fileSystemOf(t.root)}, runs under ${t.root}`);
    }
    console.log(
      `workload: ${opts.trace} closed loop (--trace-speedup 0, passes until ${opts.seconds} s), storage only, ` +
        `${opts.users} users, --storage-capacity-gb ${opts.capacityGiB}; models ${opts.models.join(', ')}; layouts ${opts.layouts.join(', ')}; ` +
        `${opts.rounds} round(s), devices and layouts alternating; ${opts.warmUp} warm-up run(s) per device`,
    );
    console.log(
      "block ops = storage reads + writes in the measured window; slab's pool lay-out (lay-out GiB) is written before the window, in neither tool nor device bytes",
    );
    const config = join(outDir, 'models.yaml');
    await writeFile(config, SMALL_MODEL_CONFIG);
    bench = new Bench(opts, config, outDir);
    // Warm-up: the first model and layout; a fresh file system runs its first writes slow.
    for (const t of targets)
      for (let i = 0; i < opts.warmUp; i++) await bench.run(t, opts.models[0] ?? SMALL_MODEL, opts.layouts[0] ?? 'flat', 0);
    for (let round = 1; round <= opts.rounds; round++)
      for (const t of inRoundOrder(round, targets))
        for (const model of opts.models) for (const layout of inRoundOrder(round, opts.layouts)) await bench.run(t, model, layout, round);
    console.log(`\nevery run (round warm = warm-up, not measured):\n${runRows(bench.runs)}`);
    console.log(
      `\nmedians over rounds (verdict: device ÷ tool bytes within ±5 % each way; ${SMALL_MODEL} on the RAM device ≥ ${OPS_PER_CORE_GOAL.toLocaleString('en-US')} block ops per CPU-s; runs VALID):`,
    );
    console.log(medianRows(bench.runs));
    console.log('\nkv-cache commands (paths are temporary):');
    for (const [key, cmd] of bench.commands) console.log(`  ${key}: ${cmd}`);
  } finally {
    ram?.remove();
    for (const t of targets) if (t.kind === 'disk') await rm(t.root, { recursive: true, force: true });
    await rm(outDir, { recursive: true, force: true });
  }
}

await main().catch((e: unknown) => {
  if (e instanceof Interrupted) {
    console.error(`${SCRIPT}: interrupted; everything it made is removed`);
    process.exitCode = 130;
    return;
  }
  console.error(`${SCRIPT}: ${messageOf(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
});
