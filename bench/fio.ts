// Storage-only kv-cache runs against fio on the same file system, same I/O size, same concurrency.
//
// Measures, per round and workload, the device-level bandwidth (bytes the kernel counted in
// /proc/diskstats for the block device under --dir, divided by the phase's wall time):
//   write-heavy: `kv-cache --prefill-only` (no CPU/GPU tier, no multi-turn, no prefix caching) vs
//                `fio --rw=write --ioengine=psync --numjobs=N --direct=1 --bs=K`
//   read-heavy:  `kv-cache --decode-only` (entries pre-populated before the measured phase) vs
//                `fio --rw=read  --ioengine=psync --numjobs=N --direct=1 --bs=K` on laid-out files
// psync with N jobs = N threads each with one K-sized I/O outstanding, which is what kv-cache does
// (each of its N users has one 4 MiB syscall in flight on libuv's threadpool). A libaio iodepth=N
// single-job run is printed as a reference point only. kv-cache's figure is its own results JSON
// `kvcache_bench.device_io` (diskstats over its measured window, after setup); ours around the whole
// child and around the measured phase (seen from its stdout) are printed for comparison. fio's figure
// is our diskstats delta around the fio process ÷ fio's own runtime (fio's own bandwidth and the
// delta ÷ the process's wall time alongside). Diagnostics per phase (device op size, utilisation,
// queue depth, flushes, CPU of the child and of the machine) hint at why one side is slower.
//
// Usage: node dist/bench/fio.js [--dir D] [--seconds 30] [--users 20] [--model llama3.1-8b]
//                               [--rounds 2] [--io-kib 4096] [--workloads write,read]
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, statfs } from 'node:fs/promises';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../src/engine/prepare.js';
import { IO_CHUNK_BYTES } from '../src/engine/tier-stack.js';
import { DiskWatch, diskDelta, parseDiskStats } from '../src/metrics/diskstats.js';
import type { DiskCounters, DiskDelta } from '../src/metrics/diskstats.js';
import { BUILTIN_MODELS, entryBytes } from '../src/model/models.js';
import { GiB, KiB, MiB } from '../src/util/units.js';
import { CLK_TCK, ensureFio, procStatFields, writeZeroThinkConfig } from './common.js';
import { messageOf } from '../src/util/errors.js';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KV_BIN = join(PROJECT_ROOT, 'bin', 'kv-cache.cjs');
const TARGET_RATIO = 0.9;
/** fio files per job are at most this large (time_based runs wrap around inside them). */
const FIO_WRITE_FILE_BYTES = 2 * GiB;
/** Share of the free space one phase may occupy. */
const SPACE_SHARE = 0.4;

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  readonly dir: string | undefined;
  readonly seconds: number;
  readonly users: number;
  readonly model: string;
  readonly rounds: number;
  readonly ioBytes: number;
  readonly workloads: readonly Workload[];
}

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got '${text}'`);
  return n;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      dir: { type: 'string' },
      seconds: { type: 'string', default: '30' },
      users: { type: 'string', default: '20' },
      model: { type: 'string', default: 'llama3.1-8b' },
      rounds: { type: 'string', default: '2' },
      'io-kib': { type: 'string', default: '4096' },
      workloads: { type: 'string', default: 'write,read' },
    },
  });
  const workloads = values.workloads.split(',').map((w) => w.trim());
  const unknown = workloads.filter((w) => w !== 'write' && w !== 'read');
  if (unknown.length > 0 || workloads.length === 0) throw new Error(`--workloads takes write, read or write,read; got '${values.workloads}'`);
  const ioKib = positiveInt('io-kib', values['io-kib']);
  if (ioKib % 4 !== 0) throw new Error(`--io-kib must be a multiple of 4 (O_DIRECT alignment), got ${ioKib}`);
  if (!BUILTIN_MODELS.has(values.model)) throw new Error(`unknown --model '${values.model}'`);
  return {
    dir: values.dir,
    seconds: positiveInt('seconds', values.seconds),
    users: positiveInt('users', values.users),
    model: values.model,
    rounds: positiveInt('rounds', values.rounds),
    ioBytes: ioKib * KiB,
    workloads: workloads as Workload[],
  };
}

function fail(message: string): never {
  console.error(`bench:fio: ${message}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// Kernel counters: device, child CPU, machine CPU

