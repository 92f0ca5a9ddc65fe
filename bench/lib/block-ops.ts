// Block operations per CPU second (issue 34): how many small KV-block reads and writes the harness can
// drive per second of its own CPU, so that a layout with one file per block measures the file system
// and not us. One run: a Mooncake trace replayed closed loop, unpaced, with a model of 32 bytes per
// token (16 KiB blocks of 512 tokens, one file each), storage only, flat layout, in a directory the
// caller provides (a RAM-backed block device for the harness's own ceiling).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FloorFigures } from './block-ops-floor.js';
import type { FileCalls } from '../../src/settings/choices.js';
import { field, num, readJson, str } from './json.js';
import { runKvCache, runNodeScript, storageOnlyArgs } from './kv-cache.js';

/** A model of 32 bytes per token: 2 (K, V) × 1 layer × 1 KV head × 8 dimensions × 2 bytes (bfloat16). */
export const KV32_CONFIG = [
  'model_configs:',
  '  kv32:',
  '    num_layers: 1',
  '    hidden_dim: 64',
  '    num_heads: 8',
  '    kv_heads: 1',
  '    dtype: bfloat16',
  '',
].join('\n');

export interface BlockOpsRun {
  /** The kv-cache bootstrap to run (bin/kv-cache.cjs of the build measured). */
  readonly bin: string;
  /** Where the run's cache directory is made (and removed afterwards). */
  readonly dir: string;
  /** A Mooncake trace (JSON Lines). */
  readonly trace: string;
  readonly seconds: number;
  readonly users: number;
  /** --storage-capacity-gb; 0 = kv-cache's default (95 % of the free space). */
  readonly capacityGiB: number;
  /** The file tier's layout (--kv-layout). */
  readonly layout: string;
  /** More kv-cache flags (e.g. --file-calls fs). */
  readonly extraArgs?: readonly string[];
  /** Environment of the child beyond this process's (e.g. UV_THREADPOOL_SIZE). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface BlockOpsFigures {
  /** Block reads and writes on the storage tier in the measured window (placement writes, hit reads, demotions in). */
  readonly blockOps: number;
  readonly windowSeconds: number;
  /** The process's user + system CPU over the window (every thread: results' cpu_seconds.total). */
  readonly cpuSeconds: number;
  readonly perCpuSecond: number;
  readonly perWallSecond: number;
  /** Share of the window the main thread was busy (results' main_thread_busy_fraction). */
  readonly mainThreadBusy: number;
  readonly ioMode: string;
  /** The run's validity reason codes (empty: VALID). */
  readonly invalidBecause: readonly string[];
}

/** The arguments of one run, for the bench to print and to run. */
export function blockOpsArgs(run: BlockOpsRun, config: string, cacheDir: string, output: string): string[] {
  return [
    ...storageOnlyArgs({ model: 'kv32', users: run.users, seconds: run.seconds, cacheDir, capacityGiB: run.capacityGiB, output, config }),
    '--mooncake-trace',
    run.trace,
    '--trace-speedup',
    '0',
    '--kv-block-tokens',
    '512',
    '--kv-layout',
    run.layout,
    ...(run.extraArgs ?? []),
  ];
}

/** Runs kv-cache once as `run` says and reads its figures from the results file. */
export async function measureBlockOps(run: BlockOpsRun): Promise<BlockOpsFigures> {
  const work = join(run.dir, `block-ops-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const config = join(work, 'kv32.yaml');
    await writeFile(config, KV32_CONFIG);
    const output = join(work, 'results.json');
    const child = await runKvCache(blockOpsArgs(run, config, join(work, 'cache'), output), undefined, {
      bin: run.bin,
      ...(run.env ? { env: run.env } : {}),
    });
    if (child.code !== 0) throw new Error(`kv-cache exited with ${child.code}: ${child.stderr.trim().split('\n').slice(-3).join(' / ')}`);
    return figuresOf(await readJson(output));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The figures of a results document (exported for tests and for other benches' runs). */
export function figuresOf(doc: unknown): BlockOpsFigures {
  const stats = (name: string): number => num(doc, 'summary', 'cache_stats', `tier_storage_${name}_ops`) ?? NaN;
  const blockOps = stats('placement_write') + stats('hit_read') + stats('demote_in');
  const windowSeconds = num(doc, 'kvcache_bench', 'measured_window_sec') ?? NaN;
  const cpuSeconds = num(doc, 'kvcache_bench', 'cpu_seconds', 'total') ?? NaN;
  const reasons = field(doc, 'kvcache_bench', 'validity', 'reasons');
  return {
    blockOps,
    windowSeconds,
    cpuSeconds,
    perCpuSecond: blockOps / cpuSeconds,
    perWallSecond: blockOps / windowSeconds,
    mainThreadBusy: num(doc, 'kvcache_bench', 'main_thread_busy_fraction') ?? NaN,
    ioMode: str(doc, 'kvcache_bench', 'storage_io_mode') ?? 'unknown',
    invalidBecause: Array.isArray(reasons) ? reasons.map((r) => str(r, 'code') ?? '?') : [],
  };
}

/** libuv threads kv-cache gives itself for `users` when UV_THREADPOOL_SIZE is unset (bin/kv-cache.cjs's rule). */
export function kvCachePoolThreads(users: number): number {
  return Math.min(256, Math.max(4, 2 * Math.min(users, 500) + 8));
}

/** The floor loop (block-ops-floor.ts) in a child process with `poolThreads` libuv threads; `calls` native: the same calls as native block-file jobs. */
export async function measureFloor(
  dir: string,
  seconds: number,
  users: number,
  poolThreads: number,
  calls: FileCalls = 'fs',
): Promise<FloorFigures> {
  const script = fileURLToPath(new URL('./block-ops-floor.js', import.meta.url));
  const args = [dir, String(seconds), String(users), calls];
  const child = await runNodeScript(script, args, undefined, { UV_THREADPOOL_SIZE: String(poolThreads) });
  if (child.code !== 0) throw new Error(`the floor loop exited with ${child.code}: ${child.stderr.trim()}`);
  return JSON.parse(child.stdout) as FloorFigures;
}
