// Issue 13's "Must show" (root, bpftrace, fio): (a) closing the loop — trace a kv-cache run, distil its
// fio job, run fio with it while `kv-cache trace` traces fio, and compare the request-size mix and read
// share of the two (target: within 10 points); (b) the traced block I/O count and bytes against
// /proc/diskstats for the measured window (target: within 5 %); (c) storage bandwidth with tracing on
// vs off, alternating, every round printed (target: within 5 %).
//   npm run bench:trace-loop -- --seconds 20 --fio-seconds 20 --rounds 3 --overhead-seconds 20 --users 4
import { isUsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberArgs } from './lib/args.js';
import { ensureFio, fioVersion } from './lib/fio.js';
import { table } from './lib/format.js';
import { machineLine } from './lib/machine.js';
import { KV_BIN, runKvCache, storageOnlyArgs } from './lib/kv-cache.js';
import { inRoundOrder, median } from './lib/rounds.js';
import { parseResults } from '../src/report/results-schema.js';
import type { ResultsDocument } from '../src/report/results-schema.js';

const o = numberArgs({ seconds: 20, 'fio-seconds': 20, rounds: 3, 'overhead-seconds': 20, users: 4, 'file-mib': 512 });

/** Request-size shares (points) by size label, per direction, from a `bssplit=reads,writes` value. */
function sizeMix(bssplit: string): Array<Map<string, number>> {
  return bssplit.split(',').map((side) => new Map(side.split(':').map((e) => [e.split('/')[0] ?? '', Number(e.split('/')[1])])));
}

/** The largest share difference (points) over every size of either mix. */
function mixGap(a: Map<string, number>, b: Map<string, number>): number {
  const sizes = new Set([...a.keys(), ...b.keys()]);
  return Math.max(0, ...[...sizes].map((s) => Math.abs((a.get(s) ?? 0) - (b.get(s) ?? 0))));
}

/** Block read share (%) and bssplit of a job file we wrote (its header and its bssplit line). */
function jobFacts(ini: string): { readShare: number; bssplit: string } {
  const m = /block requests: (\d+) reads, (\d+) writes/.exec(ini);
  const bs = /^bssplit=(.+)$/m.exec(ini);
  if (m === null || bs === null) throw new Error(`not a distilled job:\n${ini}`);
  const r = Number(m[1]);
  const w = Number(m[2]);
  return { readShare: r + w > 0 ? (r * 100) / (r + w) : 0, bssplit: bs[1] ?? '' };
}

async function kvRun(dir: string, tag: string, seconds: number, tracing: boolean): Promise<ResultsDocument> {
  const output = join(dir, `${tag}.json`);
  const args = storageOnlyArgs({ model: 'tiny-1b', users: o.users, seconds, cacheDir: join(dir, 'cache'), capacityGiB: 4, output });
  const r = await runKvCache([...args, ...(tracing ? ['--enable-latency-tracing'] : [])]);
  if (r.code !== 0) throw new Error(`kv-cache ${tag} exited ${r.code}: ${r.stderr}`);
  return parseResults(readFileSync(output, 'utf8'));
}