interface CpuSeconds {
  readonly user: number;
  readonly system: number;
}

/** CPU of `pid` itself (all its threads), or with `children` that of its reaped children. */
function processCpu(pid: number | 'self', children: boolean): CpuSeconds | undefined {
  const f = procStatFields(`/proc/${pid}/stat`);
  if (f === undefined) return undefined;
  const [u, s] = children ? [13, 14] : [11, 12];
  return { user: Number(f[u]) / CLK_TCK, system: Number(f[s]) / CLK_TCK };
}

/** Machine-wide CPU jiffies from the first line of /proc/stat. */
interface MachineCpu {
  readonly busy: number;
  readonly iowait: number;
  readonly total: number;
}

function machineCpu(): MachineCpu {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = first.trim().split(/\s+/).slice(1).map(Number);
  const at = (i: number): number => v[i] ?? 0;
  // user nice system idle iowait irq softirq steal (guest is already inside user)
  const total = [0, 1, 2, 3, 4, 5, 6, 7].reduce((sum, i) => sum + at(i), 0);
  return { busy: total - at(3) - at(4), iowait: at(4), total };
}

function diskNow(device: string): DiskCounters {
  const row = parseDiskStats(readFileSync('/proc/diskstats', 'utf8')).find((r) => r.name === device);
  if (row === undefined) throw new Error(`no block device '${device}' in /proc/diskstats`);
  return row;
}

/** Everything read at one instant (synchronously, so a stdout marker is stamped where it arrives). */
interface Snapshot {
  readonly t: number;
  readonly disk: DiskCounters;
  readonly machine: MachineCpu;
  readonly childCpu: CpuSeconds | undefined;
}

function snapshot(device: string, pid: number | undefined): Snapshot {
  return {
    t: performance.now(),
    disk: diskNow(device),
    machine: machineCpu(),
    childCpu: pid === undefined ? undefined : processCpu(pid, false),
  };
}

/** What happened between two snapshots. */
interface Window {
  readonly seconds: number;
  readonly disk: DiskDelta;
  readonly machineBusyPct: number;
  readonly machineIowaitPct: number;
  /** CPU seconds of the child over the window, when known. */
  readonly childCpuSec: number | undefined;
}

function windowBetween(a: Snapshot, b: Snapshot, childCpuSec?: number): Window {
  const total = b.machine.total - a.machine.total;
  const own =
    a.childCpu !== undefined && b.childCpu !== undefined
      ? b.childCpu.user + b.childCpu.system - a.childCpu.user - a.childCpu.system
      : undefined;
  return {
    seconds: (b.t - a.t) / 1000,
    disk: diskDelta(a.disk, b.disk),
    machineBusyPct: total > 0 ? (100 * (b.machine.busy - a.machine.busy)) / total : 0,
    machineIowaitPct: total > 0 ? (100 * (b.machine.iowait - a.machine.iowait)) / total : 0,
    childCpuSec: childCpuSec ?? own,
  };
}

// ---------------------------------------------------------------------------------------------
// Child processes

interface Marker {
  readonly name: string;
  readonly pattern: RegExp;
}

interface ChildRun {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Whole child: from just before spawn to its exit. */
  readonly whole: Window;
  /** Snapshots stamped when a marker line first appeared on the child's stdout. */
  readonly marks: ReadonlyMap<string, Snapshot>;
  /** Snapshots every SAMPLE_MS while the child ran. */
  readonly samples: readonly Snapshot[];
  readonly outputTail: readonly string[];
}

const SAMPLE_MS = 200;
let currentChild: ChildProcess | undefined;
let interrupted = false;

