// Memory of a storage-only run: samples the kv-cache process's resident set once a second and prints
// the peak and the RSS at each quarter of the run, to show it is bounded by the buffers (not by entry
// sizes) and does not grow with run length. Default: llama3.1-8b, 20 users, --cpu-mem-gb 0, 120 s.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberArgs } from './lib/args.js';
import { runKvCache, storageOnlyArgs } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';
import { parseResults } from '../src/report/results-schema.js';

const opts = numberArgs({ seconds: 120, users: 20 });

function statusKiB(pid: number, field: string): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'kv-memory-'));
try {
  console.log(machineLine());
  const args = storageOnlyArgs({
    model: 'llama3.1-8b',
    users: opts.users,
    seconds: opts.seconds,
    cacheDir: join(dir, 'kv'),
    capacityGiB: 30,
    output: join(dir, 'r.json'),
  });
  console.log(`command: kv-cache ${args.join(' ')}`);
  const samples: Array<{ t: number; rssMiB: number }> = [];
  let peakKiB = 0;
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const res = await runKvCache(args, (pid) => {
    timer = setInterval(() => {
      const rss = statusKiB(pid, 'VmRSS');
      const hwm = statusKiB(pid, 'VmHWM');
      if (rss !== undefined) samples.push({ t: (Date.now() - start) / 1000, rssMiB: rss / 1024 });
      if (hwm !== undefined) peakKiB = Math.max(peakKiB, hwm);
    }, 1000);
  });
  if (timer !== undefined) clearInterval(timer);
  if (res.code !== 0) throw new Error(`kv-cache failed (${res.code}): ${res.stderr}`);
  const j = parseResults(readFileSync(join(dir, 'r.json'), 'utf8'));
  const at = (q: number): string => {
    const s = samples[Math.min(samples.length - 1, Math.floor(q * (samples.length - 1)))];
    return s === undefined ? '-' : `${s.rssMiB.toFixed(0)} MiB at ${s.t.toFixed(0)} s`;
  };
  console.log(
    `requests ${j.requests_completed}, storage read ${(j.kvcache_bench.storage_bytes.read_bytes / 2 ** 30).toFixed(1)} GiB, written ${(j.kvcache_bench.storage_bytes.written_bytes / 2 ** 30).toFixed(1)} GiB`,
  );
  console.log(`RSS: 25 % ${at(0.25)}; 50 % ${at(0.5)}; 75 % ${at(0.75)}; end ${at(1)}`);
  console.log(`peak RSS (VmHWM): ${(peakKiB / 1024).toFixed(0)} MiB (goal: ≤ 2048 MiB, ratio ${(peakKiB / 1024 / 2048).toFixed(2)})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
