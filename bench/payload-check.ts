// Are the bytes kv-cache writes honest? Generates entries the way a run does (a PayloadPool with a
// run's slots and read-ahead for --writers concurrent writers: worker threads, each chunk over the base
// a free slot holds, refilled by stamps, or by a copy where the repeat rule bars that base), entries
// of mixed sizes up to --entry-mib with ragged tails, each written to its own file by one of the
// writers through the file tier as a run writes them (direct I/O, the payload slots' own bytes, one
// native job per entry of one chunk: the path that once let a slot go before its write was done);
// then reads the files back and prints:
//   - 512-byte blocks seen twice across every file (some arrays deduplicate at 512 B; goal: none);
//   - what `zstd -3` saves on the largest entries (goal: under 1 %), and `zstd -19` on the largest one.
// Usage: node dist/bench/payload-check.js [--gib 1] [--entry-mib 48] [--writers 16] [--dir D] [--seed 1]
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PAYLOAD_BLOCK } from '../src/data/payload.js';
import { DirectSlabs } from '../src/data/aligned.js';
import { PayloadPool } from '../src/data/payload-pool.js';
import { BlockFiles, fileCallsOf } from '../src/tiers/block-file.js';
import { FileBackend } from '../src/tiers/file.js';
import { slotCounts } from '../src/engine/tier-stack.js';
import { Rng } from '../src/util/rng.js';
import { GiB, MiB } from '../src/util/units.js';
import { positiveInt } from './lib/args.js';
import { machineLine } from './lib/machine.js';

const CHUNK = 4 * MiB;

function options(): { gib: number; entryMiB: number; writers: number; dir: string; seed: number } {
  const { values } = parseArgs({
    options: {
      gib: { type: 'string', default: '1' },
      'entry-mib': { type: 'string', default: '48' },
      writers: { type: 'string', default: '16' },
      dir: { type: 'string', default: tmpdir() },
      seed: { type: 'string', default: '1' },
    },
  });
  return {
    gib: positiveInt('gib', values.gib),
    entryMiB: positiveInt('entry-mib', values['entry-mib']),
    writers: positiveInt('writers', values.writers),
    dir: values.dir,
    seed: positiveInt('seed', values.seed),
  };
}

function zstdSaving(path: string, level: number): number {
  const input = readFileSync(path);
  const r = spawnSync('zstd', [`-${level}`, '-c', '-q'], { input, maxBuffer: 2 * input.length + MiB });
  if (r.status !== 0) throw new Error(`zstd -${level} failed: ${r.stderr.toString()}`);
  return 1 - r.stdout.length / input.length;
}

async function main(): Promise<void> {
  const o = options();
  const rng = new Rng(o.seed, 'payload-check');
  // Sizes from one 4 KiB page to --entry-mib, ragged (entries of whole tokens rarely end on a block).
  const sizes: number[] = [];
  for (let total = 0; total < o.gib * GiB; total += sizes[sizes.length - 1] ?? 0) sizes.push(rng.int(4096, o.entryMiB * MiB));
  const totalBytes = sizes.reduce((a, b) => a + b, 0);
  console.log(`command: node ${process.argv.slice(1).join(' ')}`);
  console.log(machineLine());
  const dir = mkdtempSync(join(o.dir, 'kv-payload-check-'));
  const slots = slotCounts(o.writers).payload;
  // The run's wiring: the payload slots are direct slabs the file tier writes from as they are.
  const directSlabs = new DirectSlabs();
  const workers = Math.max(1, availableParallelism());
  const pool = await PayloadPool.create({ seed: o.seed, workers, chunkBytes: CHUNK, slots, probeDir: dir, directSlabs });
  const jobs = BlockFiles.load(2 * o.writers + 8);
  const backend = await FileBackend.create({
    dir,
    ioMode: 'direct',
    chunkBytes: CHUNK,
    directSlabs,
    ...(typeof jobs === 'string' ? {} : { blockFiles: jobs }),
  });
  try {
    const keys = sizes.map((_, k) => `entry_${k}`);
    let next = 0;
    // --writers entries at a time share the slots, as a run's concurrent writers do.
    const writer = async (): Promise<void> => {
      for (let k = next++; k < sizes.length; k = next++) await backend.write(keys[k] ?? '', pool.source(keys[k] ?? '', sizes[k] ?? 0));
    };
    await Promise.all(Array.from({ length: o.writers }, writer));
    const paths = keys.map((k) => backend.pathFor(k));
    console.log(
      `file tier: ${backend.effectiveIoMode} I/O; ${fileCallsOf(backend.effectiveIoMode, backend.blockFiles ?? (typeof jobs === 'string' ? jobs : undefined))}; ` +
        `written from the payload slots ${(backend.counters.zeroCopyBytes / GiB).toFixed(2)} GiB, copied first ${(backend.counters.stagedBytes / GiB).toFixed(2)} GiB`,
    );
    const { stampedBytes, copiedBytes } = pool.stats;
    const seen = new Set<string>();
    let blocks = 0;
    let duplicates = 0;
    for (const path of paths) {
      const bytes = readFileSync(path);
      for (let at = 0; at < bytes.length; at += PAYLOAD_BLOCK) {
        const digest = createHash('md5')
          .update(bytes.subarray(at, at + PAYLOAD_BLOCK))
          .digest('base64');
        blocks++;
        if (seen.has(digest)) duplicates++;
        else seen.add(digest);
      }
    }
    const largest = paths.map((p, k) => ({ p, size: sizes[k] ?? 0 })).sort((a, b) => b.size - a.size);
    const savings = largest.slice(0, 4).map((e) => zstdSaving(e.p, 3));
    const strong = zstdSaving(largest[0]?.p ?? '', 19);
    console.log(
      `${sizes.length} entries of 4 KiB–${o.entryMiB} MiB (${(totalBytes / GiB).toFixed(2)} GiB) by ${o.writers} writers sharing ${slots} slots in ${dir}; ` +
        `generated by stamps ${((100 * stampedBytes) / (stampedBytes + copiedBytes)).toFixed(1)} %, by copies ${((100 * copiedBytes) / (stampedBytes + copiedBytes)).toFixed(1)} %`,
    );
    console.log(`512-byte blocks read back: ${blocks}, seen twice: ${duplicates} (goal 0) ${duplicates === 0 ? 'MET' : 'NOT MET'}`);
    console.log(
      `zstd -3 saves ${savings.map((s) => `${(100 * s).toFixed(3)} %`).join(', ')} of the ${savings.length} largest entries (goal < 1 %) ` +
        `${savings.every((s) => s < 0.01) ? 'MET' : 'NOT MET'}; zstd -19 saves ${(100 * strong).toFixed(3)} % of the largest`,
    );
  } finally {
    await backend.close();
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