function quote(arg: string): string {
  return /^[A-Za-z0-9_./=:,@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Runs a command to completion, snapshotting the device around it and at marker lines. */
async function runChild(file: string, args: readonly string[], device: string, markers: readonly Marker[] = []): Promise<ChildRun> {
  const command = [file, ...args].map(quote).join(' ');
  const cpuBefore = processCpu('self', true);
  const before = snapshot(device, undefined);
  const child = spawn(file, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  currentChild = child;
  const pid = child.pid;
  const marks = new Map<string, Snapshot>();
  const samples: Snapshot[] = [];
  const sampler = setInterval(() => samples.push(snapshot(device, pid)), SAMPLE_MS);
  const tail: string[] = [];
  const keep = (line: string): void => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
  };
  const out = createInterface({ input: child.stdout });
  out.on('line', (line) => {
    for (const m of markers) if (!marks.has(m.name) && m.pattern.test(line)) marks.set(m.name, snapshot(device, pid));
    keep(line);
  });
  createInterface({ input: child.stderr }).on('line', (line) => keep(`[stderr] ${line}`));
  const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, sig) => resolve([code, sig]));
  });
  clearInterval(sampler);
  currentChild = undefined;
  const after = snapshot(device, undefined);
  const cpuAfter = processCpu('self', true);
  const childCpuSec =
    cpuBefore !== undefined && cpuAfter !== undefined
      ? cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system
      : undefined;
  return { command, exitCode, signal, whole: windowBetween(before, after, childCpuSec), marks, samples, outputTail: tail };
}

