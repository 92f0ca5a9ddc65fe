// bench:block-ops — block operations (one KV block read or written on the storage tier) per CPU second
// of the whole process, per wall second, and the main thread's busy share, for a Mooncake trace
// replayed closed loop with 16 KiB blocks in one file each (bench/lib/block-ops.ts). Issue 34's goal:
// ≥ 30,000 per CPU second on a RAM-backed device, so that such a layout measures the file system.
//
// Beside kv-cache it runs the floor (bench/lib/block-ops-floor.ts): the same file calls per block from
// Node with nothing else, as many at once as kv-cache makes, through Node's fs or as native block-file
// jobs (--file-calls picks which, as kv-cache's flag does: native, io_uring, threads, fs; kv-cache
// cannot beat the floor of the calls it makes; a list such as io_uring,threads runs kv-cache and the
// floor each way, alternating); it prints the CPU per block op each side spends and how much of it this
// build adds above the floor of the same calls. With --compare-bin another build's bin/kv-cache.cjs joins the alternating rounds;
// --pool N sets UV_THREADPOOL_SIZE for every side (the default is kv-cache's own rule).
//
// It makes nothing as root: give it a directory, ideally on a RAM-backed block device made beforehand
// (docs/performance.md#block-operations-per-cpu-second says how).
//   npm run bench:block-ops -- --dir DIR [--seconds 20] [--users 16] [--rounds 3] [--capacity-gib 0]
//     [--layout flat] [--kv-pool private|shared] [--trace FILE] [--compare-bin PATH/bin/kv-cache.cjs] [--pool N] [--no-floor]
//     [--file-calls native|io_uring|threads|fs, or a list]
import { UsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { positiveInt } from './lib/args.js';
import { FILE_CALLS } from '../src/settings/choices.js';
import type { FileCalls } from '../src/settings/choices.js';
import { blockOpsArgs, kvCachePoolThreads, measureBlockOps, measureFloor } from './lib/block-ops.js';
import type { BlockOpsRun } from './lib/block-ops.js';
import { quote } from './lib/child.js';
import { table } from './lib/format.js';
import { KV_BIN, PROJECT_ROOT } from './lib/kv-cache.js';
import { fileSystemOf, machineLine } from './lib/machine.js';
import { inRoundOrder, median } from './lib/rounds.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    seconds: { type: 'string', default: '20' },
    users: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    'capacity-gib': { type: 'string', default: '0' },
    layout: { type: 'string', default: 'flat' },
    'kv-pool': { type: 'string', default: 'private' },
    trace: { type: 'string', default: join(PROJECT_ROOT, '../shared/traces/mooncake_conversation_trace.jsonl') },
    'compare-bin': { type: 'string' },
    pool: { type: 'string' },
    'no-floor': { type: 'boolean', default: false },
    'file-calls': { type: 'string', default: 'native' },
  },
});
if (values.dir === undefined) throw new UsageError('--dir DIR is required: where the runs write their block files');
if (!existsSync(values.trace)) throw new UsageError(`no Mooncake trace at ${values.trace} (--trace FILE)`);
const rounds = positiveInt('rounds', values.rounds);
// --file-calls io_uring,threads: each, alternating in each round (a build before 2.9.0 has no such flag: --compare-bin runs it without).
const fileCalls = values['file-calls'].split(',') as FileCalls[];
if (fileCalls.some((c) => !(FILE_CALLS as readonly string[]).includes(c)))
  throw new UsageError(`--file-calls takes ${FILE_CALLS.join(', ')} or a list of them; got '${values['file-calls']}'`);
// --kv-pool shared: one rank's shared pool (fan-out names, a lookup, a link and the temporary name's unlink per block published).
const kvPool = values['kv-pool'];
if (kvPool !== 'private' && kvPool !== 'shared') throw new UsageError(`--kv-pool takes private or shared; got '${kvPool}'`);
const poolArgs = kvPool === 'shared' ? ['--kv-pool', 'shared'] : [];
const capacityGiB = Number(values['capacity-gib']);
if (!Number.isFinite(capacityGiB) || capacityGiB < 0)
  throw new UsageError(`--capacity-gib must be a number ≥ 0, got '${values['capacity-gib']}'`);
const users = positiveInt('users', values.users);
const poolThreads = values.pool === undefined ? kvCachePoolThreads(users) : positiveInt('pool', values.pool);
const env = values.pool === undefined ? undefined : { UV_THREADPOOL_SIZE: String(poolThreads) };
const base: Omit<BlockOpsRun, 'bin'> = {
  dir: resolve(values.dir),
  trace: resolve(values.trace),
  seconds: positiveInt('seconds', values.seconds),
  users,
  capacityGiB,
  layout: values.layout,
  extraArgs: poolArgs,
  ...(env === undefined ? {} : { env }),
};

