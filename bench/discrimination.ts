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
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { IO_CHUNK_BYTES } from '../src/engine/tier-stack.js';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../src/engine/prepare.js';
import { DiskWatch } from '../src/metrics/diskstats.js';
import type { BlockDevice } from '../src/metrics/diskstats.js';
import { BUILTIN_MODELS, entryBytes } from '../src/model/models.js';
import { messageOf } from '../src/util/errors.js';
import { GiB, KiB, MiB } from '../src/util/units.js';
import { positiveInt } from './lib/args.js';
import { ChildRunner, checkExit, quote } from './lib/child.js';
import type { ChildRun } from './lib/child.js';
import { ensureFio, fioArgs, fioVersion, reserveHugePages } from './lib/fio.js';
import type { HugePageReservation } from './lib/fio.js';
import type { FioJob } from './lib/fio.js';
import { mib, table } from './lib/format.js';
import { field, num, readJson, str } from './lib/json.js';
import { KV_BIN, PROJECT_ROOT, storageOnlyArgs, writeZeroThinkConfig } from './lib/kv-cache.js';
import { fileSystemOf, freeBytes, machineLine, queueAttr } from './lib/machine.js';
import { inRoundOrder, median } from './lib/rounds.js';
import { ReadThrottle, detectThrottle } from './lib/throttle.js';

const SCRIPT = 'bench:discrimination';
/** kv-cache's storage read factor within this fraction of fio's meets the goal. */
const TOLERANCE = 0.1;
/** Share of the free space the fio files and one kv-cache run may occupy together. */
const SPACE_SHARE = 0.5;

type Condition = 'fast' | 'slow';

interface Options {
  readonly dir: string | undefined;
  readonly seconds: number;
  readonly users: number;
  readonly model: string;
  readonly rounds: number;
  /** Read bandwidth limit of the slow condition, bytes/s (given in MiB/s). */
  readonly readBytesPerSec: number;
  /** Read IOPS limit of the slow condition; 0 = none. */
  readonly readIops: number;
}

class UsageError extends Error {}
/** Ctrl-C or SIGTERM stopped the run; what it had started is cleaned up before exiting. */
class Interrupted extends Error {}

/** Throws Interrupted when the runner was interrupted (the child then exits non-zero), else as checkExit. */
function checkRun(runner: ChildRunner, run: ChildRun, what: string): void {
  if (runner.interrupted) throw new Interrupted(`interrupted during ${what}`);
  checkExit(run, what);
}

function parseOptions(argv: readonly string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        seconds: { type: 'string', default: '15' },
        users: { type: 'string', default: '4' },
        model: { type: 'string', default: 'tiny-1b' },
        rounds: { type: 'string', default: '3' },
        'read-mib-per-sec': { type: 'string', default: '50' },
        'read-iops': { type: 'string', default: '0' },
      },
    }));
  } catch (e) {
    throw new UsageError(
      `${messageOf(e)}; valid options: --dir D --seconds N --users N --model NAME --rounds N --read-mib-per-sec N --read-iops N`,
    );
  }
  const wrap = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw new UsageError(messageOf(e));
    }
  };
  if (!BUILTIN_MODELS.has(values.model))
    throw new UsageError(`unknown --model '${values.model}'; valid: ${[...BUILTIN_MODELS.keys()].join(', ')}`);
  const iops = Number(values['read-iops']);
  if (!Number.isInteger(iops) || iops < 0)
    throw new UsageError(`--read-iops must be a whole number ≥ 0 (0 = no limit), got '${values['read-iops']}'`);
  return {
    dir: values.dir,
    seconds: wrap(() => positiveInt('seconds', values.seconds)),
    users: wrap(() => positiveInt('users', values.users)),
    model: values.model,
    rounds: wrap(() => positiveInt('rounds', values.rounds)),
    readBytesPerSec: wrap(() => positiveInt('read-mib-per-sec', values['read-mib-per-sec'])) * MiB,
    readIops: iops,
  };
}

/** A kv-cache figure compared across conditions; `faster` says which direction a faster device moves it. */
interface Figure {
  readonly label: string;
  readonly path: readonly string[];
  readonly faster: 'higher' | 'lower';
  readonly show: (v: number) => string;
}

const perSecMiB = (v: number): string => mib(v);
const plain = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(2));

