// fio: installing it when missing, and the command line of one job.
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { KiB } from '../../src/util/units.js';
import type { Direction } from './disk-window.js';

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Installs fio with apt-get when missing; exits 1 with the reason (prefixed by `script`) when that fails. */
export function ensureFio(script: string): void {
  if (hasCommand('fio')) return;
  const fail = (why: string): never => {
    console.error(`${script}: cannot install fio: ${why}`);
    process.exit(1);
  };
  console.log('fio not found: running `apt-get update && apt-get install -y fio`');
  const r = spawnSync('sh', ['-c', 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y fio'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.error !== undefined) fail(r.error.message);
  if (r.status !== 0) fail(`apt-get exited with ${r.status ?? r.signal ?? 'unknown status'} (root and network access are needed)`);
  if (!hasCommand('fio')) fail('apt-get reported success but fio is still not on PATH');
}

export function fioVersion(): string {
  return spawnSync('fio', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '?';
}

export interface FioJob {
  readonly name: string;
  readonly dir: string;
  readonly rw: Direction;
  readonly engine: 'psync' | 'libaio';
  readonly numjobs: number;
  readonly iodepth: number;
  readonly sizeBytes: number;
  readonly extra: readonly string[];
}

/**
 * fio arguments for `job` with O_DIRECT I/O of `ioBytes`: a timed run of `seconds` writing its JSON
 * report to `output`, or, without an output, only the creation of its files.
 */
export function fioArgs(job: FioJob, ioBytes: number, seconds: number, output: string | undefined): string[] {
  const args = [
    `--name=${job.name}`,
    `--directory=${job.dir}`,
    `--rw=${job.rw}`,
    `--bs=${ioBytes / KiB}k`,
    '--direct=1',
    `--ioengine=${job.engine}`,
    `--numjobs=${job.numjobs}`,
    `--size=${job.sizeBytes}`,
    ...job.extra,
  ];
  if (job.engine === 'libaio') args.push(`--iodepth=${job.iodepth}`);
  if (output === undefined) return [...args, '--create_only=1'];
  return [
    ...args,
    '--time_based',
    `--runtime=${seconds}`,
    ...(job.rw === 'write' ? ['--fsync_on_close=1'] : []),
    '--group_reporting',
    '--output-format=json',
    `--output=${output}`,
  ];
}

const NR_HUGEPAGES = '/proc/sys/vm/nr_hugepages';

/** Huge pages reserved for fio's buffers (`--iomem=shmhuge`), and how to give them back. */
export interface HugePageReservation {
  /** fio flags that use them; empty when the reservation failed (fio then uses its default buffers). */
  readonly fioFlags: readonly string[];
  readonly note: string;
  release(): Promise<void>;
}

/**
 * Reserves `pages` more 2 MiB huge pages (root). Why: O_DIRECT of a buffer in 4 KiB pages is split by a
 * queue's segment limit (254 segments on virtio-blk: ~1 MiB requests), while kv-cache's buffer slabs
 * are in transparent huge pages (src/data/huge-pages.ts) and reach the device in whole 4 MiB requests —
 * on a virtual disk that alone changed fio's reads from 1.0 to 2.3 GiB/s. Buffers in huge pages give
 * fio requests of the same size as kv-cache's.
 */
export async function reserveHugePages(pages: number): Promise<HugePageReservation> {
  const none = (note: string): HugePageReservation => ({ fioFlags: [], note, release: async () => undefined });
  let before: number;
  try {
    before = Number((await readFile(NR_HUGEPAGES, 'utf8')).trim());
    await writeFile(NR_HUGEPAGES, String(before + pages));
    const now = Number((await readFile(NR_HUGEPAGES, 'utf8')).trim());
    if (now < before + pages) {
      await writeFile(NR_HUGEPAGES, String(before));
      return none(`only ${now - before} of ${pages} huge pages could be reserved: fio uses its default buffers (smaller device requests)`);
    }
  } catch (e) {
    return none(
      `huge pages not reserved (${e instanceof Error ? e.message : String(e)}): fio uses its default buffers (smaller device requests)`,
    );
  }
  return {
    fioFlags: ['--iomem=shmhuge'],
    note: `${pages} huge pages reserved for fio's buffers (--iomem=shmhuge), released at the end`,
    release: () => writeFile(NR_HUGEPAGES, String(before)),
  };
}
