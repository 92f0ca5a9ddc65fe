// The results' `kvcache_bench.cpu_seconds` block (issue 34): what the harness itself cost over the
// measured window — the process's CPU seconds, every thread (libuv's pool, fillers, copy threads) —
// and per GiB the storage tier moved, so a submitter can size clients (upstream asks that client CPU
// not decide results, mlcommons/storage #334) and benches compare it with fio's.
import * as z from 'zod';
import type { HarnessCpu } from '../metrics/result.js';
import { GiB } from '../util/units.js';

const seconds = (what: string): z.ZodNumber => z.number().nonnegative().describe(`${what} (s)`);

export const CpuSecondsSchema = z
  .strictObject({
    user: seconds('user-mode CPU of the whole process over the measured window'),
    system: seconds('kernel-mode CPU of the whole process over the measured window'),
    total: seconds('user + system'),
    gib_moved: z.number().nonnegative().describe('storage tier kv bytes read + written over the window (storage_bytes), in GiB'),
    per_gib_moved: z
      .number()
      .nonnegative()
      .nullable()
      .describe('total ÷ gib_moved: CPU seconds per GiB the storage tier moved (s/GiB); null when nothing moved'),
  })
  .describe(
    "The harness's CPU over the measured window (process.cpuUsage: user and system of every thread of the process); absent before schema 2.7.0",
  );

export type CpuSecondsJson = z.infer<typeof CpuSecondsSchema>;

export function cpuSecondsJson(cpu: HarnessCpu, movedBytes: number): CpuSecondsJson {
  const total = cpu.userSec + cpu.systemSec;
  const gib = movedBytes / GiB;
  return { user: cpu.userSec, system: cpu.systemSec, total, gib_moved: gib, per_gib_moved: gib > 0 ? total / gib : null };
}
