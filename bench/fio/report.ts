// What bench:fio prints: the setting, a table per round, and the medians with the final verdicts.
import { IO_CHUNK_BYTES } from '../../src/engine/tier-stack.js';
import type { DiskWatch } from '../../src/metrics/diskstats.js';
import { GiB, KiB } from '../../src/util/units.js';
import { pickBytes } from '../lib/disk-window.js';
import { fioVersion } from '../lib/fio.js';
import { gib, mib, table } from '../lib/format.js';
import { fileSystemOf, freeBytes, machineLine, queueAttr } from '../lib/machine.js';
import { median } from '../lib/rounds.js';
import type { Options, Workload } from './options.js';
import type { Engine, Phase } from './phases.js';

/** kv-cache ÷ fio psync at or above this meets the goal. */
const TARGET_RATIO = 0.9;

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

export function printRound(phases: readonly Phase[]): void {
  console.log(
    table(
      [
        'round',
        'workload',
        'engine',
        'MiB/s',
        'GiB/s',
        'device bytes',
        'window s',
        'own bytes',
        'own MiB/s',
        'whole-child MiB/s',
        'child s',
      ],
      phases.map(bandwidthRow),
    ),
  );
  console.log('');
  console.log(
    table(
      [
        'round',
        'workload',
        'engine',
        'diag s',
        'dev MiB/s',
        'KiB/dev op',
        'ms/dev op',
        'util %',
        'avg qd',
        'flushes',
        'other-dir bytes',
        'child cores',
        'cpu busy %',
        'iowait %',
      ],
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

export function printSummary(all: readonly Phase[], rounds: number, users: number): void {
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
    // Rounds pair the programs (alternating order), so the verdict is the median of per-round ratios;
    // the ratio of the medians above mixes rounds and is shown beside it.
    const perRound = [...new Set(all.map((p) => p.round))].map((r) => {
      const k = all.find((p) => p.round === r && p.workload === w && p.engine === 'kv-cache');
      const f = all.find((p) => p.round === r && p.workload === w && p.engine === 'fio psync');
      return k !== undefined && f !== undefined && f.bytesPerSec > 0 ? k.bytesPerSec / f.bytesPerSec : undefined;
    });
    const known = perRound.filter((x): x is number => x !== undefined);
    if (known.length === 0) continue;
    const ratio = median(known);
    console.log(
      `FINAL ${w.padEnd(5)} kv-cache ÷ fio psync = ${ratio.toFixed(3)} (median of rounds: ${perRound.map((x) => (x === undefined ? 'n/a' : x.toFixed(3))).join(', ')}; ` +
        `ratio of the medians ${(kv / fio).toFixed(3)}) → ${ratio >= TARGET_RATIO ? 'meets' : 'BELOW'} the ${TARGET_RATIO} target` +
        (aio !== undefined && aio > 0 ? `; ÷ fio libaio iodepth=${users} (medians) = ${(kv / aio).toFixed(3)} (reference only)` : ''),
    );
  }
}

export async function printMachine(watch: DiskWatch, root: string, opts: Options): Promise<void> {
  const { name, major, minor, chain } = watch.device;
  console.log(machineLine(fioVersion()));
  console.log(
    `device: ${name} (${major}:${minor}, via ${chain.join(' → ')}), rotational ${queueAttr(name, 'rotational')}, ` +
      `scheduler ${queueAttr(name, 'scheduler')}, max_sectors_kb ${queueAttr(name, 'max_sectors_kb')}, nr_requests ${queueAttr(name, 'nr_requests')}`,
  );
  console.log(`file system: ${await fileSystemOf(root)}; dir ${root}; free ${((await freeBytes(root)) / GiB).toFixed(1)} GiB`);
  console.log(
    `settings: ${opts.rounds} round(s) × 4 phases (+2 libaio references) of ${opts.seconds} s, ${opts.users} users/jobs, ` +
      `model ${opts.model}, I/O size ${opts.ioBytes / KiB} KiB (kv-cache's is ${IO_CHUNK_BYTES / KiB} KiB, fixed)`,
  );
  if (opts.ioBytes !== IO_CHUNK_BYTES)
    console.log(`note: --io-kib differs from kv-cache's ${IO_CHUNK_BYTES / KiB} KiB syscalls: not a like-for-like comparison`);
  console.log(
    "columns: MiB/s = device bytes ÷ window (kv-cache: its results JSON device_io over its measured window; fio: our diskstats delta around the fio process ÷ fio's own runtime); " +
      'own = bytes the program counted itself; whole-child = our diskstats delta around the whole child (kv-cache: includes setup such as pre-population).',
  );
  console.log(
    'diagnostics: dev MiB/s, KiB and ms per device op, util %, avg qd (time-weighted in-flight), flushes and other-direction bytes from /proc/diskstats; ' +
      'child cores = child CPU seconds ÷ window; cpu busy / iowait % of the whole machine (/proc/stat).\n',
  );
}
