// The measured phases of bench:fio: a storage-only kv-cache run and the fio jobs it is compared with,
// each reduced to its device-level bandwidth plus diagnostics.
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../../src/engine/prepare.js';
import { BUILTIN_MODELS, entryBytes } from '../../src/model/models.js';
import { GiB, KiB, MiB } from '../../src/util/units.js';
import { SAMPLE_MS, checkExit } from '../lib/child.js';
import type { ChildRunner } from '../lib/child.js';
import { closest, pickBytes, windowBetween } from '../lib/disk-window.js';
import type { Window } from '../lib/disk-window.js';
import { fioArgs } from '../lib/fio.js';
import type { FioJob } from '../lib/fio.js';
import { mib } from '../lib/format.js';
import { field, num, readJson, str } from '../lib/json.js';
import { KV_BIN, storageOnlyArgs, writeZeroThinkConfig } from '../lib/kv-cache.js';
import { freeBytes } from '../lib/machine.js';
import { inRoundOrder } from '../lib/rounds.js';
import type { Options, Workload } from './options.js';

/** Share of the free space one phase may occupy. */
export const SPACE_SHARE = 0.4;
/**
 * Share of the free space fio's write files may take (removed right after the phase). As large as is
 * safe because a time_based fio job that reaches the end of its files wraps around and overwrites blocks
 * it has already allocated, which is faster than kv-cache's writes of fresh entries (allocation, and on
 * a thin virtual disk the host's allocation too): 2 GiB files flattered fio's write figure by ~40 %.
 */
const FIO_WRITE_SPACE_SHARE = 0.6;

export type Engine = 'kv-cache' | 'fio psync' | 'fio libaio';

/** One measured phase; `bytesPerSec` is the device-level figure the comparison uses. */
export interface Phase {
  readonly round: number;
  readonly workload: Workload;
  readonly engine: Engine;
  readonly bytesPerSec: number;
  readonly deviceBytes: number;
  readonly windowSec: number;
  /** Bytes the program itself counted (kv-cache storage_bytes, fio io_bytes). */
  readonly ownBytes: number | undefined;
  readonly ownBytesPerSec: number | undefined;
  /** Our diskstats delta around the whole child process ÷ its wall time. */
  readonly wholeChildBytesPerSec: number;
  readonly wholeChildSec: number;
  /** Diagnostics window: kv-cache's measured phase as seen from its stdout, fio's whole process. */
  readonly diag: Window;
  readonly diagLabel: string;
  readonly notes: readonly string[];
  readonly command: string;
}

export interface Context {
  readonly opts: Options;
  readonly root: string;
  readonly device: string;
  readonly runner: ChildRunner;
  /** Flags every fio job gets: `--iomem=shmhuge` when huge pages were reserved (bench/lib/fio.ts says why). */
  readonly fioFlags: readonly string[];
  /** Each kind of command run, as printed at the end. */
  readonly commands: Map<string, string>;
}

/** Bytes kv-cache pre-populates for a read (decode-only) run. */
export function prepopBytes(opts: Options): number {
  const model = BUILTIN_MODELS.get(opts.model);
  if (model === undefined) throw new Error(`unknown model ${opts.model}`);
  return opts.users * PREPOP_ENTRIES_PER_USER * entryBytes(model, PREPARE_ENTRY_TOKENS);
}