/** One side's figures in a round; the floor has no main-thread share or verdict. */
interface Figures {
  readonly perCpuSecond: number;
  readonly perWallSecond: number;
  readonly mainThreadBusy?: number;
  readonly line: string;
}
interface Side {
  readonly name: string;
  readonly measure: () => Promise<Figures>;
  /** The file calls it makes (this build's sides and the floors; the compared build's own default has none). */
  readonly calls?: string;
  readonly floor?: boolean;
}

const kvCacheSide = (name: string, bin: string, calls: string | undefined): Side => ({
  name,
  ...(calls !== undefined ? { calls } : {}),
  measure: async () => {
    const f = await measureBlockOps({ ...base, bin, extraArgs: [...poolArgs, ...(calls !== undefined ? ['--file-calls', calls] : [])] });
    const verdict = f.invalidBecause.length === 0 ? 'VALID' : `NOT VALID ${f.invalidBecause.join(', ')}`;
    return {
      ...f,
      line: `${f.blockOps} block ops in ${f.windowSeconds.toFixed(1)} s, ${f.cpuSeconds.toFixed(2)} CPU-s, main thread busy ${(100 * f.mainThreadBusy).toFixed(1)} %, ${f.ioMode} I/O, ${verdict}`,
    };
  },
});
const kvCacheSides = (bin: string, label: string): Side[] =>
  fileCalls.map((calls) => kvCacheSide(fileCalls.length > 1 ? `${label}, --file-calls ${calls}` : label, bin, calls));
const sides: Side[] = kvCacheSides(KV_BIN, 'this build');
if (values['compare-bin'] !== undefined) sides.push(kvCacheSide('compare', resolve(values['compare-bin']), undefined));
if (!values['no-floor'])
  for (const calls of fileCalls)
    sides.push({
      name: calls === 'fs' ? 'floor (Node fs alone)' : `floor (${calls} jobs alone)`,
      calls,
      floor: true,
      measure: async () => {
        const f = await measureFloor(base.dir, base.seconds, users, poolThreads, calls);
        return {
          ...f,
          line: `${f.blockOps} block ops in ${f.seconds.toFixed(1)} s, ${f.cpuSeconds.toFixed(2)} CPU-s, ${f.direct ? 'direct' : 'buffered'} I/O`,
        };
      },
    });

const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(machineLine(`load average ${loadAverage()}`));
console.log(
  `directory: ${base.dir} on ${await fileSystemOf(base.dir)}; libuv threads: ${poolThreads}${env === undefined ? " (kv-cache's own rule)" : ' (--pool)'}`,
);
console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
console.log(
  `kv-cache: node BIN ${blockOpsArgs({ ...base, bin: KV_BIN }, 'kv32.yaml', 'DIR/cache', 'results.json')
    .map(quote)
    .join(' ')}`,
);

const results = new Map<string, Figures[]>(sides.map((s) => [s.name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const side of inRoundOrder(round, sides)) {
    const f = await side.measure();
    results.get(side.name)?.push(f);
    console.log(
      `round ${round} ${side.name}: ${Math.round(f.perCpuSecond)} per CPU-s, ${Math.round(f.perWallSecond)} per wall s (${f.line}; load ${loadAverage()})`,
    );
  }
}

const column = (fs: readonly Figures[], of: (f: Figures) => number | undefined, digits = 0): string => {
  const xs = fs.map(of).filter((x): x is number => x !== undefined);
  return xs.length === 0 ? '—' : `${median(xs).toFixed(digits)} (${xs.map((x) => x.toFixed(digits)).join(' / ')})`;
};
console.log(
  '\n' +
    table(
      ['side', 'layout', 'threads', 'block ops per CPU-s: median (rounds)', 'per wall s', 'main thread busy %', 'CPU µs per block op'],
      sides.map((s) => {
        const fs = results.get(s.name) ?? [];
        return [
          s.name,
          kvPool === 'shared' ? `${base.layout}, shared pool` : base.layout,
          String(poolThreads),
          column(fs, (f) => f.perCpuSecond),
          column(fs, (f) => f.perWallSecond),
          column(fs, (f) => (f.mainThreadBusy === undefined ? undefined : 100 * f.mainThreadBusy), 1),
          column(fs, (f) => 1e6 / f.perCpuSecond, 1),
        ];
      }),
    ),
);
// What the harness adds to the calls it makes: CPU per block op above the floor of the same calls
// (medians). Unlike ops per CPU-s, it does not move with how fast the kernel makes the calls today.
const cpuUsPerOp = (name: string): number => median((results.get(name) ?? []).map((f) => 1e6 / f.perCpuSecond));
for (const side of sides.filter((s) => !s.floor && s.calls !== undefined)) {
  const floor = sides.find((s) => s.floor === true && s.calls === side.calls);
  if (floor === undefined) continue;
  const above = cpuUsPerOp(side.name) - cpuUsPerOp(floor.name);
  console.log(`${side.name}: ${above.toFixed(1)} µs of CPU per block op above ${floor.name} (medians)`);
}
