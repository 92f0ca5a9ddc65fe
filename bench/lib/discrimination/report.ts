// What bench:discrimination prints: the setting, each round's runs, and the factor tables with the verdicts.
import { IO_CHUNK_BYTES } from '../../../src/engine/tier-stack.js';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../../../src/engine/prepare.js';
import { GiB, KiB, MiB } from '../../../src/util/units.js';
import { fioVersion } from '../fio.js';
import { mib, table } from '../format.js';
import { fileSystemOf, freeBytes, machineLine, queueAttr } from '../machine.js';
import { Factors, verdict } from './factors.js';
import { FIGURES } from './figures.js';
import { prepopBytes } from './options.js';
import type { Options } from './options.js';
import { FOREIGN_LIMIT } from './phases.js';
import type { Attribution, Context, FioPhase, KvPhase } from './phases.js';

const foreignCells = (a: Attribution): string[] => [
  mib(a.foreignBytesPerSec),
  Number.isFinite(a.foreignShare) ? (100 * a.foreignShare).toFixed(1) : 'inf',
];

export function printPhases(fio: readonly FioPhase[], kv: readonly KvPhase[]): void {
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

export function printSummary(opts: Options, fio: readonly FioPhase[], kv: readonly KvPhase[]): void {
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

export async function printSetting(ctx: Context): Promise<void> {
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
