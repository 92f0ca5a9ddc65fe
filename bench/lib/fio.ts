// fio: installing it when missing, and the command line of one job.
import { spawnSync } from 'node:child_process';
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
