// How fast can we fabricate KV payload bytes? The generator must outrun the device under test, or the
// benchmark measures itself. Compares generation on the main thread, in a PayloadPool with one and with
// all cores' worker threads, against crypto.randomFillSync as a yardstick, for 1 and 4 MiB chunks.
// Buffers are allocated and touched before timing: fresh guest RAM on a VM is slow on first touch.
// Usage: node dist/bench/datagen.js [--gib N]
import { randomFillSync } from 'node:crypto';
import { availableParallelism, cpus, platform, arch } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { entryKeyMaterial, fillPayload } from '../src/data/payload.js';
import { PayloadPool } from '../src/data/payload-pool.js';
import { GiB, MiB } from '../src/util/units.js';

const SEED = 42;
/** The pool cases generate their total as entries of this size, one key each. */
const ENTRY_BYTES = 256 * MiB;
const WARMUP_BYTES = 64 * MiB;

interface Row {
  readonly name: string;
  readonly chunkBytes: number;
  readonly bytes: number;
  readonly seconds: number;
  /** Process CPU time (all threads), seconds: system time here is mostly page faults. */
  readonly cpu: { readonly user: number; readonly system: number };
  /** Main-thread event-loop utilisation and worst timer lateness, where the loop could turn at all. */
  readonly loop?: { readonly utilization: number; readonly maxDelayMs: number };
}

function parseGiB(argv: readonly string[]): number {
  const at = argv.indexOf('--gib');
  if (at < 0) return 4;
  const n = Number(argv[at + 1]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--gib needs a positive number, got '${argv[at + 1] ?? ''}'`);
  return n;
}

/** Times a synchronous fill of `total` bytes into one reused buffer. */
function timeSync(name: string, chunkBytes: number, total: number, fill: (buf: Uint8Array, offset: number) => void): Row {
  const buf = new Uint8Array(chunkBytes);
  for (let off = 0; off < WARMUP_BYTES; off += chunkBytes) fill(buf, off);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let off = 0; off < total; off += chunkBytes) fill(buf.subarray(0, Math.min(chunkBytes, total - off)), off);
  return { name, chunkBytes, bytes: total, seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
}

async function consume(pool: PayloadPool, key: string, size: number): Promise<number> {
  let n = 0;
  for await (const chunk of pool.source(key, size).chunks()) n += chunk.length;
  return n;
}

/** Generates `total` bytes through a pool, `parallel` entries at a time, consuming chunks as they come. */
async function timePool(workers: number, parallel: number, chunkBytes: number, total: number): Promise<Row> {
  const pool = await PayloadPool.create({ seed: SEED, workers, chunkBytes, slots: parallel * (workers + 1) + 1 });
  try {
    await consume(pool, 'warmup', WARMUP_BYTES);
    const entries = Math.ceil(total / ENTRY_BYTES);
    let nextEntry = 0;
    const lane = async (): Promise<number> => {
      let bytes = 0;
      for (let i = nextEntry++; i < entries; i = nextEntry++) bytes += await consume(pool, `entry_${i}`, Math.min(ENTRY_BYTES, total - i * ENTRY_BYTES));
      return bytes;
    };
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const elu0 = performance.eventLoopUtilization();
    delay.enable();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const bytes = (await Promise.all(Array.from({ length: parallel }, lane))).reduce((a, b) => a + b, 0);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(process.cpuUsage(cpu0));
    delay.disable();
    const utilization = performance.eventLoopUtilization(elu0).utilization;
    const label = `PayloadPool ${workers} worker${workers > 1 ? 's' : ''}${parallel > 1 ? `, ${parallel} entries at once` : ''}`;
    return { name: label, chunkBytes, bytes, seconds, cpu, loop: { utilization, maxDelayMs: delay.max / 1e6 } };
  } finally {
    await pool.close();
  }
}

function cpuSeconds(usage: NodeJS.CpuUsage): Row['cpu'] {
  return { user: usage.user / 1e6, system: usage.system / 1e6 };
}

function format(row: Row): string {
  const gbs = row.bytes / 1e9 / row.seconds;
  const gibs = row.bytes / GiB / row.seconds;
  const loop = row.loop === undefined ? '     -          -' : `${(row.loop.utilization * 100).toFixed(0).padStart(5)} %  ${row.loop.maxDelayMs.toFixed(1).padStart(6)} ms`;
  return `${row.name.padEnd(40)} ${`${row.chunkBytes / MiB} MiB`.padStart(6)} ${gbs.toFixed(2).padStart(7)} ${gibs.toFixed(2).padStart(7)} ${row.seconds.toFixed(2).padStart(8)} ${row.cpu.user.toFixed(2).padStart(6)} ${row.cpu.system.toFixed(2).padStart(6)}  ${loop}`;
}

async function main(): Promise<void> {
  const gib = parseGiB(process.argv.slice(2));
  const total = Math.round(gib * GiB);
  const cores = availableParallelism();
  const cpuList = cpus();
  console.log(`command: ${process.argv.map((a) => a.replace(/^.*\/dist\//, 'dist/')).join(' ')}`);
  console.log(`machine: ${cpuList[0]?.model ?? 'unknown cpu'}, ${cpuList.length} logical CPUs, availableParallelism ${cores}, node ${process.version}, ${platform()} ${arch()}`);
  console.log(`generating ${gib} GiB per case (${total} bytes); GB = 10^9, GiB = 2^30; user/sys: process CPU seconds;\nloop/delay: main-thread event-loop utilisation and max timer delay (none for the synchronous cases)`);
  console.log('');
  console.log(`${'case'.padEnd(40)} ${'chunk'.padStart(6)} ${'GB/s'.padStart(7)} ${'GiB/s'.padStart(7)} ${'seconds'.padStart(8)} ${'user'.padStart(6)} ${'sys'.padStart(6)}  ${'loop'.padStart(7)} ${'delay'.padStart(9)}`);
  const material = entryKeyMaterial(SEED, 'inline');
  for (const chunkBytes of [MiB, 4 * MiB]) {
    console.log(format(timeSync('crypto.randomFillSync (yardstick)', chunkBytes, total, (buf) => randomFillSync(buf))));
    console.log(format(timeSync('fillPayload inline, main thread', chunkBytes, total, (buf, off) => fillPayload(material, off, buf))));
    console.log(format(await timePool(1, 1, chunkBytes, total)));
    console.log(format(await timePool(cores, 1, chunkBytes, total)));
    if (cores > 1) console.log(format(await timePool(cores, cores, chunkBytes, total)));
  }
}

await main();