async function runKvCachePhase(ctx: Context, round: number, w: Workload): Promise<Phase> {
  const free = await freeBytes(ctx.root);
  // The tool's default capacity is 95 % of the free space; cap it so a fast device cannot fill the disk.
  const capacityGiB = Math.max(1, Math.floor((free * 0.5) / GiB));
  const notes: string[] = [];
  if (w === 'read' && prepopBytes(ctx.opts) > capacityGiB * GiB) {
    notes.push(
      `pre-population (${(prepopBytes(ctx.opts) / GiB).toFixed(1)} GiB) exceeds the capacity cap ${capacityGiB} GiB: entries were evicted; use fewer --users`,
    );
  }
  const output = join(ctx.root, `kv-${w}-r${round}.json`);
  const o = ctx.opts;
  const args = [
    KV_BIN,
    ...storageOnlyArgs({
      model: o.model,
      users: o.users,
      seconds: o.seconds,
      config: writeZeroThinkConfig(ctx.root),
      node: w === 'write' ? 'prefill' : 'decode',
      cacheDir: join(ctx.root, 'kv'),
      capacityGiB,
      output,
    }),
  ];
  const run = await ctx.runner.run(process.execPath, args, ctx.device, [
    { name: 'start', pattern: w === 'read' ? /^Pre-populated \d+ entries/ : /^Status: / },
  ]);
  checkExit(run, `kv-cache ${w}`);
  ctx.commands.set(`kv-cache ${w}`, run.command);
  const json = await readJson(output);
  await rm(output, { force: true });
  const kb = field(json, 'kvcache_bench');
  const dev = field(kb, 'device_io');
  if (dev === null || dev === undefined) throw new Error('kv-cache could not resolve the block device (device_io is null)');
  const windowSec = num(kb, 'measured_window_sec') ?? 0;
  const deviceBytes = num(dev, w === 'write' ? 'written_bytes' : 'read_bytes') ?? 0;
  const own = field(kb, 'storage_bytes');
  const cs = field(json, 'summary', 'cache_stats');
  const evictions = num(cs, 'evictions') ?? 0;
  if (evictions > 0) notes.push(`${evictions} evictions (capacity cap reached)`);
  const stop = str(kb, 'stop_reason');
  if (stop !== 'duration') notes.push(`stop reason ${stop ?? '?'}`);
  const p95 = num(cs, w === 'write' ? 'storage_write_device_p95_ms' : 'storage_read_device_p95_ms');
  const entryMean = num(kb, 'entry_sizes', 'meanBytes');
  const loop = num(kb, 'event_loop_delay_ms', 'p99');
  // Summed storage time of completed requests ÷ (window × users): a lower bound on how much of the
  // time a user had I/O under way (requests cut short at the stop are not counted).
  const ioSec = num(json, 'total_storage_io_latency');
  const busy = ioSec !== undefined && windowSec > 0 ? ioSec / (windowSec * ctx.opts.users) : undefined;
  notes.push(
    `requests ${num(json, 'requests_completed') ?? '?'}, device ops ${num(dev, w === 'write' ? 'write_ops' : 'read_ops') ?? '?'}` +
      (entryMean !== undefined ? `, live entry mean ${mib(entryMean)} MiB` : '') +
      (p95 !== undefined ? `, entry ${w} device-time p95 ${p95.toFixed(0)} ms` : '') +
      (busy !== undefined ? `, completed requests' storage time = ${(100 * busy).toFixed(0)} % of window × users` : '') +
      (loop !== undefined ? `, event-loop delay p99 ${loop.toFixed(1)} ms` : ''),
  );
  // The measured phase seen from outside: from the last setup line on stdout for the tool's own window.
  const start = run.marks.get('start');
  const end = start === undefined ? undefined : closest(run.samples, start.t + windowSec * 1000);
  const diag = start !== undefined && end !== undefined && end.t > start.t ? windowBetween(start, end) : run.whole;
  return {
    round,
    workload: w,
    engine: 'kv-cache',
    bytesPerSec: num(dev, w === 'write' ? 'write_bytes_per_sec' : 'read_bytes_per_sec') ?? 0,
    deviceBytes,
    windowSec,
    ownBytes: num(own, w === 'write' ? 'written_bytes' : 'read_bytes'),
    ownBytesPerSec: num(own, w === 'write' ? 'write_bytes_per_sec' : 'read_bytes_per_sec'),
    wholeChildBytesPerSec: pickBytes(run.whole.disk, w).bytes / run.whole.seconds,
    wholeChildSec: run.whole.seconds,
    diag,
    diagLabel: diag !== run.whole ? `setup-done line on stdout + measured window, ±${SAMPLE_MS} ms` : 'whole child',
    notes,
    command: run.command,
  };
}