function checkExit(run: ChildRun, what: string): void {
  if (run.exitCode === 0) return;
  throw new Error(
    `${what} failed (exit ${run.exitCode ?? run.signal ?? '?'}): ${run.command}\n${run.outputTail.join('\n')}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Typed access to parsed JSON

function field(v: unknown, ...path: readonly (string | number)[]): unknown {
  let cur = v;
  for (const key of path) {
    if (typeof key === 'number') cur = Array.isArray(cur) ? (cur[key] as unknown) : undefined;
    else cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Record<string, unknown>)[key] : undefined;
  }
  return cur;
}

function num(v: unknown, ...path: readonly (string | number)[]): number | undefined {
  const x = field(v, ...path);
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
}

function str(v: unknown, ...path: readonly (string | number)[]): string | undefined {
  const x = field(v, ...path);
  return typeof x === 'string' ? x : undefined;
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

// ---------------------------------------------------------------------------------------------
// Phases

type Workload = 'write' | 'read';
type Engine = 'kv-cache' | 'fio psync' | 'fio libaio';

/** One measured phase; `bytesPerSec` is the device-level figure the comparison uses. */
interface Phase {
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

interface Context {
  readonly opts: Options;
  readonly root: string;
  readonly device: string;
  readonly commands: Map<string, string>;
}

function pickBytes(d: DiskDelta, w: Workload): { bytes: number; ops: number; ms: number } {
  return w === 'write' ? { bytes: d.writeBytes, ops: d.writeOps, ms: d.writeMs } : { bytes: d.readBytes, ops: d.readOps, ms: d.readMs };
}

async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

function prepopBytes(opts: Options): number {
  const model = BUILTIN_MODELS.get(opts.model);
  if (model === undefined) throw new Error(`unknown model ${opts.model}`);
  return opts.users * PREPOP_ENTRIES_PER_USER * entryBytes(model, PREPARE_ENTRY_TOKENS);
}

function kvArgs(ctx: Context, w: Workload, capacityGiB: number, output: string): string[] {
  const o = ctx.opts;
  return [
    KV_BIN,
    '--model', o.model,
    '--num-users', String(o.users),
    '--duration', String(o.seconds),
    '--gpu-mem-gb', '0',
    '--cpu-mem-gb', '0',
    '--generation-mode', 'none',
    '--config', writeZeroThinkConfig(ctx.root),
    w === 'write' ? '--prefill-only' : '--decode-only',
    '--disable-multi-turn',
    '--disable-prefix-caching',
    '--cache-dir', join(ctx.root, 'kv'),
    '--storage-capacity-gb', String(capacityGiB),
    '--seed', '1',
    '--no-progress',
    '--output', output,
  ];
}

async function runKvCache(ctx: Context, round: number, w: Workload): Promise<Phase> {
  const free = await freeBytes(ctx.root);
  // The tool's default capacity is 95 % of the free space; cap it so a fast device cannot fill the disk.
  const capacityGiB = Math.max(1, Math.floor((free * 0.5) / GiB));
  const notes: string[] = [];
  if (w === 'read' && prepopBytes(ctx.opts) > capacityGiB * GiB) {
    notes.push(`pre-population (${(prepopBytes(ctx.opts) / GiB).toFixed(1)} GiB) exceeds the capacity cap ${capacityGiB} GiB: entries were evicted; use fewer --users`);
  }
  const output = join(ctx.root, `kv-${w}-r${round}.json`);
  const args = kvArgs(ctx, w, capacityGiB, output);
  const run = await runChild(process.execPath, args, ctx.device, [
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

function closest(samples: readonly Snapshot[], t: number): Snapshot | undefined {
  let best: Snapshot | undefined;
  for (const s of samples) if (best === undefined || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
  return best;
}

interface FioJob {
  readonly name: string;
  readonly dir: string;
  readonly rw: Workload;
  readonly engine: 'psync' | 'libaio';
  readonly numjobs: number;
  readonly iodepth: number;
  readonly sizeBytes: number;
  readonly extra: readonly string[];
}

function fioArgs(ctx: Context, job: FioJob, output: string | undefined): string[] {
  const o = ctx.opts;
  const args = [
    `--name=${job.name}`,
    `--directory=${job.dir}`,
    `--rw=${job.rw}`,
    `--bs=${o.ioBytes / KiB}k`,
    '--direct=1',
    `--ioengine=${job.engine}`,
    `--numjobs=${job.numjobs}`,
    `--size=${job.sizeBytes}`,
    ...job.extra,
  ];
  if (job.engine === 'libaio') args.push(`--iodepth=${job.iodepth}`);
  if (output === undefined) return [...args, '--create_only=1'];
  return [
    ...args,
    '--time_based',
    `--runtime=${o.seconds}`,
    ...(job.rw === 'write' ? ['--fsync_on_close=1'] : []),
    '--group_reporting',
    '--output-format=json',
    `--output=${output}`,
  ];
}

async function runFio(ctx: Context, round: number, job: FioJob, label: Engine): Promise<Phase> {
  const output = join(ctx.root, `fio-${job.name}-r${round}.json`);
  const run = await runChild('fio', fioArgs(ctx, job, output), ctx.device);
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
  const notes = [
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
    ownBytes: num(side, 'io_bytes'),
    ownBytesPerSec: num(side, 'bw_bytes'),
    wholeChildBytesPerSec: dev.bytes / run.whole.seconds,
    wholeChildSec: run.whole.seconds,
    diag: run.whole,
    diagLabel: 'whole fio process',
    notes,
    command: run.command,
  };
}

/** Per-job fio file size for writes: 2 GiB, less when the free space is short. */
async function fioWriteSize(ctx: Context): Promise<number> {
  const perJob = Math.floor((await freeBytes(ctx.root)) * SPACE_SHARE / ctx.opts.users / ctx.opts.ioBytes) * ctx.opts.ioBytes;
  const size = Math.min(FIO_WRITE_FILE_BYTES, perJob);
  if (size < 4 * ctx.opts.ioBytes) throw new Error(`not enough free space under ${ctx.root} for ${ctx.opts.users} fio files`);
  return size;
}

async function fioWritePhases(ctx: Context, round: number): Promise<Phase[]> {
  const n = ctx.opts.users;
  const size = await fioWriteSize(ctx);
  const dir = join(ctx.root, 'fio-write');
  const out: Phase[] = [];
  for (const [engine, label] of [['psync', 'fio psync'], ['libaio', 'fio libaio']] as const) {
    await mkdir(dir, { recursive: true });
    const job: FioJob =
      engine === 'psync'
        ? { name: 'kvw', dir, rw: 'write', engine, numjobs: n, iodepth: 1, sizeBytes: size, extra: [] }
        : { name: 'kvwa', dir, rw: 'write', engine, numjobs: 1, iodepth: n, sizeBytes: size * n, extra: [`--nrfiles=${n}`] };
    try {
      out.push(await runFio(ctx, round, job, label));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return out;
}

/** Files the read phases use: one per job, laid out by fio itself before anything is measured. */
class ReadLayout {
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
    return { name: 'kvr', dir: this.dir, rw: 'read', engine: 'psync', numjobs: this.ctx.opts.users, iodepth: 1, sizeBytes: this.perJobBytes, extra: [] };
  }

  async ensure(): Promise<void> {
    if (this.laidOut) return;
    const total = this.perJobBytes * this.ctx.opts.users;
    if (total > (await freeBytes(this.ctx.root)) * 0.8) throw new Error(`not enough free space to lay out ${(total / GiB).toFixed(1)} GiB of fio read files`);
    await mkdir(this.dir, { recursive: true });
    console.log(`  (laying out ${this.ctx.opts.users} × ${(this.perJobBytes / MiB).toFixed(0)} MiB fio read files, not measured)`);
    const run = await runChild('fio', fioArgs(this.ctx, this.job(), undefined), this.ctx.device);
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
    const psync = await runFio(ctx, round, layout.job(), 'fio psync');
    const files = await layout.files();
    const aio: FioJob = {
      name: 'kvra',
      dir: layout.dir,
      rw: 'read',
      engine: 'libaio',
      numjobs: 1,
      iodepth: ctx.opts.users,
      sizeBytes: layout.perJobBytes * files.length,
      extra: [`--filename=${files.join(':')}`],
    };
    return [psync, await runFio(ctx, round, aio, 'fio libaio')];
  } finally {
    await layout.drop(false);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const mib = (b: number): string => (b / MiB).toFixed(1);
const gib = (b: number): string => (b / GiB).toFixed(3);

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: readonly string[]): string => r.map((c, i) => (i < 3 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}

function bandwidthRow(p: Phase): string[] {
  return [
    String(p.round),
    p.workload,
    p.engine,
    mib(p.bytesPerSec),
    gib(p.bytesPerSec),
    String(p.deviceBytes),
    p.windowSec.toFixed(2),
    p.ownBytes === undefined ? 'n/a' : String(p.ownBytes),
    p.ownBytesPerSec === undefined ? 'n/a' : mib(p.ownBytesPerSec),
    mib(p.wholeChildBytesPerSec),
    p.wholeChildSec.toFixed(2),
  ];
}

function diagRow(p: Phase): string[] {
  const d = pickBytes(p.diag.disk, p.workload);
  const s = p.diag.seconds;
  return [
    String(p.round),
    p.workload,
    p.engine,
    s.toFixed(2),
    mib(d.bytes / s),
    d.ops > 0 ? (d.bytes / d.ops / KiB).toFixed(0) : 'n/a',
    d.ops > 0 ? (d.ms / d.ops).toFixed(1) : 'n/a',
    ((100 * p.diag.disk.busyMs) / (s * 1000)).toFixed(0),
    (p.diag.disk.weightedMs / (s * 1000)).toFixed(1),
    String(p.diag.disk.flushOps),
    String(p.workload === 'write' ? p.diag.disk.readBytes : p.diag.disk.writeBytes),
    p.diag.childCpuSec === undefined ? 'n/a' : (p.diag.childCpuSec / s).toFixed(2),
    p.diag.machineBusyPct.toFixed(0),
    p.diag.machineIowaitPct.toFixed(0),
  ];
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

function printRound(phases: readonly Phase[]): void {
  console.log(
    table(
      ['round', 'workload', 'engine', 'MiB/s', 'GiB/s', 'device bytes', 'window s', 'own bytes', 'own MiB/s', 'whole-child MiB/s', 'child s'],
      phases.map(bandwidthRow),
    ),
  );
  console.log('');
  console.log(
    table(
      ['round', 'workload', 'engine', 'diag s', 'dev MiB/s', 'KiB/dev op', 'ms/dev op', 'util %', 'avg qd', 'flushes', 'other-dir bytes', 'child cores', 'cpu busy %', 'iowait %'],
      phases.map(diagRow),
    ),
  );
  for (const p of phases) console.log(`  r${p.round} ${p.workload} ${p.engine} [diag: ${p.diagLabel}]: ${p.notes.join('; ')}`);
  for (const w of ['write', 'read'] as const) {
    const kv = phases.find((p) => p.workload === w && p.engine === 'kv-cache');
    const fio = phases.find((p) => p.workload === w && p.engine === 'fio psync');
    if (kv !== undefined && fio !== undefined && fio.bytesPerSec > 0) {
      console.log(`  ratio ${w}: kv-cache ÷ fio psync = ${(kv.bytesPerSec / fio.bytesPerSec).toFixed(3)}`);
    }
  }
}

function printSummary(all: readonly Phase[], rounds: number, users: number): void {
  console.log(`\n=== medians over ${rounds} round(s) (device-level MiB/s; kv-cache over its measured window, fio over its runtime) ===`);
  const rows: string[][] = [];
  const med = (w: Workload, e: Engine): number | undefined => {
    const xs = all.filter((p) => p.workload === w && p.engine === e).map((p) => p.bytesPerSec);
    return xs.length === 0 ? undefined : median(xs);
  };
  for (const w of ['write', 'read'] as const) {
    for (const e of ['kv-cache', 'fio psync', 'fio libaio'] as const) {
      const m = med(w, e);
      if (m !== undefined) rows.push([w, e, '', mib(m), gib(m)]);
    }
  }
  console.log(table(['workload', 'engine', '', 'MiB/s', 'GiB/s'], rows));
  console.log('');
  for (const w of ['write', 'read'] as const) {
    const kv = med(w, 'kv-cache');
    const fio = med(w, 'fio psync');
    const aio = med(w, 'fio libaio');
    if (kv === undefined || fio === undefined || fio <= 0) continue;
    const perRound = [...new Set(all.map((p) => p.round))].map((r) => {
      const k = all.find((p) => p.round === r && p.workload === w && p.engine === 'kv-cache');
      const f = all.find((p) => p.round === r && p.workload === w && p.engine === 'fio psync');
      return k !== undefined && f !== undefined && f.bytesPerSec > 0 ? (k.bytesPerSec / f.bytesPerSec).toFixed(3) : 'n/a';
    });
    const ratio = kv / fio;
    console.log(
      `FINAL ${w.padEnd(5)} kv-cache ÷ fio psync = ${ratio.toFixed(3)} (per round: ${perRound.join(', ')}) → ` +
        `${ratio >= TARGET_RATIO ? 'meets' : 'BELOW'} the ${TARGET_RATIO} target` +
        (aio !== undefined && aio > 0 ? `; ÷ fio libaio iodepth=${users} = ${(kv / aio).toFixed(3)} (reference only)` : ''),
    );
  }
}

async function fileSystemOf(path: string): Promise<string> {
  const real = await realpath(path);
  let best = { mount: '', type: 'unknown', source: '' };
  for (const line of (await readFile('/proc/self/mountinfo', 'utf8')).split('\n')) {
    const [left, right] = line.split(' - ');
    const mount = left?.split(' ')[4]?.replace(/\\040/g, ' ');
    const [type, source] = right?.split(' ') ?? [];
    if (mount === undefined || type === undefined) continue;
    const inside = real === mount || real.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
    if (inside && mount.length >= best.mount.length) best = { mount, type, source: source ?? '' };
  }
  return `${best.type} (${best.source} on ${best.mount})`;
}

function sysfs(dev: string, attr: string): string {
  try {
    return readFileSync(`/sys/block/${dev}/queue/${attr}`, 'utf8').trim();
  } catch {
    return 'n/a';
  }
}

async function printMachine(watch: DiskWatch, root: string, opts: Options): Promise<void> {
  const cpu = cpus();
  const fioVersion = spawnSync('fio', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '?';
  const { name, major, minor, chain } = watch.device;
  console.log(`machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / GiB).toFixed(1)} GiB RAM, Linux ${release()}, Node ${process.version}, ${fioVersion}`);
  console.log(
    `device: ${name} (${major}:${minor}, via ${chain.join(' → ')}), rotational ${sysfs(name, 'rotational')}, ` +
      `scheduler ${sysfs(name, 'scheduler')}, max_sectors_kb ${sysfs(name, 'max_sectors_kb')}, nr_requests ${sysfs(name, 'nr_requests')}`,
  );
  console.log(`file system: ${await fileSystemOf(root)}; dir ${root}; free ${((await freeBytes(root)) / GiB).toFixed(1)} GiB`);
  console.log(
    `settings: ${opts.rounds} round(s) × 4 phases (+2 libaio references) of ${opts.seconds} s, ${opts.users} users/jobs, ` +
      `model ${opts.model}, I/O size ${opts.ioBytes / KiB} KiB (kv-cache's is ${IO_CHUNK_BYTES / KiB} KiB, fixed)`,
  );
  if (opts.ioBytes !== IO_CHUNK_BYTES) console.log(`note: --io-kib differs from kv-cache's ${IO_CHUNK_BYTES / KiB} KiB syscalls: not a like-for-like comparison`);
  console.log(
    'columns: MiB/s = device bytes ÷ window (kv-cache: its results JSON device_io over its measured window; fio: our diskstats delta around the fio process ÷ fio\'s own runtime); ' +
      'own = bytes the program counted itself; whole-child = our diskstats delta around the whole child (kv-cache: includes setup such as pre-population).',
  );
  console.log(
    'diagnostics: dev MiB/s, KiB and ms per device op, util %, avg qd (time-weighted in-flight), flushes and other-direction bytes from /proc/diskstats; ' +
      'child cores = child CPU seconds ÷ window; cpu busy / iowait % of the whole machine (/proc/stat).\n',
  );
}

