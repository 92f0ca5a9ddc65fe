// bench:size — `kv-cache size` block references per second and peak RSS (issue 33's goals: ≥ 1,000,000
// references/s, memory linear in distinct blocks, a 10-million-reference trace within 2 GiB), on the
// public conversation trace and on a generated trace of about 10 million references.
//   npm run bench:size -- [--rounds 3] [--requests 600000]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberArgs } from './lib/args.js';
import { machineLine } from './lib/machine.js';
import { writeSizingTrace } from './lib/size/trace.js';

const opts = numberArgs({ rounds: 3, requests: 600_000 }, process.argv.slice(2));
const CONVERSATION = join(import.meta.dirname, '../../../shared/traces/mooncake_conversation_trace.jsonl');
const BIN = join(import.meta.dirname, '../../bin/kv-cache.cjs');

/**
 * One `kv-cache size` under /usr/bin/time: wall seconds, CPU seconds (user + system: what the pass
 * costs, whatever else loads the machine), peak RSS (KiB), references.
 */
function measure(trace: string, dir: string): { seconds: number; cpuSeconds: number; rssKib: number; references: number } {
  const json = join(dir, 'size.json');
  const args = ['-f', '%e %U %S %M', process.execPath, BIN, 'size', '--mooncake-trace', trace, '--model', 'llama3.1-8b', '--json', json];
  console.log(`$ /usr/bin/time ${args.slice(4).join(' ')}`);
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

/** The median and every round of `per`, rounded. */
function rates<R extends { references: number }>(rounds: readonly R[], per: (r: R) => number): string {
  const all = rounds.map((r) => Math.round(r.references / per(r)));
  const sorted = [...all].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)] ?? 0}, rounds ${all.join(', ')}`;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-size-'));
try {
  console.log(machineLine(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`));
  const generated = join(dir, 'generated.jsonl');
  const refs = await writeSizingTrace(generated, opts.requests, 25, 20_000);
  console.log(`generated trace: ${opts.requests} requests, ${refs} block references`);
  const traces = [...(existsSync(CONVERSATION) ? [['conversation', CONVERSATION]] : []), ['generated', generated]];
  for (const [name, path] of traces) {
    const rounds = Array.from({ length: opts.rounds }, () => measure(path ?? '', dir));
    const rss = rounds.map((r) => r.rssKib / 1024);
    console.log(
      `${name}: ${rounds[0]?.references} references; refs per wall second (whole command, start-up included) ${rates(rounds, (r) => r.seconds)}; refs per CPU second ${rates(rounds, (r) => r.cpuSeconds)}; peak RSS MiB ${rss.map((m) => m.toFixed(0)).join(', ')}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