async function main(): Promise<void> {
  if (process.geteuid?.() !== 0) throw new Error('bench:trace-loop needs root (bpftrace)');
  ensureFio('bench:trace-loop');
  console.log(machineLine(fioVersion()));
  console.log(`date: ${new Date().toISOString()}   load: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const dir = mkdtempSync(join(tmpdir(), 'kvcache-trace-loop-'));
  try {
    // (a) + (b): one traced run.
    const traced = await kvRun(dir, 'traced', o.seconds, true);
    const lt = traced.kvcache_bench.latency_tracing;
    const dev = traced.kvcache_bench.device_io;
    const ini = traced.fio_workload;
    if (lt?.block_requests == null || dev === null || ini === undefined)
      throw new Error(`no tracing in the run: ${lt?.reason ?? 'no device'}`);
    const br = lt.block_requests;
    const hist = traced.device_latency_tracing;
    console.log('\n(b) traced block I/O vs /proc/diskstats (measured window; tracing brackets it)');
    const row = (what: string, n: number, disk: number): string[] => [
      what,
      String(n),
      String(disk),
      `${(((n - disk) * 100) / Math.max(1, disk)).toFixed(2)} %`,
    ];
    console.log(
      table(
        ['figure', 'traced', 'diskstats', 'difference'],
        [
          row('read requests (bssplit_read_kb samples)', hist?.bssplit_read_kb.count ?? 0, dev.read_ops),
          row('write requests (bssplit_write_kb samples)', hist?.bssplit_write_kb.count ?? 0, dev.write_ops),
          row('read completions', br.completed_read, dev.read_ops),
          row('write completions', br.completed_write, dev.write_ops),
          row('read bytes (completions)', br.completed_read_bytes, dev.read_bytes),
          row('write bytes (completions)', br.completed_write_bytes, dev.written_bytes),
        ],
      ),
    );

    console.log('\n(a) closing the loop: fio with the distilled job, traced by kv-cache trace');
    const jobFile = readdirSync(dir).find((f) => f.startsWith('fio_kv_cache_workload_'));
    if (jobFile === undefined) throw new Error('the run wrote no fio job file');
    const target = join(dir, 'fio-loop.bin');
    // Written before the trace, so fio's reads hit real blocks and its layout is not in the capture.
    execFileSync('dd', ['if=/dev/urandom', `of=${target}`, 'bs=1M', `count=${o['file-mib']}`, 'oflag=direct'], { stdio: 'ignore' });
    // The job's own runtime= wins over the command line: a copy with the bench's runtime.
    const loopJob = join(dir, 'loop.ini');
    writeFileSync(loopJob, readFileSync(join(dir, jobFile), 'utf8').replace(/^runtime=\d+$/m, `runtime=${o['fio-seconds']}`));
    const fioCmd = `fio ${loopJob} --filename=${target} --size=${o['file-mib']}M --output=/dev/null`;
    const fioIni = join(dir, 'fio-traced.ini');
    const device = dev.device;
    const t = await runKvCacheTrace(['trace', '--command', fioCmd, '--device', device, '-o', fioIni]);
    if (t !== 0) throw new Error(`kv-cache trace exited ${t}`);
    const a = jobFacts(ini);
    const b = jobFacts(readFileSync(fioIni, 'utf8'));
    const [ar, aw] = sizeMix(a.bssplit);
    const [br2, bw] = sizeMix(b.bssplit);
    const gaps = [mixGap(ar ?? new Map(), br2 ?? new Map()), mixGap(aw ?? new Map(), bw ?? new Map())];
    console.log(
      table(
        ['figure', 'kv-cache run', 'fio run', 'gap (points)', 'within 10'],
        [
          [
            'block read share %',
            a.readShare.toFixed(1),
            b.readShare.toFixed(1),
            Math.abs(a.readShare - b.readShare).toFixed(1),
            String(Math.abs(a.readShare - b.readShare) <= 10),
          ],
          [
            'read size mix',
            a.bssplit.split(',')[0] ?? '',
            b.bssplit.split(',')[0] ?? '',
            (gaps[0] ?? 0).toFixed(0),
            String((gaps[0] ?? 0) <= 10),
          ],
          [
            'write size mix',
            a.bssplit.split(',')[1] ?? '',
            b.bssplit.split(',')[1] ?? '',
            (gaps[1] ?? 0).toFixed(0),
            String((gaps[1] ?? 0) <= 10),
          ],
        ],
      ),
    );
    rmSync(target, { force: true });

    console.log(`\n(c) overhead: storage bandwidth with tracing on vs off, ${o.rounds} alternating rounds of ${o['overhead-seconds']} s`);
    const rows: string[][] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const bw: Record<string, number> = {};
      for (const side of inRoundOrder(round, ['off', 'on'] as const)) {
        const d = await kvRun(dir, `overhead-${round}-${side}`, o['overhead-seconds'], side === 'on');
        const sb = d.kvcache_bench.storage_bytes;
        bw[side] = (sb.read_bytes_per_sec + sb.write_bytes_per_sec) / 2 ** 20;
      }
      const ratio = (bw.on ?? 0) / Math.max(1e-9, bw.off ?? 0);
      ratios.push(ratio);
      rows.push([String(round), (bw.off ?? 0).toFixed(1), (bw.on ?? 0).toFixed(1), ratio.toFixed(3)]);
    }
    console.log(table(['round', 'off MiB/s', 'on MiB/s', 'on ÷ off'], rows));
    console.log(`median on ÷ off: ${median(ratios).toFixed(3)} (target 0.95–1.05)`);
    console.log(
      `\ncommand: npm run bench:trace-loop -- --seconds ${o.seconds} --fio-seconds ${o['fio-seconds']} --rounds ${o.rounds} --overhead-seconds ${o['overhead-seconds']} --users ${o.users}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `kv-cache trace …` with its output shown (the histograms of fio's run). */
function runKvCacheTrace(args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KV_BIN, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
}

main().catch((e: unknown) => {
  console.error(`bench:trace-loop: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(isUsageError(e) ? 2 : 1);
});
