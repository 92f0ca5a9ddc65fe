// The results fields of block-layer tracing (issue 13), kept apart from results-schema.ts, which
// includes them: the reference's root keys `device_latency_tracing` (its 15 histogram names) and
// `fio_workload` (the ini text), and our `kvcache_bench.latency_tracing` (filters, window, exact
// block totals, where the fio values came from, or why there was no tracing).
import * as z from 'zod';
import { HISTOGRAM_NAMES } from '../telemetry/catalog.js';
import type { HistogramName } from '../telemetry/catalog.js';

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const Range = z
  .tuple([z.number(), z.number().nullable()])
  .describe("[lo, hi): bounds in the histogram's unit; hi null for an open-ended top bucket");

export const TracedHistogramSchema = z.strictObject({
  unit: z.enum(['us', 'KiB', 'requests', 'GiB']).describe("the histogram's unit: µs, KiB (1024 bytes), a request count, GiB (2^30) offset"),
  layer: z.enum(['block', 'syscall']).describe('block: requests on the filtered device; syscall: calls of the traced process'),
  description: z.string(),
  buckets: z
    .array(z.strictObject({ range_us: Range, count: count('samples in the bucket') }))
    .describe("the reference's bucket list (it names the bounds range_us whatever the unit)"),
  count: count('samples'),
  p50: z.number().nullable().describe('median, interpolated linearly within its bucket; null without samples'),
  p95: z.number().nullable().describe('95th percentile, interpolated within its bucket'),
  p99: z.number().nullable().describe('99th percentile, interpolated within its bucket'),
  p50_bucket: Range.nullable().describe("the reference's p50: the first bucket whose cumulative count reaches 50 %"),
  p95_bucket: Range.nullable(),
  p99_bucket: Range.nullable(),
  min_bucket: z.number().nullable().describe('lower bound of the lowest non-empty bucket'),
  max_bucket: z.number().nullable().describe('upper bound of the highest non-empty bucket'),
  reason: z.string().nullable().describe('why the histogram has no samples here; null when it has'),
});
export type TracedHistogramJson = z.output<typeof TracedHistogramSchema>;

// One property per histogram name (a record with enum keys would publish `required` without
// `properties`, which strict JSON Schema validators reject).
const histogramShape = Object.fromEntries(HISTOGRAM_NAMES.map((n) => [n, TracedHistogramSchema])) as Record<
  HistogramName,
  typeof TracedHistogramSchema
>;
export const DeviceLatencyTracingSchema = z
  .strictObject(histogramShape)
  .describe("--enable-latency-tracing: the reference's 15 histograms over the measured phase");
export type DeviceLatencyTracingJson = z.output<typeof DeviceLatencyTracingSchema>;

const SizeBuckets = z
  .array(
    z.strictObject({
      range_kib: z.tuple([z.number(), z.number().nullable()]).describe('[lo, hi) KiB (1024 bytes); hi null for an open-ended top bucket'),
      count: count('calls in the bucket'),
    }),
  )
  .describe('a log2 histogram of call sizes');

const DistillInputsSchema = z.strictObject({
  call_sizes: z
    .strictObject({
      read: SizeBuckets.describe("sizes of the process's positioned read calls (what they returned)"),
      write: SizeBuckets.describe("sizes of the process's positioned write calls (what they returned)"),
    })
    .describe("the traced process's own call sizes: bssplit's source when the block layer's does not fit"),
  tool_ops: z
    .strictObject({ reads: count('reads'), writes: count('writes'), source: z.string() })
    .nullable()
    .describe("the tool's own storage operations: rwmixread's source when too few syscalls were traced"),
  nfs: z
    .strictObject({ rsize: count('bytes'), wsize: count('bytes') })
    .nullable()
    .describe('the NFS mount under the traced files (bssplit from rsize/wsize); null when not on NFS'),
});

export const LatencyTracingSchema = z
  .strictObject({
    status: z.enum(['traced', 'unavailable']),
    reason: z.string().nullable().describe('unavailable: the cause and the fix; null when traced'),
    block_filter: z.string().nullable().describe('the device the block probes were filtered on, or "all block devices (why)"'),
    process_id: z.number().int().nullable().describe('the thread group whose syscalls were traced (this run)'),
    window_sec: z.number().nonnegative().nullable().describe('from the probes attached to the stop (s)'),
    block_requests: z
      .strictObject({
        read: count('read requests issued to the device'),
        write: count('write requests issued to the device'),
        read_bytes: count('bytes of the read requests issued'),
        write_bytes: count('bytes of the write requests issued'),
        requeued_reissues: count('issues of a request already in flight (requeued): not counted again above'),
        completed_read: count('read completions in the window, as /proc/diskstats counts them'),
        completed_write: count('write completions in the window'),
        completed_read_bytes: count('bytes of the read completions'),
        completed_write_bytes: count('bytes of the write completions'),
        inflight_counter_at_end: count(
          'the in-flight counter behind qd_read/qd_write when tracing stopped: above the requests really in flight, it has drifted (unpaired issues)',
        ),
        device_time_sec: z.number().nonnegative().describe('summed issue → completion time of the requests whose issue was seen (s)'),
      })
      .nullable()
      .describe('exact block-layer totals of the window (the histograms hold the same requests in buckets)'),
    output_truncated: z.boolean().describe("bpftrace's output was cut off (it had to be killed)"),
    fio: z
      .strictObject({
        size_source: z.enum(['block', 'nfs', 'vfs', 'default']).describe('where bssplit came from'),
        bssplit: z.string(),
        rwmixread: z.number().int().min(0).max(100),
        iodepth: z.number().int().positive().describe("Little's law: device time ÷ window, clamped to [1, 256]"),
        warnings: z.array(z.string()).describe('capture warnings, also in the ini header'),
      })
      .nullable()
      .describe('the distilled fio job (fio_workload) in brief; null when unavailable'),
    distill_inputs: DistillInputsSchema.nullable()
      .optional()
      .describe(
        'what the distiller used besides the 15 histograms, so that distill-fio on these results rebuilds fio_workload; null when unavailable, absent before schema 2.10.0',
      ),
  })
  .describe('Block-layer tracing: filters in force, window, totals; absent without --enable-latency-tracing');
export type LatencyTracingJson = z.output<typeof LatencyTracingSchema>;