// ---------------------------------------------------------------------------------------------
// Main

async function runRound(ctx: Context, round: number, layout: ReadLayout): Promise<Phase[]> {
  const kvFirst = round % 2 === 1; // alternate the order so drift does not favour one side
  const phases: Phase[] = [];
  const check = (): void => {
    if (interrupted) throw new Error('interrupted');
  };
  for (const w of ctx.opts.workloads) {
    const steps = [
      async (): Promise<void> => {
        check();
        console.log(`  round ${round}: kv-cache ${w}…`);
        phases.push(await runKvCache(ctx, round, w));
      },
      async (): Promise<void> => {
        check();
        console.log(`  round ${round}: fio ${w} (psync, then libaio reference)…`);
        phases.push(...(w === 'write' ? await fioWritePhases(ctx, round) : await fioReadPhases(ctx, round, layout)));
      },
    ];
    for (const step of kvFirst ? steps : [...steps].reverse()) await step();
  }
  return phases;
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
  const onSignal = (sig: NodeJS.Signals): void => {
    interrupted = true;
    console.error(`bench:fio: ${sig}: stopping the current child and cleaning up`);
    currentChild?.kill(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const watch = await DiskWatch.forPath(root);
    if (watch === undefined) throw new Error(`no block device resolvable under ${root} (tmpfs, overlay on several disks, NFS?): nothing to measure`);
    console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
    await printMachine(watch, root, opts);
    const free = await freeBytes(root);
    const prepop = prepopBytes(opts);
    // Read working set ≈ the tool's pre-populated set, so neither side reads a smaller (cacheable) region.
    const wanted = Math.ceil(prepop / opts.users / opts.ioBytes) * opts.ioBytes;
    const bound = Math.floor((free * SPACE_SHARE) / opts.users / opts.ioBytes) * opts.ioBytes;
    const perJob = Math.min(wanted, bound);
    if (perJob < 4 * opts.ioBytes) throw new Error(`not enough free space (${(free / GiB).toFixed(1)} GiB) for the fio read files`);
    const keep = prepop + perJob * opts.users <= free * 0.6;
    console.log(
      `read working sets: kv-cache pre-populates ${opts.users * PREPOP_ENTRIES_PER_USER} × ${PREPARE_ENTRY_TOKENS}-token entries = ${(prepop / GiB).toFixed(1)} GiB; ` +
        `fio reads ${opts.users} × ${(perJob / MiB).toFixed(0)} MiB = ${((perJob * opts.users) / GiB).toFixed(1)} GiB` +
        (perJob < wanted ? ' (reduced to fit the free space)' : '') +
        `; fio read files ${keep ? 'kept across rounds' : 'laid out and removed every round'}\n`,
    );
    const ctx: Context = { opts, root, device: watch.device.name, commands: new Map() };
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
    console.log('\ncommands (output paths are per round; kv-cache --storage-capacity-gb is 50 % of the free space at the time, a guard against filling the disk):');
    for (const [what, cmd] of ctx.commands) console.log(`  ${what}: ${cmd}`);
  } finally {
    await rm(root, { recursive: true, force: true });
    console.log(`\nremoved ${root}`);
  }
}

await main().catch((e: unknown) => {
  console.error(`bench:fio: ${messageOf(e)}`);
  process.exitCode = 1;
});
