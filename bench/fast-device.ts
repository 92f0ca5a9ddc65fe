// Fast devices: does kv-cache reach what the device can do when the device is faster than the harness?
//
// On a RAM-backed block device (bench/lib/ram-device.ts: fio moves 7–9 GiB/s there) it alternates, per
// round and workload, fio and kv-cache (and optionally another kv-cache build, --compare-bin, for a
// before/after in one run):
//   write: `kv-cache --prefill-only --disable-multi-turn --disable-prefix-caching` vs `fio --rw=write`
//   read:  `kv-cache --decode-only` (pre-populated before its measured phase) vs `fio --rw=read` on laid-out files
//   mixed: kv-cache's default request mix (prefill, multi-turn reloads, decode) vs `fio --rw=rw` with the
//          read share kv-cache had in the same round (kv-cache runs first in that workload)
// all storage only (no GPU or CPU tier), zero think time, tiny-1b, 4 MiB I/O; fio with io_uring at
// queue depth 16 and buffers in huge pages. Figures: bandwidth (kv-cache: its results' device_io over
// its measured window; fio: its own bw), CPU cores per GiB/s (the child's user + system CPU ÷ the
// device bytes, both counted by the kernel: for fio over its whole run, for kv-cache from the line that
// starts its measured phase to its exit, so start-up and pre-population are left out) and kv-cache's
// validity verdict.
//
// `--kv-layout slab` runs kv-cache's storage tier as a slab pool (issue 34): writes in KV blocks of
// 2048 tokens (`--prefill-only --kv-block-tokens 2048`, 48 MiB slots), reads of the pre-populated
// 2048-token entries (`--decode-only --slab-slot-mib 48`); `--io-uring` adds a kv-cache row with
// UV_USE_IO_URING=1 (libuv submits file reads and writes through io_uring instead of its threadpool).
// kv-cache's CPU is its results' cpu_seconds.per_gib_moved (the process over its measured window,
// per GiB its storage tier moved), fio's its whole run per device GiB: both CPU seconds per GiB.
//
// Root only (it makes a loop device); elsewhere it says why and exits 0 without measuring.
// Usage: node dist/bench/fast-device.js [--gib 6] [--seconds 15] [--users 16] [--rounds 3]
//          [--workloads write,read,mixed] [--compare-bin PATH/bin/kv-cache.cjs] [--kv-layout flat|slab] [--io-uring]
//          [--settle-busy-pct 15] (100 on a machine others use: wait for the device alone)
import { isUsageError, UsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { rm, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../src/engine/prepare.js';
import { BUILTIN_MODELS, entryBytes } from '../src/model/models.js';
import { messageOf } from '../src/util/errors.js';
import { GiB, MiB } from '../src/util/units.js';
import { positiveInt } from './lib/args.js';
import { ChildRunner, checkExit, quote } from './lib/child.js';
import type { ChildRun } from './lib/child.js';
import { windowBetween } from './lib/disk-window.js';
import { ensureFio, fioVersion, reserveHugePages } from './lib/fio.js';
import type { HugePageReservation } from './lib/fio.js';
import { table } from './lib/format.js';
import { field, num, readJson } from './lib/json.js';
import { KV_BIN, PROJECT_ROOT, storageOnlyArgs, writeZeroThinkConfig } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { makeRamDevice, ramDeviceUnavailable } from './lib/ram-device.js';
import type { RamDevice } from './lib/ram-device.js';
import { inRoundOrder, median } from './lib/rounds.js';
import { settleDevice } from './lib/settle.js';

const SCRIPT = 'bench:fast-device';
const MODEL = 'tiny-1b';
const IO_BYTES = 4 * MiB;
const FIO_DEPTH = 16;
/** Share of the device one run's data may take (kv-cache's capacity, fio's files). */
const RUN_SHARE = 0.4;

type Workload = 'write' | 'read' | 'mixed';
const WORKLOADS: readonly Workload[] = ['write', 'read', 'mixed'];

interface Options {
  readonly gib: number;
  readonly seconds: number;
  readonly users: number;
  readonly rounds: number;
  readonly workloads: readonly Workload[];
  readonly compareBin: string | undefined;
  readonly layout: 'flat' | 'slab';
  readonly ioUring: boolean;
  /** The machine's busy share (%) under which it counts as settled (bench/lib/settle.ts); 100: the device alone. */
  readonly settleBusyPct: number;
}

interface Program {
  readonly name: string;
  /** kv-cache's bin/kv-cache.cjs; absent for fio. */
  readonly kvBin?: string;
  /** fio writing new files all the time (writes only), as kv-cache's entries are. */
  readonly newFiles?: boolean;
  /** Set in kv-cache's environment (UV_USE_IO_URING=1). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * fio's write job over ever-new files: 64 MiB files (a tiny-1b entry of ~2,700 tokens), unlinked after
 * each pass, so every write lands in freshly allocated blocks, as kv-cache's do; the plain fio row
 * overwrites one file laid out in its first pass. The difference is the file system's price of new
 * files (block allocation, unwritten-extent conversion after each O_DIRECT write).
 */
const FIO_NEW_FILES: Program = { name: 'fio (new files)', newFiles: true };
const NEW_FILE_BYTES = 64 * MiB;

interface Measured {
  readonly round: number;
  readonly workload: Workload;
  readonly program: string;
  readonly readBytesPerSec: number;
  readonly writeBytesPerSec: number;
  /** CPU cores per GiB/s: CPU seconds of the whole child ÷ GiB it moved on the device. */
  readonly coresPerGibs: number | undefined;
  readonly verdict: string;
  /** kv-cache's share of read bytes, which the mixed fio job copies. */
  readonly readShare: number;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      gib: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '15' },
      users: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '3' },
      workloads: { type: 'string', default: WORKLOADS.join(',') },
      'compare-bin': { type: 'string' },
      'kv-layout': { type: 'string', default: 'flat' },
      'io-uring': { type: 'boolean', default: false },
      'settle-busy-pct': { type: 'string', default: '15' },
    },
  });
  const layout = values['kv-layout'];
  if (layout !== 'flat' && layout !== 'slab') throw new UsageError(`--kv-layout: '${layout}' is not flat or slab`);
  const workloads = values.workloads.split(',').map((w) => {
    if (!(WORKLOADS as readonly string[]).includes(w)) throw new UsageError(`--workloads: '${w}' is not one of ${WORKLOADS.join(', ')}`);
    return w as Workload;
  });
  return {
    gib: positiveInt('gib', values.gib),
    seconds: positiveInt('seconds', values.seconds),
    users: positiveInt('users', values.users),
    rounds: positiveInt('rounds', values.rounds),
    workloads,
    compareBin: values['compare-bin'],
    layout,
    ioUring: values['io-uring'],
    settleBusyPct: positiveInt('settle-busy-pct', values['settle-busy-pct']),
  };
}