const FIGURES: readonly Figure[] = [
  {
    label: 'storage read MiB/s (kvcache_bench.storage_bytes)',
    path: ['kvcache_bench', 'storage_bytes', 'read_bytes_per_sec'],
    faster: 'higher',
    show: perSecMiB,
  },
  {
    label: 'device read MiB/s (kvcache_bench.device_io)',
    path: ['kvcache_bench', 'device_io', 'read_bytes_per_sec'],
    faster: 'higher',
    show: perSecMiB,
  },
  {
    label: 'summary.storage_throughput_tokens_per_sec',
    path: ['summary', 'storage_throughput_tokens_per_sec'],
    faster: 'higher',
    show: plain,
  },
  { label: 'summary.avg_throughput_tokens_per_sec', path: ['summary', 'avg_throughput_tokens_per_sec'], faster: 'higher', show: plain },
  { label: 'summary.requests_per_second', path: ['summary', 'requests_per_second'], faster: 'higher', show: plain },
  {
    label: 'storage read device p95 ms (cache_stats)',
    path: ['summary', 'cache_stats', 'storage_read_device_p95_ms'],
    faster: 'lower',
    show: plain,
  },
];

/** A run's device I/O split by origin: its own cgroup's, and everything else on the device meanwhile. */
interface Attribution {
  /** Device read bytes of the run's cgroup. */
  readonly ownReadBytes: number;
  /** Whole-device bytes (read + written, /proc/diskstats around the child) from outside the run's cgroup, per second of the child. */
  readonly foreignBytesPerSec: number;
  /** Those foreign bytes ÷ the cgroup's own bytes (read + written) over the child. */
  readonly foreignShare: number;
}

/** Foreign device I/O above this share of a run's own marks its round as disturbed by other work on the disk. */
const FOREIGN_LIMIT = 0.05;

