// bench:block-ops — block operations (one KV block read or written on the storage tier) per CPU second
// of the whole process, per wall second, and the main thread's busy share, for a Mooncake trace
// replayed closed loop with 16 KiB blocks in one file each (bench/lib/block-ops.ts). Issue 34's goal:
// ≥ 30,000 per CPU second on a RAM-backed device, so that such a layout measures the file system.
//
// It makes nothing as root: give it a directory, ideally on a RAM-backed block device made beforehand
// (docs/performance.md#block-operations-per-cpu-second says how). With --compare-bin another build's
// bin/kv-cache.cjs runs in alternating rounds with this one.
//   npm run bench:block-ops -- --dir DIR [--seconds 20] [--users 16] [--rounds 3] [--capacity-gib 0]
//     [--layout flat] [--trace FILE] [--compare-bin PATH/bin/kv-cache.cjs]
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { positiveInt } from './lib/args.js';
import { blockOpsArgs, measureBlockOps } from './lib/block-ops.js';
import type { BlockOpsFigures, BlockOpsRun } from './lib/block-ops.js';
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
    trace: { type: 'string', default: join(PROJECT_ROOT, '../shared/traces/mooncake_conversation_trace.jsonl') },
    'compare-bin': { type: 'string' },
  },
});
if (values.dir === undefined) throw new Error('--dir DIR is required: where the runs write their block files');
if (!existsSync(values.trace)) throw new Error(`no Mooncake trace at ${values.trace} (--trace FILE)`);
const rounds = positiveInt('rounds', values.rounds);
const capacityGiB = Number(values['capacity-gib']);
if (!Number.isFinite(capacityGiB) || capacityGiB < 0)
  throw new Error(`--capacity-gib must be a number ≥ 0, got '${values['capacity-gib']}'`);

const sides = [
  { name: 'this build', bin: KV_BIN },
  ...(values['compare-bin'] === undefined ? [] : [{ name: 'compare', bin: resolve(values['compare-bin']) }]),
];
const base: Omit<BlockOpsRun, 'bin'> = {
  dir: resolve(values.dir),
  trace: resolve(values.trace),
  seconds: positiveInt('seconds', values.seconds),
  users: positiveInt('users', values.users),
  capacityGiB,
  layout: values.layout,
};

const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(machineLine(`load average ${loadAverage()}`));
console.log(`directory: ${base.dir} on ${await fileSystemOf(base.dir)}`);
console.log(`command: node ${process.argv.slice(1).map(quote).join(' ')}`);
for (const side of sides)
  console.log(
    `${side.name}: node ${quote(side.bin)} ${blockOpsArgs({ ...base, bin: side.bin }, 'kv32.yaml', 'DIR/cache', 'results.json')
      .map(quote)
      .join(' ')}`,
  );

const results = new Map<string, BlockOpsFigures[]>(sides.map((s) => [s.name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const side of inRoundOrder(round, sides)) {
    const f = await measureBlockOps({ ...base, bin: side.bin });
    results.get(side.name)?.push(f);
    console.log(
      `round ${round} ${side.name}: ${f.blockOps} block ops in ${f.windowSeconds.toFixed(1)} s, ${f.cpuSeconds.toFixed(2)} CPU-s → ` +
        `${Math.round(f.perCpuSecond)} per CPU-s, ${Math.round(f.perWallSecond)} per wall s, main thread busy ${(100 * f.mainThreadBusy).toFixed(1)} %, ` +
        `${f.ioMode} I/O, ${f.invalidBecause.length === 0 ? 'VALID' : `NOT VALID ${f.invalidBecause.join(', ')}`} (load ${loadAverage()})`,
    );
  }
}

const column = (fs: readonly BlockOpsFigures[], of: (f: BlockOpsFigures) => number, digits = 0): string =>
  `${median(fs.map(of)).toFixed(digits)} (${fs.map((f) => of(f).toFixed(digits)).join(' / ')})`;
console.log(
  '\n' +
    table(
      ['build', 'layout', 'I/O', 'block ops per CPU-s: median (rounds)', 'per wall s', 'main thread busy %'],
      sides.map((s) => {
        const fs = results.get(s.name) ?? [];
        return [
          s.name,
          base.layout,
          fs[0]?.ioMode ?? '?',
          column(fs, (f) => f.perCpuSecond),
          column(fs, (f) => f.perWallSecond),
          column(fs, (f) => 100 * f.mainThreadBusy, 1),
        ];
      }),
    ),
);
