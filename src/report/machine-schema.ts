// The host a run or replay measured on, `kvcache_bench.machine`, captured once at run time; kept apart
// from results-schema.ts, which includes it in both documents.
import * as z from 'zod';
import { bytes, count } from './schema-units.js';

export const MachineSchema = z
  .strictObject({
    cpu_model: z.string(),
    cpu_count: count('CPUs this process may use (os.availableParallelism)'),
    total_memory_bytes: bytes('physical memory'),
    kernel_release: z.string(),
    node_version: z.string(),
    io_buffers: z
      .string()
      .optional()
      .describe(
        "how the tool's I/O buffers are backed, e.g. '2 MiB transparent huge pages (advised: enabled = madvise)' or '4 KiB pages (why)': " +
          'buffers in 4 KiB pages split O_DIRECT requests at the queue segment limit; absent before schema 2.2.0',
      ),
    cache_dir: z
      .strictObject({
        file_system: z.string(),
        block_device: z
          .string()
          .nullable()
          .describe('the physical device under the cache dir; null when not resolvable (tmpfs, overlay, RAID…)'),
        device_model: z.string().nullable().describe('/sys/block/<dev>/device/model; null when unknown'),
      })
      .nullable()
      .describe('null in trace mode (no cache directory)'),
  })
  .describe('The host, captured once at run time');
export type MachineJson = z.output<typeof MachineSchema>;
