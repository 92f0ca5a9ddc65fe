// The harness's own account of the measured window — the payload generator
// (`kvcache_bench.payload_generation`) and the file tier's threadpool and staging buffers
// (`kvcache_bench.file_io`) — kept apart from results-schema.ts, which includes them: a high share
// here makes the verdict say harness_saturated.
import * as z from 'zod';

export const PayloadGenerationSchema = z.strictObject({
  filler: z
    .string()
    .optional()
    .describe(
      "who filled the payload buffers: native jobs on libuv's threadpool, or worker threads (with why not natively); absent before schema 2.6.0",
    ),
  stamped_bytes: z.number().int().min(0).describe("bytes made by rewriting the 512-byte blocks' stamps of a reused buffer (bytes)"),
  copied_bytes: z.number().int().min(0).describe('bytes made by a full copy from the random source (bytes)'),
  write_wait_ms: z
    .number()
    .min(0)
    .describe("milliseconds the CPU- and storage-tier writes waited for payload bytes, summed over writes; in no write's time (ms)"),
  chunks_waited_for: z.number().int().min(0).describe('payload chunks a write had to wait for'),
  write_wait_share: z
    .number()
    .min(0)
    .max(1)
    .describe(
      'write_wait_ms ÷ (write_wait_ms + the time of the writes that take payload bytes), 0–1; over 0.1 the verdict says harness_saturated',
    ),
});
export type PayloadGenerationJson = z.output<typeof PayloadGenerationSchema>;

export const FileIoSchema = z.strictObject({
  pool_threads: z.number().int().min(1).describe("threads in libuv's pool, where every file call runs (UV_THREADPOOL_SIZE)"),
  max_in_flight: z.number().int().min(0).describe("most of the file tier's calls in flight at once"),
  queued_ms: z.number().min(0).describe('milliseconds during which more calls were in flight than the pool has threads (ms)'),
  queued_share: z
    .number()
    .min(0)
    .max(1)
    .describe('queued_ms ÷ the measured window, 0–1: the queueing is inside the latencies; over 0.1 the verdict says harness_saturated'),
  calls_queued: z.number().int().min(0).describe('calls that started while every thread was taken'),
  staging_wait_ms: z
    .number()
    .min(0)
    .describe("milliseconds storage operations waited for a staging buffer, summed; in no operation's time (ms)"),
  staging_waits: z.number().int().min(0).describe('operations that had to wait for one'),
  staging_wait_share: z
    .number()
    .min(0)
    .max(1)
    .describe(
      "staging_wait_ms ÷ (staging_wait_ms + the storage reads' and writes' time), 0–1; over 0.1 the verdict says harness_saturated",
    ),
});
export type FileIoJson = z.output<typeof FileIoSchema>;
