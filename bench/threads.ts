// Where the CPU goes during a write-heavy and a read-heavy storage run: CPU seconds per thread group
// (the main thread vs all other threads: payload generators, libuv's I/O pool, V8) sampled from
// /proc/<pid>/task over the middle of the run, and cores per GiB/s moved at the device.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberArgs } from './lib/args.js';
import { runKvCache, storageOnlyArgs, writeZeroThinkConfig } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { CLK_TCK, procStatFields } from './lib/proc.js';
import { parseResults } from '../src/report/results-schema.js';

const opts = numberArgs({ seconds: 20, users: 8 });
/** CPU seconds per thread, keyed by tid, with the thread's name. */
function threadTimes(pid: number): Map<string, { name: string; sec: number }> {
  const out = new Map<string, { name: string; sec: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = procStatFields(`/proc/${pid}/task/${tid}/stat`);
    if (fields === undefined) continue; // the thread ended meanwhile
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(tid, { name: tid === String(pid) ? 'main (event loop)' : name, sec: (Number(fields[11]) + Number(fields[12])) / CLK_TCK });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** Node 20 names every thread 'node', so only the main thread can be told apart by name. */
function group(name: string): string {
  if (name.startsWith('main')) return 'main (event loop)';
  if (name.startsWith('node')) return 'other threads (payload generators, libuv file I/O, V8)';
  return `other (${name})`;
}

const dir = mkdtempSync(join(tmpdir(), 'kv-threads-'));
try {
  console.log(machineLine());
  const config = writeZeroThinkConfig(dir);
  for (const mode of ['--prefill-only', '--decode-only']) {
    const out = join(dir, `r${mode}.json`);
    const node = mode === '--prefill-only' ? 'prefill' : 'decode';
    const args = storageOnlyArgs({
      model: 'llama3.1-8b',
      users: opts.users,
      seconds: opts.seconds,
      config,
      node,
      cacheDir: join(dir, 'kv'),
      capacityGiB: 30,
      output: out,
    });
    console.log(`\ncommand: kv-cache ${args.join(' ')}`);
    // Sample every second; the measured phase is the end of the run (after setup or pre-population).
    // The results file appears when the measurement ends (before teardown): sampling stops there.
    const samples: Array<{ t: number; times: Map<string, { name: string; sec: number }> }> = [];
    let timer: NodeJS.Timeout | undefined;
    const res = await runKvCache(args, (pid) => {
      timer = setInterval(() => {
        if (existsSync(out)) return clearInterval(timer);
        try {
          samples.push({ t: Date.now() / 1000, times: threadTimes(pid) });
        } catch {
          // exited
        }
      }, 1000);
    });
    if (timer !== undefined) clearInterval(timer);
    const after = samples[samples.length - 2];
    const before = after === undefined ? undefined : [...samples].reverse().find((x) => x.t <= after.t - (opts.seconds - 5));
    const window = after !== undefined && before !== undefined ? after.t - before.t : 0;
    if (res.code !== 0) throw new Error(`kv-cache failed: ${res.stderr}`);
    const j = parseResults(readFileSync(out, 'utf8'));
    const dev = j.kvcache_bench.device_io;
    const gibps = dev === null ? 0 : (dev.read_bytes_per_sec + dev.write_bytes_per_sec) / 2 ** 30;
    if (before === undefined || after === undefined || window <= 0) {
      console.log('(too few samples; give more --seconds)');
      continue;
    }
    const groups = new Map<string, number>();
    for (const [tid, a] of after.times) {
      const b = before.times.get(tid)?.sec ?? 0;
      groups.set(group(a.name), (groups.get(group(a.name)) ?? 0) + a.sec - b);
    }
    let total = 0;
    for (const [g, sec] of [...groups].sort((x, y) => y[1] - x[1])) {
      total += sec;
      console.log(`  ${g.padEnd(40)} ${(sec / window).toFixed(2)} cores`);
    }
    console.log(
      `  total ${(total / window).toFixed(2)} cores over ${window.toFixed(1)} s at ${gibps.toFixed(2)} GiB/s device → ${(total / window / Math.max(gibps, 1e-9)).toFixed(2)} cores per GiB/s (goal ≤ 0.5)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