/** fio's arguments for one workload: io_uring, QD 16, 4 MiB, O_DIRECT, one job over `size` bytes of files. */
function fioJobArgs(dir: string, rw: 'write' | 'read' | 'rw', size: number, huge: readonly string[], readPct: number): string[] {
  return [
    `--name=fast-${rw}`,
    `--directory=${dir}`,
    `--rw=${rw}`,
    ...(rw === 'rw' ? [`--rwmixread=${readPct}`] : []),
    `--bs=${IO_BYTES / 1024}k`,
    '--direct=1',
    '--ioengine=io_uring',
    `--iodepth=${FIO_DEPTH}`,
    '--numjobs=1',
    `--size=${size}`,
    ...huge,
  ];
}

class Bench {
  private readonly runner = new ChildRunner(PROJECT_ROOT);
  private readonly results: Measured[] = [];

  constructor(
    private readonly opts: Options,
    private readonly device: RamDevice,
    private readonly hugeFlags: readonly string[],
    private readonly zeroThink: string,
  ) {}

  get interrupted(): boolean {
    return this.runner.interrupted;
  }

  interrupt(sig: NodeJS.Signals): void {
    this.runner.interrupt(sig);
  }

  all(): readonly Measured[] {
    return this.results;
  }

  private get dataBytes(): number {
    return Math.floor((this.device.bytes * RUN_SHARE) / IO_BYTES) * IO_BYTES;
  }