async function runFioPhase(ctx: Context, round: number, job: FioJob, label: Engine): Promise<Phase> {
  const output = join(ctx.root, `fio-${job.name}-r${round}.json`);
  const run = await ctx.runner.run('fio', fioArgs(job, ctx.opts.ioBytes, ctx.opts.seconds, output), ctx.device);
  checkExit(run, `fio ${job.name}`);
  ctx.commands.set(`${label} ${job.rw}`, run.command);
  const json = await readJson(output);
  await rm(output, { force: true });
  const side = field(json, 'jobs', 0, job.rw);
  const dev = pickBytes(run.whole.disk, job.rw);
  const runtimeSec = (num(side, 'runtime') ?? 0) / 1000;
  if (runtimeSec <= 0) throw new Error(`fio ${job.name} reported no runtime`);
  const clat = num(side, 'clat_ns', 'mean');
  const usr = num(json, 'jobs', 0, 'usr_cpu');
  const sys = num(json, 'jobs', 0, 'sys_cpu');
  const ownBytes = num(side, 'io_bytes');
  const files = job.sizeBytes * job.numjobs;
  const wrapped = job.rw === 'write' && ownBytes !== undefined && ownBytes > files;
  const notes = [
    ...(wrapped
      ? [
          `WARNING: fio wrote ${(ownBytes / GiB).toFixed(1)} GiB into ${(files / GiB).toFixed(1)} GiB of files: ` +
            `${((100 * (ownBytes - files)) / ownBytes).toFixed(0)} % of its writes overwrote blocks it had allocated (kv-cache writes fresh entries), ` +
            'which flatters fio; give --dir more free space',
        ]
      : []),
    `fio process ${run.whole.seconds.toFixed(2)} s for a ${runtimeSec.toFixed(2)} s runtime` +
      (clat !== undefined ? `, completion latency mean ${(clat / 1e6).toFixed(1)} ms per ${ctx.opts.ioBytes / KiB} KiB I/O` : '') +
      (usr !== undefined && sys !== undefined ? `, fio cpu usr ${usr.toFixed(1)} % sys ${sys.toFixed(1)} %` : ''),
  ];
  return {
    round,
    workload: job.rw,
    engine: label,
    // Device bytes of the whole process ÷ fio's own I/O window, like kv-cache's measured window; the
    // bytes outside that window are fio's file creation and close-time fsync, ≈ 0 (see own bytes).
    bytesPerSec: dev.bytes / runtimeSec,
    deviceBytes: dev.bytes,
    windowSec: runtimeSec,
    ownBytes,
    ownBytesPerSec: num(side, 'bw_bytes'),
    wholeChildBytesPerSec: dev.bytes / run.whole.seconds,
    wholeChildSec: run.whole.seconds,
    diag: run.whole,
    diagLabel: 'whole fio process',
    notes,
    command: run.command,
  };
}

/** Per-job fio file size for writes: FIO_WRITE_SPACE_SHARE of the free space, split between the jobs. */
async function fioWriteSize(ctx: Context): Promise<number> {
  const perJob = Math.floor(((await freeBytes(ctx.root)) * FIO_WRITE_SPACE_SHARE) / ctx.opts.users / ctx.opts.ioBytes) * ctx.opts.ioBytes;
  const size = perJob;
  if (size < 4 * ctx.opts.ioBytes) throw new Error(`not enough free space under ${ctx.root} for ${ctx.opts.users} fio files`);
  return size;
}