/** Runs `file args` in `condition`'s cgroup and attributes the device I/O meanwhile. */
async function runInGroup(
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

interface FioPhase {
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

interface KvPhase {
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

interface Context {
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

/** Bytes kv-cache pre-populates before a decode-only run: PREPOP_ENTRIES_PER_USER entries per user. */
function prepopBytes(opts: Options): number {
  return opts.users * PREPOP_ENTRIES_PER_USER * entryBytes(BUILTIN_MODELS.get(opts.model)!, PREPARE_ENTRY_TOKENS);
}

/**
 * fio's read files, written just before each fio run (not measured) and removed after it: kv-cache
 * writes its entries just before reading them too, so neither side reads data that has had longer to
 * settle (on a virtual disk, recently written data can still be in the host's cache).
 */
async function layOutFio(ctx: Context): Promise<void> {
  await mkdir(ctx.fioJob.dir, { recursive: true });
  const run = await ctx.runner.run('fio', fioArgs(ctx.fioJob, IO_CHUNK_BYTES, ctx.opts.seconds, undefined), ctx.device.name);
  checkRun(ctx.runner, run, 'fio layout');
  // fio lays files out with buffered writes: flush them now, or the first direct reads would wait for writeback.
  // (kv-cache's pre-population writes with O_DIRECT and fsync, so nothing of it is pending.)
  spawnSync('sync');
  ctx.commands.set('fio layout (before each fio run, not measured)', run.command);
}

async function runFio(ctx: Context, round: number, condition: Condition): Promise<FioPhase> {
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

async function runKvCache(ctx: Context, round: number, condition: Condition): Promise<KvPhase> {
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
async function runRound(ctx: Context, round: number): Promise<{ fio: FioPhase[]; kv: KvPhase[] }> {
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

/** fast ÷ slow for a figure that rises with speed, slow ÷ fast for one that falls: > 1 means "the device got slower". */
function factor(fast: number | undefined, slow: number | undefined, faster: 'higher' | 'lower'): number | undefined {
  if (fast === undefined || slow === undefined) return undefined;
  const [num_, den] = faster === 'higher' ? [fast, slow] : [slow, fast];
  return den > 0 ? num_ / den : undefined;
}

const showFactor = (x: number | undefined): string => (x === undefined ? 'n/a' : `${x.toFixed(2)}×`);

const foreignCells = (a: Attribution): string[] => [
  mib(a.foreignBytesPerSec),
  Number.isFinite(a.foreignShare) ? (100 * a.foreignShare).toFixed(1) : 'inf',
];

function printPhases(fio: readonly FioPhase[], kv: readonly KvPhase[]): void {
  console.log(
    table(
      ['round', 'condition', 'program', 'fio own MiB/s', 'device MiB/s', 'cgroup dev MiB/s', 'runtime s', 'foreign MiB/s', 'foreign %'],
      fio.map((p) => [
        String(p.round),
        p.condition,
        'fio',
        mib(p.bytesPerSec),
        mib(p.deviceBytesPerSec),
        mib(p.groupBytesPerSec),
        p.runtimeSec.toFixed(2),
        ...foreignCells(p.attribution),
      ]),
    ),
  );
  console.log('');
  console.log(
    table(
      [
        'round',
        'condition',
        'program',
        'storage MiB/s',
        'device MiB/s',
        'storage tok/s',
        'avg tok/s',
        'req/s',
        'read dev p95 ms',
        'cgroup dev MiB/s',
        'requests',
        'cut at stop',
        'window s',
        'foreign MiB/s',
        'foreign %',
      ],
      kv.map((p) => [
        String(p.round),
        p.condition,
        'kv-cache',
        ...p.values.map((v, i) => (v === undefined ? 'n/a' : FIGURES[i].show(v))),
        p.groupBytesPerSec === undefined ? 'n/a' : mib(p.groupBytesPerSec),
        String(p.requests ?? 'n/a'),
        String(p.aborted ?? 'n/a'),
        p.windowSec === undefined ? 'n/a' : p.windowSec.toFixed(2),
        ...foreignCells(p.attribution),
      ]),
    ),
  );
  for (const b of new Set(kv.map((p) => p.ioBuffers ?? 'not recorded'))) console.log(`  kv-cache I/O buffers: ${b}`);
  for (const p of kv)
    if (p.evictions > 0) console.log(`  note: round ${p.round} ${p.condition}: ${p.evictions} evictions (capacity too small)`);
}

const medianOf = (xs: ReadonlyArray<number | undefined>): number | undefined => {
  const known = xs.filter((x): x is number => x !== undefined);
  return known.length === 0 ? undefined : median(known);
};

/** Per-round factors of fio and of every kv-cache figure, and the cross-check, over the given rounds. */
class Factors {
  constructor(
    private readonly fio: readonly FioPhase[],
    private readonly kv: readonly KvPhase[],
  ) {}

  fioRound(r: number): number | undefined {
    const at = (c: Condition): number | undefined => this.fio.find((p) => p.round === r && p.condition === c)?.bytesPerSec;
    return factor(at('fast'), at('slow'), 'higher');
  }

  kvRound(r: number, pick: (p: KvPhase) => number | undefined, faster: 'higher' | 'lower'): number | undefined {
    const at = (c: Condition): number | undefined => {
      const p = this.kv.find((q) => q.round === r && q.condition === c);
      return p === undefined ? undefined : pick(p);
    };
    return factor(at('fast'), at('slow'), faster);
  }

  /** Rows of the factor table (label, direction, median, ÷ fio, each round) and the two medians of the verdict. */
  table(rounds: readonly number[]): { rows: string[][]; storage: number | undefined; fio: number | undefined } {
    const fioMedian = medianOf(rounds.map((r) => this.fioRound(r)));
    const rows: string[][] = [
      [
        'fio read bandwidth (reference)',
        'fast÷slow',
        '',
        showFactor(fioMedian),
        '1.00',
        ...rounds.map((r) => showFactor(this.fioRound(r))),
      ],
    ];
    const row = (label: string, faster: 'higher' | 'lower', pick: (p: KvPhase) => number | undefined): number | undefined => {
      const per = rounds.map((r) => this.kvRound(r, pick, faster));
      const m = medianOf(per);
      rows.push([
        label,
        faster === 'higher' ? 'fast÷slow' : 'slow÷fast',
        '',
        showFactor(m),
        m === undefined || fioMedian === undefined ? 'n/a' : (m / fioMedian).toFixed(2),
        ...per.map(showFactor),
      ]);
      return m;
    };
    const medians = FIGURES.map((f, i) => row(f.label, f.faster, (p) => p.values[i]));
    row("(cross-check, not kv-cache's) its cgroup's device read MiB/s", 'higher', (p) => p.groupBytesPerSec);
    return { rows, storage: medians[0], fio: fioMedian };
  }
}

function verdict(what: string, storage: number | undefined, fio: number | undefined): void {
  if (storage === undefined || fio === undefined) return;
  const rel = storage / fio;
  console.log(
    `FINAL (${what}) storage read factor ${storage.toFixed(2)}× vs fio ${fio.toFixed(2)}× → ÷ fio = ${rel.toFixed(3)}: ` +
      `${Math.abs(rel - 1) <= TOLERANCE ? 'within' : 'OUTSIDE'} the ±${TOLERANCE * 100} % goal`,
  );
}

function printSummary(opts: Options, fio: readonly FioPhase[], kv: readonly KvPhase[]): void {
  const rounds = Array.from({ length: opts.rounds }, (_, i) => i + 1);
  const factors = new Factors(fio, kv);
  const header = ['figure', 'factor', '', 'median', '÷ fio', ...rounds.map((r) => `round ${r}`)];
  const all = factors.table(rounds);
  console.log(`\n=== factors over ${opts.rounds} round(s): how many times "slower" each figure says the throttled device is ===`);
  console.log(table(header, all.rows));
  // A round is clean when no run of it shared the disk with foreign I/O above FOREIGN_LIMIT of its own.
  const disturbed = (r: number): boolean => [...fio, ...kv].some((p) => p.round === r && p.attribution.foreignShare > FOREIGN_LIMIT);
  const clean = rounds.filter((r) => !disturbed(r));
  console.log('');
  verdict(`all ${rounds.length} rounds`, all.storage, all.fio);
  if (clean.length === rounds.length)
    console.log(`every round was clean (foreign device I/O ≤ ${FOREIGN_LIMIT * 100} % of each run's own)`);
  else if (clean.length === 0)
    console.log(`no clean round: every round had a run with foreign device I/O > ${FOREIGN_LIMIT * 100} % of its own`);
  else {
    const c = factors.table(clean);
    verdict(`clean rounds ${clean.join(', ')} only`, c.storage, c.fio);
  }
  console.log(
    'notes: per-round factors pair the fast and slow run of the same round; the median is over rounds. Request-based figures ' +
      '(tok/s, req/s) count only requests completed inside the window: when a throttled request takes seconds, a short window ' +
      'holds few of them (see "requests" and "cut at stop"). device MiB/s is whole-device (/proc/diskstats): other I/O to the same disk ' +
      "meanwhile is included; cgroup dev MiB/s counts only the processes of the run's cgroup; foreign = whole-device bytes (read + " +
      "written) around the child minus its cgroup's, per second and as % of the cgroup's own; a round with any run above " +
      `${FOREIGN_LIMIT * 100} % is not clean.`,
  );
}

async function printSetting(ctx: Context): Promise<void> {
  const { opts, device, throttle } = ctx;
  console.log(machineLine(fioVersion()));
  console.log(
    `device: ${device.name} (${device.major}:${device.minor}, via ${device.chain.join(' → ')}), rotational ${queueAttr(device.name, 'rotational')}, ` +
      `scheduler ${queueAttr(device.name, 'scheduler')}`,
  );
  console.log(`file system: ${await fileSystemOf(ctx.root)}; dir ${ctx.root}; free ${((await freeBytes(ctx.root)) / GiB).toFixed(1)} GiB`);
  console.log(`throttle: cgroup ${throttle.support.version} at ${throttle.parent}`);
  console.log(`  fast: ${await throttle.describe('fast')}`);
  console.log(`  slow: ${await throttle.describe('slow')}`);
  console.log(
    `settings: ${opts.rounds} round(s) × (fast, slow) × (fio, kv-cache) of ${opts.seconds} s; ${opts.users} users / fio psync jobs; ` +
      `model ${opts.model}; I/O size ${IO_CHUNK_BYTES / KiB} KiB; slow = reads ≤ ${opts.readBytesPerSec / MiB} MiB/s` +
      (opts.readIops > 0 ? ` and ≤ ${opts.readIops} IOPS` : '') +
      ` on ${device.major}:${device.minor}`,
  );
  console.log(
    `working sets: kv-cache pre-populates ${opts.users * PREPOP_ENTRIES_PER_USER} × ${PREPARE_ENTRY_TOKENS}-token entries = ` +
      `${(prepopBytes(opts) / GiB).toFixed(2)} GiB per run (not measured, writes are not throttled); fio reads ${opts.users} × ` +
      `${(ctx.fioJob.sizeBytes / MiB).toFixed(0)} MiB files, laid out (outside the cgroups, not measured) just before each fio run`,
  );
  if (opts.rounds < 3) console.log('note: fewer than 3 rounds: a smoke test, not figures to quote');
  console.log('');
}

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
    if (throttle !== undefined) {
      const problems = await throttle.remove();
      for (const p of problems) console.error(`${SCRIPT}: ${p}`);
      if (problems.length === 0) console.log(`removed cgroup ${throttle.parent}`);
    }
  }
}

await main().catch((e: unknown) => {
  console.error(`${SCRIPT}: ${messageOf(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : e instanceof Interrupted ? 130 : 1;
});
