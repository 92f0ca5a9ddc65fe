// Shows, with the kernel's own counters, what the file tier's read and write figures mean: in direct
// mode every byte the tier reads comes from the device; in buffered mode reads right after writing are
// served from the page cache (device bytes ≈ 0), which is how the reference's reads flatter a device
// (docs/reference-compat.md#rc-17, #rc-18). Usage: node dist/bench/pagecache.js [--gib 3] [--entry-mib 256] [--dir D]
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DirectSlabs } from '../src/data/aligned.js';
import { SlotPool } from '../src/data/slots.js';
import { payloadBytes } from '../src/data/payload.js';
import { slotPayloadSource } from '../src/data/inline-payload.js';
import { DiskWatch } from '../src/metrics/diskstats.js';
import type { DiskDelta } from '../src/metrics/diskstats.js';
import { FileBackend } from '../src/tiers/file.js';
import type { IoMode } from '../src/settings/choices.js';
import { GiB, MiB } from '../src/util/units.js';
import { queueAttr } from './lib/machine.js';

const SEED = 20260301;
const CHUNK = 4 * MiB;

interface PhaseResult {
  readonly bytes: number;
  readonly hostMs: number;
  readonly deviceMs: number;
  readonly wallMs: number;
  readonly disk: DiskDelta | undefined;
}

type Work = () => Promise<{ bytes: number; hostMs: number; deviceMs: number }>;

async function phase(watch: DiskWatch | undefined, work: Work): Promise<PhaseResult> {
  const t0 = performance.now();
  if (watch === undefined) return { ...(await work()), wallMs: performance.now() - t0, disk: undefined };
  const { result, delta } = await watch.measure(work);
  return { ...result, wallMs: performance.now() - t0, disk: delta };
}

interface Setup {
  readonly dir: string;
  readonly keys: readonly string[];
  readonly entryBytes: number;
  readonly watch: DiskWatch | undefined;
}

/** Writes every entry, then reads every entry back, one operation at a time. */
async function runMode(mode: IoMode, s: Setup): Promise<string[]> {
  const directSlabs = new DirectSlabs();
  const backend = await FileBackend.create({ dir: s.dir, ioMode: mode, chunkBytes: CHUNK, stagingSlots: 2, directSlabs });
  const gen = new SlotPool(1, CHUNK, s.dir, directSlabs);
  try {
    const write = await phase(s.watch, async () => {
      const sum = { bytes: 0, hostMs: 0, deviceMs: 0 };
      for (const key of s.keys) {
        const t = await backend.write(key, slotPayloadSource(gen, SEED, key, s.entryBytes));
        sum.bytes += s.entryBytes;
        sum.hostMs += t.hostMs;
        sum.deviceMs += t.deviceMs;
      }
      return sum;
    });
    let mismatches = 0;
    const read = await phase(s.watch, async () => {
      const sum = { bytes: 0, hostMs: 0, deviceMs: 0 };
      for (const key of s.keys) {
        const head = Buffer.from(payloadBytes(SEED, key, Math.min(CHUNK, s.entryBytes)));
        let first = true;
        const r = await backend.read(key, (c) => {
          if (first && !head.equals(c)) mismatches++;
          first = false;
        });
        sum.bytes += r.bytes;
        sum.hostMs += r.timing.hostMs;
        sum.deviceMs += r.timing.deviceMs;
      }
      return sum;
    });
    const label = `${mode}${backend.effectiveIoMode === mode ? '' : `→${backend.effectiveIoMode}`}`;
    return [
      row(label, 'write', write, (d) => [d.writeBytes, d.writeOps]),
      row(label, 'read', read, (d) => [d.readBytes, d.readOps]),
      `  ${label}: file system ${backend.fileSystem}; zero-copy bytes ${backend.counters.zeroCopyBytes}, ` +
        `staged bytes ${backend.counters.stagedBytes}; first ${CHUNK / MiB} MiB of every entry read back ` +
        (mismatches === 0 ? 'verified' : `MISMATCHED in ${mismatches} entries`),
    ];
  } finally {
    await backend.close();
  }
}

