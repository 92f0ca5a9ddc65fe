// How fast can we fabricate KV payload bytes? The generator must outrun the device under test, or the
// benchmark measures itself (goal: at least 2x the device's write bandwidth). Compares generation on
// the main thread, in a PayloadPool with native fills and with one and all cores' worker threads, against
// crypto.randomFillSync as a yardstick, for 1 and 4 MiB chunks, and measures the device's sequential
// write bandwidth with fio (1 MiB, queue depth 32, O_DIRECT) before and after, in the same script.
// Buffers are allocated and touched before timing: fresh guest RAM on a VM is slow on first touch.
// Usage: node dist/bench/datagen.js [--gib N] [--dir D (fio's scratch directory)] [--fio-seconds S]
import { UsageError } from './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, platform, arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { entryKeyMaterial, fillChunk, fillPayload, payloadSource, sourceOffsetOf, stampChunk, stampWordsOf } from '../src/data/payload.js';
import { nativeFillHelper, type FillerKind } from '../src/data/fillers.js';
import { PayloadPool } from '../src/data/payload-pool.js';
import { GiB, MiB } from '../src/util/units.js';
import { ensureFio } from './lib/fio.js';

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

interface Options {
  readonly gib: number;
  readonly dir: string;
  readonly fioSeconds: number;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      gib: { type: 'string', default: '4' },
      dir: { type: 'string', default: tmpdir() },
      'fio-seconds': { type: 'string', default: '10' },
    },
  });
  const positive = (name: string, text: string): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} needs a positive number, got '${text}'`);
    return n;
  };
  return { gib: positive('gib', values.gib), dir: values.dir, fioSeconds: positive('fio-seconds', values['fio-seconds']) };
}

/** fio's sequential write bandwidth in bytes/s (1 MiB, iodepth 32, libaio, O_DIRECT) in a scratch dir under `dir`. */
function fioWriteBandwidth(dir: string, seconds: number): number {
  const scratch = mkdtempSync(join(dir, 'datagen-fio-'));
  try {
    const out = join(scratch, 'fio.json');
    const args = [
      '--name=seqwrite',
      `--directory=${scratch}`,
      '--rw=write',
      '--bs=1m',
      '--iodepth=32',
      '--ioengine=libaio',
      '--direct=1',
      '--size=2g',
      '--time_based',
      `--runtime=${seconds}`,
      '--output-format=json',
      `--output=${out}`,
    ];
    const r = spawnSync('fio', args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`fio ${args.join(' ')} exited with ${r.status ?? r.signal}`);
    const json = JSON.parse(readFileSync(out, 'utf8')) as { jobs: Array<{ write: { bw_bytes: number } }> };
    const bw = json.jobs[0]?.write.bw_bytes;
    if (bw === undefined || !(bw > 0)) throw new Error('fio reported no write bandwidth');
    console.log(`fio: fio ${args.filter((a) => !a.startsWith('--output')).join(' ')} -> ${(bw / GiB).toFixed(2)} GiB/s`);
    return bw;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
async function timePool(filler: FillerKind, workers: number, parallel: number, chunkBytes: number, total: number): Promise<Row> {
  const pool = await PayloadPool.create({ seed: SEED, filler, workers, chunkBytes, slots: parallel * (workers + 1) + 1 });
  if (filler === 'native' && !pool.fillerDescription.startsWith('native')) throw new Error(`no native fills: ${pool.fillerDescription}`);
  try {
    await consume(pool, 'warmup', WARMUP_BYTES);
    const entries = Math.ceil(total / ENTRY_BYTES);
    let nextEntry = 0;
    const lane = async (): Promise<number> => {
      let bytes = 0;
      for (let i = nextEntry++; i < entries; i = nextEntry++)
        bytes += await consume(pool, `entry_${i}`, Math.min(ENTRY_BYTES, total - i * ENTRY_BYTES));
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
    const who = filler === 'native' ? 'native' : `${workers} worker${workers > 1 ? 's' : ''}`;
    const label = `PayloadPool ${who}${parallel > 1 ? `, ${parallel} entries at once` : ''}`;
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
  const loop =
    row.loop === undefined
      ? '     -          -'
      : `${(row.loop.utilization * 100).toFixed(0).padStart(5)} %  ${row.loop.maxDelayMs.toFixed(1).padStart(6)} ms`;
  return `${row.name.padEnd(40)} ${`${row.chunkBytes / MiB} MiB`.padStart(6)} ${gbs.toFixed(2).padStart(7)} ${gibs.toFixed(2).padStart(7)} ${row.seconds.toFixed(2).padStart(8)} ${row.cpu.user.toFixed(2).padStart(6)} ${row.cpu.system.toFixed(2).padStart(6)}  ${loop}`;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const gib = opts.gib;
  ensureFio('bench:datagen');
  const total = Math.round(gib * GiB);
  const cores = availableParallelism();
  const cpuList = cpus();
  console.log(`command: ${process.argv.map((a) => a.replace(/^.*\/dist\//, 'dist/')).join(' ')}`);
  console.log(
    `machine: ${cpuList[0]?.model ?? 'unknown cpu'}, ${cpuList.length} logical CPUs, availableParallelism ${cores}, node ${process.version}, ${platform()} ${arch()}`,
  );
  console.log(
    `generating ${gib} GiB per case (${total} bytes); GB = 10^9, GiB = 2^30; user/sys: process CPU seconds;\nloop/delay: main-thread event-loop utilisation and max timer delay (none for the synchronous cases)`,
  );
  console.log('');
  console.log(
    `${'case'.padEnd(40)} ${'chunk'.padStart(6)} ${'GB/s'.padStart(7)} ${'GiB/s'.padStart(7)} ${'seconds'.padStart(8)} ${'user'.padStart(6)} ${'sys'.padStart(6)}  ${'loop'.padStart(7)} ${'delay'.padStart(9)}`,
  );
  const fioBefore = fioWriteBandwidth(opts.dir, opts.fioSeconds);
  const material = entryKeyMaterial(SEED, 'inline');
  const source = payloadSource(SEED);
  let best: Row | undefined;
  const keepBest = (row: Row): Row => {
    if (best === undefined || row.bytes / row.seconds > best.bytes / best.seconds) best = row;
    return row;
  };
  const filled = new WeakSet<ArrayBufferLike>();
  const stampWords = stampWordsOf(source); // as each generator thread holds it
  const base = sourceOffsetOf(material, 0);
  for (const chunkBytes of [MiB, 4 * MiB]) {
    console.log(format(timeSync('crypto.randomFillSync (yardstick)', chunkBytes, total, (buf) => randomFillSync(buf))));
    console.log(
      format(timeSync('fillPayload inline, main thread', chunkBytes, total, (buf, off) => fillPayload(source, material, off, buf))),
    );
    // A slot reused for a base the entry may copy (what the pool prefers): only the 512-byte blocks' stamps are rewritten.
    console.log(
      format(
        timeSync('stampChunk (reused slot), main thread', chunkBytes, total, (buf) => {
          // The first call (in the warm-up) fills the buffer; every later one rewrites its stamps.
          if (filled.has(buf.buffer)) stampChunk(source, material, 0, base, buf, stampWords);
          else fillChunk(source, material, 0, base, buf);
          filled.add(buf.buffer);
        }),
      ),
    );
    if (typeof nativeFillHelper() !== 'string') {
      console.log(format(keepBest(await timePool('native', 1, 1, chunkBytes, total))));
      if (cores > 1) console.log(format(keepBest(await timePool('native', 1, cores, chunkBytes, total))));
    } else console.log(`(no native fills: ${nativeFillHelper() as string})`);
    console.log(format(keepBest(await timePool('threads', 1, 1, chunkBytes, total))));
    console.log(format(keepBest(await timePool('threads', cores, 1, chunkBytes, total))));
    if (cores > 1) console.log(format(keepBest(await timePool('threads', cores, cores, chunkBytes, total))));
  }
  const fioAfter = fioWriteBandwidth(opts.dir, opts.fioSeconds);
  const device = Math.max(fioBefore, fioAfter);
  if (best === undefined) return;
  const ratio = best.bytes / best.seconds / device;
  console.log('');
  console.log(`device write bandwidth (higher of the two fio runs): ${(device / GiB).toFixed(2)} GiB/s`);
  console.log(
    `best off-main-thread generation (${best.name}, ${best.chunkBytes / MiB} MiB chunks): ${(best.bytes / best.seconds / GiB).toFixed(2)} GiB/s`,
  );
  console.log(`ratio generation / device write: ${ratio.toFixed(2)}x (goal >= 2.00x) ${ratio >= 2 ? 'MET' : 'NOT MET'}`);
}

await main();