async function fioWritePhases(ctx: Context, round: number): Promise<Phase[]> {
  const n = ctx.opts.users;
  const size = await fioWriteSize(ctx);
  const dir = join(ctx.root, 'fio-write');
  const out: Phase[] = [];
  for (const [engine, label] of [
    ['psync', 'fio psync'],
    ['libaio', 'fio libaio'],
  ] as const) {
    await mkdir(dir, { recursive: true });
    const job: FioJob =
      engine === 'psync'
        ? { name: 'kvw', dir, rw: 'write', engine, numjobs: n, iodepth: 1, sizeBytes: size, extra: [...ctx.fioFlags] }
        : {
            name: 'kvwa',
            dir,
            rw: 'write',
            engine,
            numjobs: 1,
            iodepth: n,
            sizeBytes: size * n,
            extra: [`--nrfiles=${n}`, ...ctx.fioFlags],
          };
    try {
      out.push(await runFioPhase(ctx, round, job, label));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return out;
}

/** Files the read phases use: one per job, laid out by fio itself before anything is measured. */
export class ReadLayout {
  private laidOut = false;
  readonly dir: string;

  constructor(
    private readonly ctx: Context,
    readonly perJobBytes: number,
    readonly keepBetweenRounds: boolean,
  ) {
    this.dir = join(ctx.root, 'fio-read');
  }

  job(): FioJob {
    return {
      name: 'kvr',
      dir: this.dir,
      rw: 'read',
      engine: 'psync',
      numjobs: this.ctx.opts.users,
      iodepth: 1,
      sizeBytes: this.perJobBytes,
      extra: [...this.ctx.fioFlags],
    };
  }

  async ensure(): Promise<void> {
    if (this.laidOut) return;
    const total = this.perJobBytes * this.ctx.opts.users;
    if (total > (await freeBytes(this.ctx.root)) * 0.8)
      throw new Error(`not enough free space to lay out ${(total / GiB).toFixed(1)} GiB of fio read files`);
    await mkdir(this.dir, { recursive: true });
    console.log(`  (laying out ${this.ctx.opts.users} × ${(this.perJobBytes / MiB).toFixed(0)} MiB fio read files, not measured)`);
    const run = await this.ctx.runner.run(
      'fio',
      fioArgs(this.job(), this.ctx.opts.ioBytes, this.ctx.opts.seconds, undefined),
      this.ctx.device,
    );
    checkExit(run, 'fio layout');
    this.ctx.commands.set('fio layout (not measured)', run.command);
    spawnSync('sync');
    this.laidOut = true;
  }

  async files(): Promise<string[]> {
    return (await readdir(this.dir)).filter((f) => f.startsWith('kvr.')).sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
  }

  async drop(force: boolean): Promise<void> {
    if (this.keepBetweenRounds && !force) return;
    await rm(this.dir, { recursive: true, force: true });
    this.laidOut = false;
  }
}

async function fioReadPhases(ctx: Context, round: number, layout: ReadLayout): Promise<Phase[]> {
  await layout.ensure();
  try {
    const psync = await runFioPhase(ctx, round, layout.job(), 'fio psync');
    const files = await layout.files();
    const aio: FioJob = {
      name: 'kvra',
      dir: layout.dir,
      rw: 'read',
      engine: 'libaio',
      numjobs: 1,
      iodepth: ctx.opts.users,
      sizeBytes: layout.perJobBytes * files.length,
      extra: [`--filename=${files.join(':')}`, ...ctx.fioFlags],
    };
    return [psync, await runFioPhase(ctx, round, aio, 'fio libaio')];
  } finally {
    await layout.drop(false);
  }
}

/** One round: per workload, kv-cache and fio, in the order of the round (alternating). */
export async function runRound(ctx: Context, round: number, layout: ReadLayout): Promise<Phase[]> {
  const phases: Phase[] = [];
  const check = (): void => {
    if (ctx.runner.interrupted) throw new Error('interrupted');
  };
  for (const w of ctx.opts.workloads) {
    const kvCacheStep = async (): Promise<void> => {
      check();
      console.log(`  round ${round}: kv-cache ${w}…`);
      phases.push(await runKvCachePhase(ctx, round, w));
    };
    const fioStep = async (): Promise<void> => {
      check();
      console.log(`  round ${round}: fio ${w} (psync, then libaio reference)…`);
      phases.push(...(w === 'write' ? await fioWritePhases(ctx, round) : await fioReadPhases(ctx, round, layout)));
    };
    for (const step of inRoundOrder(round, [kvCacheStep, fioStep])) await step();
  }
  return phases;
}