const COLUMNS = [
  ['mode', 9],
  ['phase', 6],
  ['tier bytes', 12],
  ['device bytes', 12],
  ['dev/tier', 8],
  ['tier s', 7],
  ['host s', 7],
  ['device s', 8],
  ['GiB/s tier', 10],
  ['GiB/s wall', 10],
  ['dev ops', 8],
] as const;

function line(cells: readonly string[]): string {
  return cells.map((c, i) => c.padStart(COLUMNS[i]?.[1] ?? 0)).join('  ');
}

function row(mode: string, name: string, p: PhaseResult, pick: (d: DiskDelta) => [number, number]): string {
  const tierMs = p.hostMs + p.deviceMs;
  const rate = (ms: number): string => (ms > 0 ? (p.bytes / GiB / (ms / 1000)).toFixed(2) : 'n/a');
  const [devBytes, devOps] = p.disk === undefined ? [undefined, undefined] : pick(p.disk);
  return line([
    mode,
    name,
    String(p.bytes),
    String(devBytes ?? 'n/a'),
    devBytes === undefined ? 'n/a' : (devBytes / p.bytes).toFixed(3),
    (tierMs / 1000).toFixed(2),
    (p.hostMs / 1000).toFixed(2),
    (p.deviceMs / 1000).toFixed(2),
    rate(tierMs),
    rate(p.wallMs),
    String(devOps ?? 'n/a'),
  ]);
}

function describeDevice(watch: DiskWatch | undefined, dir: string): string {
  if (watch === undefined) return `device: none resolvable for ${dir}, so no device counters`;
  const { name, major, minor, chain } = watch.device;
  const attrs = ['logical_block_size', 'dma_alignment', 'rotational', 'max_sectors_kb'];
  const values = attrs.map((a) => `${a} ${queueAttr(name, a)}`);
  return `device: ${name} (${major}:${minor}, via ${chain.join(' → ')}), ${values.join(', ')}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gib: { type: 'string', default: '3' },
      'entry-mib': { type: 'string', default: '256' },
      dir: { type: 'string' },
    },
  });
  const entryBytes = Math.round(Number(values['entry-mib']) * MiB);
  const count = Math.max(1, Math.round((Number(values.gib) * GiB) / entryBytes));
  const dir = await mkdtemp(join(values.dir ?? tmpdir(), 'kv_pagecache_'));
  try {
    const watch = await DiskWatch.forPath(dir);
    const cpu = cpus();
    console.log(`command: node ${process.argv.slice(1).join(' ')}`);
    console.log(
      `machine: ${cpu[0]?.model ?? 'unknown cpu'} x${cpu.length}, ${(totalmem() / GiB).toFixed(1)} GiB RAM, ` +
        `Linux ${release()}, Node ${process.version}`,
    );
    console.log(describeDevice(watch, dir));
    console.log(
      `dir ${dir}: ${count} entries × ${entryBytes / MiB} MiB = ` +
        `${((count * entryBytes) / GiB).toFixed(2)} GiB, one operation at a time, ` +
        `${CHUNK / MiB} MiB per syscall, write phase then read phase per mode`,
    );
    console.log('device bytes/ops: /proc/diskstats delta of the whole device around the phase');
    console.log("GiB/s tier: bytes / sum of the tier's op times; wall: bytes / phase elapsed");
    console.log('(wall includes payload generation on writes and verification on reads)\n');
    console.log(line(COLUMNS.map(([h]) => h)));
    const keys = Array.from({ length: count }, (_, i) => `pagecache_${i}`);
    const notes: string[] = [];
    for (const mode of ['direct', 'buffered'] as IoMode[]) {
      const [w, r, note] = await runMode(mode, { dir, keys, entryBytes, watch });
      console.log(`${w}\n${r}`);
      if (note !== undefined) notes.push(note);
    }
    console.log(`\n${notes.join('\n')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
