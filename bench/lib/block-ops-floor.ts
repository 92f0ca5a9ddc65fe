// The floor under bench:block-ops: the same file calls per block as kv-cache's file tier makes, from
// Node with nothing else — no cache, no payload, no metrics. `users` loops, each writing a new 16 KiB
// block file with O_DIRECT (open, write, fsync on libuv's threadpool, close on the event loop) then
// reading three of its files back (open, read, close): about the trace's mix of a quarter writes.
// Block operations per CPU second of this process is what Node's fs and libuv's threadpool allow on
// the machine; kv-cache cannot do better with the same calls. With `native`, `io_uring` or `threads`
// each block file is one job of the C helper (tiers/block-file.ts: open … close through io_uring or on
// one of its threads), as --file-calls of that name makes them. Run as a child (its CPU is its own):
//   node dist/bench/lib/block-ops-floor.js DIR SECONDS USERS [fs|native|io_uring|threads]   → one JSON line of FloorFigures
import { closeSync, constants as fsc, fsync, mkdirSync, open, read, rmSync, write } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { AlignedSlab } from '../../src/data/aligned.js';
import { BlockFiles } from '../../src/tiers/block-file.js';
import { threadPoolSize } from '../../src/tiers/file-io-gauge.js';

const BLOCK_BYTES = 16384;
const READS_PER_WRITE = 3;

export interface FloorFigures {
  readonly blockOps: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly perCpuSecond: number;
  readonly perWallSecond: number;
  /** Whether the buffers passed the O_DIRECT probe (else the loop ran buffered). */
  readonly direct: boolean;
}

/** One fs callback call as a promise. */
function call<T>(start: (done: (e: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((e, value) => {
      if (e) reject(e);
      else resolve(value);
    });
  });
}

/** Runs the loops for `seconds` in `dir` (a fresh subdirectory, removed afterwards). */
export async function floorLoop(dir: string, seconds: number, users: number, native?: BlockFiles): Promise<FloorFigures> {
  const work = join(dir, `block-ops-floor-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    const { slab, direct } = AlignedSlab.create(2 * users * BLOCK_BYTES, work);
    const flag = direct ? fsc.O_DIRECT : 0;
    const end = performance.now() + seconds * 1000;
    let ops = 0;
    let files = 0;
    const wflags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | flag;
    const rflags = fsc.O_RDONLY | flag;
    /** A new block file written and synced, then closed: one native job, or Node's calls. */
    const writeBlock = async (path: string, out: Uint8Array): Promise<void> => {
      if (native !== undefined) {
        await native.write({ path, flags: wflags, mode: 0o644, data: out, sync: true });
        return;
      }
      const fd = await call<number>((done) => open(path, wflags, 0o644, done));
      await call<number>((done) => write(fd, out, 0, BLOCK_BYTES, 0, done));
      await call<undefined>((done) => fsync(fd, (e) => done(e, undefined)));
      closeSync(fd);
    };
    /** A block file read whole: one native job, or Node's calls. */
    const readBlock = async (path: string, into: Uint8Array): Promise<void> => {
      if (native !== undefined) {
        await native.read({ path, flags: rflags, into });
        return;
      }
      const fd = await call<number>((done) => open(path, rflags, done));
      await call<number>((done) => read(fd, into, 0, BLOCK_BYTES, 0, done));
      closeSync(fd);
    };
    const user = async (u: number): Promise<void> => {
      const out = slab.view(2 * u * BLOCK_BYTES, BLOCK_BYTES);
      const into = slab.view((2 * u + 1) * BLOCK_BYTES, BLOCK_BYTES);
      const mine: string[] = [];
      while (performance.now() < end) {
        const path = join(work, `b${files++}.bin`);
        await writeBlock(path, out);
        mine.push(path);
        ops++;
        for (let r = 0; r < READS_PER_WRITE; r++) {
          await readBlock(mine[(ops * 7 + r) % mine.length] ?? path, into); // spread over this loop's blocks
          ops++;
        }
      }
    };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: users }, (_, u) => user(u)));
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - t0) / 1000;
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return { blockOps: ops, seconds: wall, cpuSeconds, perCpuSecond: ops / cpuSeconds, perWallSecond: ops / wall, direct };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, seconds, users, mode] = process.argv.slice(2);
  if (dir === undefined) throw new Error('usage: block-ops-floor.js DIR SECONDS USERS [fs|native|io_uring|threads]');
  const engine = mode === 'native' ? 'auto' : mode === 'io_uring' || mode === 'threads' ? mode : undefined;
  const jobs = engine !== undefined ? BlockFiles.load(threadPoolSize(), engine) : undefined;
  if (typeof jobs === 'string') throw new Error(jobs);
  try {
    console.log(JSON.stringify(await floorLoop(dir, Number(seconds ?? 10), Number(users ?? 16), jobs)));
  } finally {
    jobs?.close();
  }
}
