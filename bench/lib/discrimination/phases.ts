// The runs of bench:discrimination: fio and kv-cache, each inside the fast or slow cgroup, with the
// device I/O of each attributed to its own cgroup or to everything else on the disk meanwhile.
import { spawnSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { IO_CHUNK_BYTES } from '../../../src/engine/tier-stack.js';
import type { BlockDevice } from '../../../src/metrics/diskstats.js';
import { checkExit } from '../child.js';
import type { ChildRun, ChildRunner } from '../child.js';
import { fioArgs } from '../fio.js';
import type { FioJob } from '../fio.js';
import { field, num, readJson, str } from '../json.js';
import { KV_BIN, storageOnlyArgs } from '../kv-cache.js';
import { inRoundOrder } from '../rounds.js';
import type { ReadThrottle } from '../throttle.js';
import { FIGURES } from './figures.js';
import { Interrupted } from './options.js';
import type { Condition, Options } from './options.js';

/** Throws Interrupted when the runner was interrupted (the child then exits non-zero), else as checkExit. */
export function checkRun(runner: ChildRunner, run: ChildRun, what: string): void {
  if (runner.interrupted) throw new Interrupted(`interrupted during ${what}`);
  checkExit(run, what);
}

/** A run's device I/O split by origin: its own cgroup's, and everything else on the device meanwhile. */
export interface Attribution {
  /** Device read bytes of the run's cgroup. */
  readonly ownReadBytes: number;
  /** Whole-device bytes (read + written, /proc/diskstats around the child) from outside the run's cgroup, per second of the child. */
  readonly foreignBytesPerSec: number;
  /** Those foreign bytes ÷ the cgroup's own bytes (read + written) over the child. */
  readonly foreignShare: number;
}

/** Foreign device I/O above this share of a run's own marks its round as disturbed by other work on the disk. */
export const FOREIGN_LIMIT = 0.05;

/** Runs `file args` in `condition`'s cgroup and attributes the device I/O meanwhile. */
export async function runInGroup(
  ctx: Context,
  condition: Condition,
  file: string,
  args: readonly string[],
): Promise<{ run: ChildRun; attribution: Attribution }> {
  const cmd = ctx.throttle.wrap(condition, file, args);
  const before = await ctx.throttle.ioBytes(condition);
  const run = await ctx.runner.run(cmd.file, cmd.args, ctx.device.name);
  const after = await ctx.throttle.ioBytes(condition);
  const own = after.read - before.read + after.written - before.written;
  const foreign = Math.max(0, run.whole.disk.readBytes + run.whole.disk.writeBytes - own);
  return {
    run,
    attribution: {
      ownReadBytes: after.read - before.read,
      foreignBytesPerSec: run.whole.seconds > 0 ? foreign / run.whole.seconds : 0,
      foreignShare: own > 0 ? foreign / own : foreign > 0 ? Infinity : 0,
    },
  };
}

export interface FioPhase {
  readonly round: number;
  readonly condition: Condition;
  /** fio's own read bandwidth (bytes it read ÷ its runtime). */
  readonly bytesPerSec: number;
  /** Device read bytes (/proc/diskstats around the fio process, whole device) ÷ fio's runtime. */
  readonly deviceBytesPerSec: number;
  /** Device read bytes of fio's cgroup alone ÷ fio's runtime. */
  readonly groupBytesPerSec: number;
  readonly runtimeSec: number;
  readonly attribution: Attribution;
}

export interface KvPhase {
  readonly round: number;
  readonly condition: Condition;
  /** One value per FIGURES entry (undefined when the results file lacks it). */
  readonly values: ReadonlyArray<number | undefined>;
  readonly requests: number | undefined;
  readonly aborted: number | undefined;
  readonly windowSec: number | undefined;
  /** Device read bytes of kv-cache's cgroup alone (whole process; its setup only writes) ÷ its measured window. */
  readonly groupBytesPerSec: number | undefined;
  readonly attribution: Attribution;
  readonly evictions: number;
  /** How its I/O buffers were backed (kvcache_bench.machine.io_buffers): it shapes the requests the device sees. */
  readonly ioBuffers: string | undefined;
}

export interface Context {
  readonly opts: Options;
  readonly root: string;
  readonly device: BlockDevice;
  readonly runner: ChildRunner;
  readonly throttle: ReadThrottle;
  readonly fioJob: FioJob;
  readonly capacityGiB: number;
  readonly zeroThink: string;
  /** The exact command of each kind of run, as printed at the end. */
  readonly commands: Map<string, string>;
}

/**
 * fio's read files, written just before each fio run (not measured) and removed after it: kv-cache
 * writes its entries just before reading them too, so neither side reads data that has had longer to
 * settle (on a virtual disk, recently written data can still be in the host's cache).
 */
export async function layOutFio(ctx: Context): Promise<void> {
  await mkdir(ctx.fioJob.dir, { recursive: true });
  const run = await ctx.runner.run('fio', fioArgs(ctx.fioJob, IO_CHUNK_BYTES, ctx.opts.seconds, undefined), ctx.device.name);
  checkRun(ctx.runner, run, 'fio layout');
  // fio lays files out with buffered writes: flush them now, or the first direct reads would wait for writeback.
  // (kv-cache's pre-population writes with O_DIRECT and fsync, so nothing of it is pending.)
  spawnSync('sync');
  ctx.commands.set('fio layout (before each fio run, not measured)', run.command);
}

export async function runFio(ctx: Context, round: number, condition: Condition): Promise<FioPhase> {
  const output = join(ctx.root, `fio-${condition}-r${round}.json`);
  const inner = fioArgs(ctx.fioJob, IO_CHUNK_BYTES, ctx.opts.seconds, output);
  let json: unknown;
  let got;
  try {
    await layOutFio(ctx);
    got = await runInGroup(ctx, condition, 'fio', inner);
    const run = got.run;
    checkRun(ctx.runner, run, `fio (${condition})`);
    ctx.commands.set(`fio ${condition}`, run.command);
    json = await readJson(output);
  } finally {
    await rm(output, { force: true });
    await rm(ctx.fioJob.dir, { recursive: true, force: true });
  }
  const side = field(json, 'jobs', 0, 'read');
  const runtimeSec = (num(side, 'runtime') ?? 0) / 1000;
  const bw = num(side, 'bw_bytes');
  if (runtimeSec <= 0 || bw === undefined) throw new Error(`fio (${condition}) reported no read runtime or bandwidth`);
  return {
    round,
    condition,
    bytesPerSec: bw,
    deviceBytesPerSec: got.run.whole.disk.readBytes / runtimeSec,
    groupBytesPerSec: got.attribution.ownReadBytes / runtimeSec,
    runtimeSec,
    attribution: got.attribution,
  };
}

export async function runKvCache(ctx: Context, round: number, condition: Condition): Promise<KvPhase> {
  const output = join(ctx.root, `kv-${condition}-r${round}.json`);
  const cacheDir = join(ctx.root, 'kv');
  const o = ctx.opts;
  const inner = [
    KV_BIN,
    ...storageOnlyArgs({
      model: o.model,
      users: o.users,
      seconds: o.seconds,
      config: ctx.zeroThink,
      node: 'decode',
      cacheDir,
      capacityGiB: ctx.capacityGiB,
      output,
    }),
  ];
  try {
    const { run, attribution } = await runInGroup(ctx, condition, process.execPath, inner);
    checkRun(ctx.runner, run, `kv-cache (${condition})`);
    ctx.commands.set(`kv-cache ${condition}`, run.command);
    const json = await readJson(output);
    const windowSec = num(json, 'kvcache_bench', 'measured_window_sec');
    return {
      round,
      condition,
      values: FIGURES.map((f) => num(json, ...f.path)),
      requests: num(json, 'requests_completed'),
      aborted: num(json, 'kvcache_bench', 'requests_aborted_at_stop'),
      windowSec,
      groupBytesPerSec: windowSec !== undefined && windowSec > 0 ? attribution.ownReadBytes / windowSec : undefined,
      attribution,
      evictions: num(json, 'summary', 'cache_stats', 'evictions') ?? 0,
      ioBuffers: str(json, 'kvcache_bench', 'machine', 'io_buffers'),
    };
  } finally {
    await rm(output, { force: true });
    await rm(cacheDir, { recursive: true, force: true });
  }
}

/**
 * One round: both conditions, in an order alternating by round; within a condition both programs, in an
 * order alternating by round too (and opposite between the conditions), so each program goes first in
 * each condition equally often over two rounds.
 */
export async function runRound(ctx: Context, round: number): Promise<{ fio: FioPhase[]; kv: KvPhase[] }> {
  const fio: FioPhase[] = [];
  const kv: KvPhase[] = [];
  const conditions = inRoundOrder(round, ['fast', 'slow'] as const);
  for (const condition of conditions) {
    for (const program of inRoundOrder(round + (condition === 'slow' ? 1 : 0), ['fio', 'kv-cache'] as const)) {
      if (ctx.runner.interrupted) throw new Interrupted('interrupted between runs');
      console.log(`  round ${round}: ${program} ${condition}…`);
      if (program === 'fio') fio.push(await runFio(ctx, round, condition));
      else kv.push(await runKvCache(ctx, round, condition));
    }
  }
  return { fio, kv };
}