  private async scratch(name: string): Promise<string> {
    const dir = join(this.device.mount, name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    return dir;
  }

  async kvCache(round: number, workload: Workload, program: Program & { kvBin: string }, keep = true): Promise<Measured> {
    await this.settle();
    const dir = await this.scratch('kv');
    const output = join(this.device.mount, 'kv-result.json');
    const args = storageOnlyArgs({
      model: MODEL,
      users: this.opts.users,
      seconds: this.opts.seconds,
      cacheDir: join(dir, 'cache'),
      capacityGiB: this.dataBytes / GiB,
      output,
      config: this.zeroThink,
      ...(workload === 'mixed' ? {} : { node: workload === 'write' ? ('prefill' as const) : ('decode' as const) }),
    });
    // The measured phase starts at this line (after pre-population for decode): CPU and bytes are counted from it.
    const start = { name: 'start', pattern: workload === 'read' ? /^Pre-populated \d+ entries/ : /^Storage under test: / };
    const layoutArgs = this.opts.layout === 'slab' ? slabArgs(workload) : [];
    const run = await this.runner.run(process.execPath, [program.kvBin, ...args, ...layoutArgs], this.device.name, [start], program.env);
    checkExit(run, `kv-cache (${program.name})`);
    const doc = await readJson(output);
    await rm(output, { force: true });
    await rm(dir, { recursive: true, force: true });
    const read = num(doc, 'kvcache_bench', 'device_io', 'read_bytes_per_sec') ?? 0;
    const write = num(doc, 'kvcache_bench', 'device_io', 'write_bytes_per_sec') ?? 0;
    const valid = field(doc, 'kvcache_bench', 'validity', 'valid');
    const reasons = field(doc, 'kvcache_bench', 'validity', 'reasons');
    const codes = Array.isArray(reasons) ? reasons.map((r) => String(field(r, 'code'))).join(',') : '';
    const measured: Measured = {
      round,
      workload,
      program: program.name,
      readBytesPerSec: read,
      writeBytesPerSec: write,
      // The results' own figure (the process over its measured window); a build before schema 2.7.0: sampled from /proc.
      coresPerGibs: num(doc, 'kvcache_bench', 'cpu_seconds', 'per_gib_moved') ?? measuredPhaseCores(run),
      verdict: valid === true ? 'VALID' : `NOT VALID ${codes}`,
      readShare: read + write > 0 ? read / (read + write) : 0,
    };
    return keep ? this.keep(measured) : measured;
  }

  async fio(round: number, workload: Workload, readShare: number, newFiles = false): Promise<Measured> {
    await this.settle();
    const dir = await this.scratch('fio');
    const rw = workload === 'mixed' ? 'rw' : workload;
    const readPct = Math.round(readShare * 100);
    const job = fioJobArgs(dir, rw, this.dataBytes, this.hugeFlags, readPct);
    if (rw !== 'write') checkExit(await this.runner.run('fio', [...job, '--create_only=1'], this.device.name), 'fio layout');
    const out = join(this.device.mount, 'fio.json');
    // New files: passes (loops) over files unlinked after each, cut by the runtime.
    const files = [
      `--nrfiles=${Math.max(1, Math.floor(this.dataBytes / NEW_FILE_BYTES))}`,
      `--filesize=${NEW_FILE_BYTES}`,
      '--unlink_each_loop=1',
      '--loops=100000',
    ];
    const timed = [
      ...job,
      ...(newFiles ? files : ['--time_based']),
      `--runtime=${this.opts.seconds}`,
      ...(rw === 'read' ? [] : ['--end_fsync=1']),
      '--group_reporting',
      '--output-format=json',
      `--output=${out}`,
    ];
    const run = await this.runner.run('fio', timed, this.device.name);
    checkExit(run, 'fio');
    const text = await readFile(out, 'utf8');
    await rm(dir, { recursive: true, force: true });
    await rm(out, { force: true });
    const doc = JSON.parse(text) as unknown;
    return this.keep({
      round,
      workload,
      program: newFiles ? FIO_NEW_FILES.name : 'fio',
      readBytesPerSec: num(doc, 'jobs', 0, 'read', 'bw_bytes') ?? 0,
      writeBytesPerSec: num(doc, 'jobs', 0, 'write', 'bw_bytes') ?? 0,
      coresPerGibs: coresPerGibs(run),
      verdict: rw === 'rw' ? `rwmixread=${readPct}` : '',
      readShare,
    });
  }

  /**
   * Waits until the device and the kernel are quiet: the previous program's writeback and ext4's
   * conversion of its unwritten extents (kworkers) go on after it exits, and slowed whichever program
   * came next to a tenth (round 1 of earlier runs). Quiet: a second with no device writes and the
   * machine under 15 % busy; at most two minutes.
   */
  private async settle(): Promise<void> {
    const waited = await settleDevice(this.device.name, this.device.mount, this.opts.settleBusyPct);
    if (waited > 2.5) console.log(`(settled for ${waited.toFixed(1)} s: the previous program's writeback and extent conversion)`);
  }

  /**
   * One unmeasured kv-cache write run on the fresh file system: the first one ran at a twentieth of
   * later ones (round 1 of every earlier run), even after fio had written the device once.
   */
  async warmUp(): Promise<void> {
    await this.kvCache(0, 'write', { name: 'warm-up', kvBin: KV_BIN }, false);
  }

  private keep(m: Measured): Measured {
    this.results.push(m);
    console.log(formatRows([m]).split('\n').slice(2).join('\n'));
    return m;
  }
}

/** kv-cache's slab-layout arguments per workload: 48 MiB slots (2048 tokens of tiny-1b), blocks for writes. */
function slabArgs(workload: Workload): string[] {
  if (workload === 'write') return ['--kv-layout', 'slab', '--kv-block-tokens', String(PREPARE_ENTRY_TOKENS)];
  if (workload === 'read') return ['--kv-layout', 'slab', '--slab-slot-mib', '48'];
  throw new Error(
    '--kv-layout slab: the mixed workload (whole requests of up to 25,000 tokens) is not measured on slab; give --workloads write,read',
  );
}

/** Cores per GiB/s from the start marker to the last sample before the child exited (no start-up, no pre-population). */
function measuredPhaseCores(run: ChildRun): number | undefined {
  const from = run.marks.get('start');
  const to = run.samples[run.samples.length - 1];
  if (from === undefined || to === undefined || to.t <= from.t) return undefined;
  const w = windowBetween(from, to);
  const bytes = w.disk.readBytes + w.disk.writeBytes;
  return w.childCpuSec === undefined || bytes === 0 ? undefined : w.childCpuSec / (bytes / GiB);
}

function coresPerGibs(run: ChildRun): number | undefined {
  const bytes = run.whole.disk.readBytes + run.whole.disk.writeBytes;
  return run.whole.childCpuSec === undefined || bytes === 0 ? undefined : run.whole.childCpuSec / (bytes / GiB);
}

const gibs = (b: number): string => (b / GiB).toFixed(2);

function formatRows(rows: readonly Measured[]): string {
  return table(
    ['round', 'workload', 'program', 'read GiB/s', 'write GiB/s', 'total GiB/s', 'CPU-s per GiB', 'verdict / fio mix'],
    rows.map((m) => [
      String(m.round),
      m.workload,
      m.program,
      gibs(m.readBytesPerSec),
      gibs(m.writeBytesPerSec),
      gibs(m.readBytesPerSec + m.writeBytesPerSec),
      m.coresPerGibs === undefined ? '?' : m.coresPerGibs.toFixed(3),
      m.verdict,
    ]),
  );
}

function printSummary(results: readonly Measured[], programs: readonly Program[], workloads: readonly Workload[]): void {
  console.log('\nmedians over rounds (ratio = median of the per-round ratios to fio in the same round):');
  const rows: string[][] = [];
  for (const workload of workloads) {
    const fioByRound = new Map(results.filter((m) => m.workload === workload && m.program === 'fio').map((m) => [m.round, m]));
    for (const p of [...programs, FIO_NEW_FILES]) {
      const mine = results.filter((m) => m.workload === workload && m.program === p.name);
      if (mine.length === 0) continue;
      const total = (m: Measured): number => m.readBytesPerSec + m.writeBytesPerSec;
      const ratios = mine.flatMap((m) => {
        const f = fioByRound.get(m.round);
        return f === undefined || total(f) === 0 ? [] : [total(m) / total(f)];
      });
      const cores = mine.flatMap((m) => (m.coresPerGibs === undefined ? [] : [m.coresPerGibs]));
      rows.push([
        workload,
        p.name,
        gibs(median(mine.map(total))),
        p.name === 'fio' ? '1' : median(ratios).toFixed(2),
        ratios.map((r) => r.toFixed(2)).join(' / '),
        cores.length === 0 ? '?' : median(cores).toFixed(3),
        cores.map((c) => c.toFixed(3)).join(' / '),
        mine.map((m) => m.verdict || '-').join(' | '),
      ]);
    }
  }
  console.log(table(['workload', 'program', 'total GiB/s', '÷ fio', 'per round', 'CPU-s per GiB', 'per round', 'verdicts'], rows));
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const why = ramDeviceUnavailable();
  if (why !== undefined) {
    console.log(`${SCRIPT}: skipped: ${why}`);
    return;
  }
  ensureFio(SCRIPT);
  const model = BUILTIN_MODELS.get(MODEL);
  const prepop = model === undefined ? 0 : opts.users * PREPOP_ENTRIES_PER_USER * entryBytes(model, PREPARE_ENTRY_TOKENS);
  const programs: Program[] = [{ name: 'fio' }, { name: 'kv-cache', kvBin: KV_BIN }];
  if (opts.compareBin !== undefined) programs.push({ name: 'kv-cache (compare)', kvBin: opts.compareBin });
  if (opts.ioUring) programs.push({ name: 'kv-cache io_uring', kvBin: KV_BIN, env: { UV_USE_IO_URING: '1' } });
  console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
  console.log(machineLine(fioVersion()));
  const device = makeRamDevice(opts.gib * GiB);
  let huge: HugePageReservation | undefined;
  let bench: Bench | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${SCRIPT}: ${sig}: stopping the current child and cleaning up`);
    bench?.interrupt(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    huge = await reserveHugePages(FIO_DEPTH * (IO_BYTES / (2 * MiB)) + 8);
    console.log(
      `device: ${device.name}, ${opts.gib} GiB RAM-backed ext4 (allocated up front) at ${device.mount}; kv-cache --kv-layout ${opts.layout}; ${MODEL}, ${opts.users} users, ${opts.seconds} s, ` +
        `zero think, storage only; decode pre-population ${(prepop / GiB).toFixed(2)} GiB; ${huge.note}`,
    );
    bench = new Bench(opts, device, huge.fioFlags, writeZeroThinkConfig(device.mount));
    await bench.warmUp();
    console.log('warm-up: one kv-cache write run on the fresh file system (not measured)');
    for (let round = 1; round <= opts.rounds && !bench.interrupted; round++) {
      for (const workload of opts.workloads) {
        // Mixed: kv-cache first, so fio copies this round's read share.
        const order =
          workload === 'mixed'
            ? [...programs.slice(1), programs[0] ?? { name: 'fio' }]
            : inRoundOrder(round, workload === 'write' ? [...programs, FIO_NEW_FILES] : programs);
        let readShare = 0.5;
        for (const p of order) {
          if (bench.interrupted) break;
          if (p.kvBin === undefined) await bench.fio(round, workload, readShare, p.newFiles === true);
          else {
            const m = await bench.kvCache(round, workload, { ...p, kvBin: p.kvBin });
            if (p.kvBin === KV_BIN && p.env === undefined) readShare = m.readShare;
          }
        }
      }
    }
    console.log(`\nevery round:\n${formatRows(bench.all())}`);
    printSummary(bench.all(), programs, opts.workloads);
  } finally {
    await huge?.release().catch(() => undefined);
    device.remove();
  }
}

main().catch((e: unknown) => {
  console.error(`${SCRIPT}: ${messageOf(e)}`);
  process.exitCode = isUsageError(e) ? 2 : 1;
});
