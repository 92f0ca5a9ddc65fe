// bench:size — `kv-cache size` block references per second and peak RSS (issue 33's goals: ≥ 1,000,000
// references/s, memory linear in distinct blocks, a 10-million-reference trace within 2 GiB), on the
// public conversation trace and on a generated trace of about 10 million references. Each round times
// the whole command (Node's start-up and the outputs included; peak RSS) and, in a process of its own,
// the sizing pass alone (bench/lib/size/pass.ts), each per wall second and per CPU second (user +
// system: what the pass costs, whatever else loads the machine). With --baseline DIR (another built
// checkout: its bin/ and dist/) each round also times that build, the two alternating which goes first.
//   npm run bench:size -- [--rounds 3] [--requests 600000] [--baseline DIR]
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { numberArgs } from './lib/args.js';
import { table } from './lib/format.js';
import { PROJECT_ROOT } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { inRoundOrder, median } from './lib/rounds.js';
import { writeSizingTrace } from './lib/size/trace.js';

const opts = numberArgs({ rounds: 3, requests: 600_000 }, ['baseline']);
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const CONVERSATION = join(import.meta.dirname, '../../../shared/traces/mooncake_conversation_trace.jsonl');
const PASS = join(import.meta.dirname, 'lib/size/pass.js');

interface Build {
  readonly name: string;
  /** A checkout with bin/kv-cache.cjs and a built dist/. */
  readonly root: string;
}
interface Timed {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly references: number;
}
type Whole = Timed & { readonly rssKib: number };

const BUILDS: readonly Build[] = [
  { name: 'this build', root: PROJECT_ROOT },
  ...(baseline !== undefined ? [{ name: `baseline ${baseline}`, root: resolve(baseline) }] : []),
];
const flags = (trace: string): string[] => ['--mooncake-trace', trace, '--model', 'llama3.1-8b'];
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** One `kv-cache size` under /usr/bin/time: wall and CPU seconds, peak RSS (KiB), references. */
function wholeCommand(build: Build, trace: string, dir: string): Whole {
  const json = join(dir, 'size.json');
  const args = ['-f', '%e %U %S %M', process.execPath, join(build.root, 'bin/kv-cache.cjs'), 'size', ...flags(trace), '--json', json];
  console.log(`$ /usr/bin/time ${args.slice(3).join(' ')}`);
  const stderr = spawnSync('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'pipe'] }).stderr.toString();
  const [seconds, user, sys, rss] = (stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  const doc = JSON.parse(readFileSync(json, 'utf8')) as { workload: { block_references: number } };
  return {
    seconds: seconds ?? NaN,
    cpuSeconds: (user ?? NaN) + (sys ?? NaN),
    rssKib: rss ?? NaN,
    references: doc.workload.block_references,
  };
}

/** The sizing pass alone, timed inside its own process. */
function passAlone(build: Build, trace: string): Timed {
  const args = [PASS, ...(build.root === PROJECT_ROOT ? [] : ['--root', build.root]), ...flags(trace)];
  console.log(`$ node ${args.join(' ')}`);
  const out = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }).stdout.toString();
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Timed;
}

/** `median (round 1, round 2, …)` of the rounds' values. */
function summary(values: readonly number[], digits = 0): string {
  const f = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return `${f(median(values))} (${values.map(f).join(', ')})`;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-size-'));
try {
  console.log(machineLine(`load average ${load()}`));
  const generated = join(dir, 'generated.jsonl');
  const refs = await writeSizingTrace(generated, opts.requests, 25, 20_000);
  console.log(`generated trace: ${opts.requests} requests, ${refs} block references`);
  const traces = [...(existsSync(CONVERSATION) ? [['conversation', CONVERSATION] as const] : []), ['generated', generated] as const];
  for (const [name, path] of traces) {
    const whole = new Map<Build, Whole[]>(BUILDS.map((b) => [b, []]));
    const pass = new Map<Build, Timed[]>(BUILDS.map((b) => [b, []]));
    for (let r = 1; r <= opts.rounds; r++)
      for (const build of inRoundOrder(r, BUILDS)) {
        whole.get(build)?.push(wholeCommand(build, path, dir));
        pass.get(build)?.push(passAlone(build, path));
      }
    const per = (rounds: readonly Timed[], s: (t: Timed) => number): number[] => rounds.map((t) => t.references / s(t));
    const rows = BUILDS.flatMap((b) => {
      const w = whole.get(b) ?? [];
      const p = pass.get(b) ?? [];
      return [
        [b.name, 'refs per wall second', summary(per(w, (t) => t.seconds)), summary(per(p, (t) => t.seconds))],
        [b.name, 'refs per CPU second', summary(per(w, (t) => t.cpuSeconds)), summary(per(p, (t) => t.cpuSeconds))],
        [
          b.name,
          'CPU seconds',
          summary(
            w.map((t) => t.cpuSeconds),
            2,
          ),
          summary(
            p.map((t) => t.cpuSeconds),
            2,
          ),
        ],
        [b.name, 'peak RSS MiB', summary(w.map((t) => t.rssKib / 1024)), '—'],
      ];
    });
    console.log(`\n${name}: ${whole.get(BUILDS[0])?.[0]?.references ?? 0} block references; median (every round)`);
    console.log(table(['build', 'measure', 'whole command', 'the pass alone'], rows));
    console.log(`load average now ${load()}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
