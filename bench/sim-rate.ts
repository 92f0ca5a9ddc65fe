// Simulation rate: requests per second the engine processes in trace mode (null back-ends, generation
// none, think time 0 via a config file), where no storage time is involved and only the harness is
// measured. Prints requests/s, cache operations/s (trace rows/s) and the event-loop delay.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberArgs } from './lib/args.js';
import { runKvCache, writeZeroThinkConfig } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { parseResults } from '../src/report/results-schema.js';

const opts = numberArgs({ seconds: 10, users: 100, rounds: 3 });
const dir = mkdtempSync(join(tmpdir(), 'kv-sim-rate-'));
try {
  const config = writeZeroThinkConfig(dir);
  console.log(machineLine());
  const rates: number[] = [];
  for (let r = 1; r <= opts.rounds; r++) {
    const out = join(dir, `r${r}.json`);
    const args = [
      '--model',
      'llama3.1-8b',
      '--num-users',
      String(opts.users),
      '--duration',
      String(opts.seconds),
      '--generation-mode',
      'none',
      '--config',
      config,
      '--io-trace-log',
      join(dir, 'trace.csv'),
      '--seed',
      String(r),
      '--no-progress',
      '--output',
      out,
    ];
    if (r === 1) console.log(`command: kv-cache ${args.join(' ')}`);
    const res = await runKvCache(args);
    if (res.code !== 0) throw new Error(`kv-cache failed (${res.code}): ${res.stderr}`);
    const j = parseResults(readFileSync(out, 'utf8'));
    const rows = Number(/I\/O trace: (\d+) rows/.exec(res.stdout)?.[1] ?? 0);
    const sec = j.kvcache_bench.measured_window_sec;
    const rate = j.requests_completed / sec;
    rates.push(rate);
    console.log(
      `round ${r}: ${j.requests_completed} requests in ${sec.toFixed(2)} s = ${rate.toFixed(0)} requests/s; ${(rows / sec).toFixed(0)} trace rows (cache operations)/s; event-loop delay p99 ${j.kvcache_bench.event_loop_delay_ms.p99.toFixed(1)} ms`,
    );
  }
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)] ?? 0;
  console.log(`median: ${median.toFixed(0)} requests/s (goal: 20,000; ratio ${(median / 20000).toFixed(2)})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
