// The per-second series (issues 13 and 15): the run's `kvcache_bench.timeline` and the cache dir
// device's `kvcache_bench.device_telemetry`, kept apart from results-schema.ts, which includes them.
import * as z from 'zod';
import { bytes, count } from './schema-units.js';

const nullMs = (what: string) => z.number().nonnegative().nullable().describe(`${what} (ms); null when the interval had none`);

const IntervalLatencySchema = z
  .strictObject({
    count: count('operations completed in the interval'),
    p50: nullMs('median'),
    p95: nullMs('95th percentile'),
    p99: nullMs('99th percentile'),
    max: nullMs('slowest'),
  })
  .describe("Latency of the interval's operations (interval HDR histogram)");

const TimelineTierSchema = z.strictObject({
  read_bytes: bytes('KV bytes read in the interval: hits served plus entries demoted out'),
  write_bytes: bytes('KV bytes written in the interval: entries placed plus entries demoted in'),
  read_ops: count('reads completed in the interval (hits plus demotions out)'),
  write_ops: count('writes completed in the interval (placements plus demotions in)'),
  occupancy_bytes: bytes('KV bytes of the entries the tier held at the sample instant'),
  evictions: count('entries that left the tier in the interval (demoted down or deleted to make room)'),
});

export const TimelineSchema = z
  .strictObject({
    interval_sec: z.literal(1),
    points: z.array(
      z.strictObject({
        t_sec: z.number().nonnegative().describe('end of the interval, seconds since the measured window started'),
        duration_sec: z.number().nonnegative().describe("the interval's real length (s); the last one may be shorter"),
        requests_completed: count('requests completed in the interval'),
        tokens_per_sec: z.number().nonnegative().describe('tokens generated in the interval ÷ duration_sec'),
        hit_rate: z.number().min(0).max(1).nullable().describe('cache hits ÷ lookups in the interval; null with no lookups'),
        users: count('active users at the sample instant'),
        in_flight_ops: count('tier operations in flight at the sample instant (writes, demotions, hit reads)'),
        queue_wait_ms_p95: nullMs('95th percentile queue wait of the requests dequeued in the interval'),
        evictions: count('entries moved down or dropped (any tier) in the interval'),
        tiers: z.partialRecord(z.enum(['gpu', 'cpu', 'storage']), TimelineTierSchema).describe("one key per tier of the run's hierarchy"),
        storage_read_latency_ms: IntervalLatencySchema.describe('storage-tier reads completed in the interval (hits and demotions out)'),
        storage_write_latency_ms: IntervalLatencySchema.describe(
          'storage-tier writes completed in the interval (placements and demotions in)',
        ),
      }),
    ),
  })
  .describe(
    'One point per second of the measured window; the points add up to the run totals (the last, shorter point covers the rest). Empty points when the window was shorter than 1 s',
  );
export type TimelineJson = z.output<typeof TimelineSchema>;

const perSec = (what: string, unit: string) => z.number().nonnegative().describe(`${what} (${unit})`);
const nullable = (what: string) => z.number().nonnegative().nullable().describe(`${what}; null without such requests`);

export const DeviceTelemetrySchema = z
  .strictObject({
    device: z.string().describe("kernel name of the cache dir's block device, e.g. vda"),
    source: z.string().describe('the sampled file, e.g. /sys/block/vda/stat'),
    interval_sec: z.literal(1),
    points: z.array(
      z.strictObject({
        t_sec: z.number().nonnegative().describe('end of the interval, seconds since the measured window started'),
        duration_sec: z.number().nonnegative().describe("the interval's real length (s)"),
        read_iops: perSec('reads completed', 'requests/s'),
        write_iops: perSec('writes completed', 'requests/s'),
        read_bytes_per_sec: perSec('bytes read (sectors × 512)', 'bytes/s'),
        write_bytes_per_sec: perSec('bytes written (sectors × 512)', 'bytes/s'),
        in_flight: count('requests in flight at the sample instant'),
        utilization_pct: z.number().min(0).max(100).describe('io_ticks growth ÷ interval × 100 (%)'),
        avg_queue_depth: z.number().nonnegative().describe('time_in_queue growth ÷ interval: mean requests in flight'),
        avg_read_request_bytes: nullable('bytes read ÷ reads completed (bytes)'),
        avg_write_request_bytes: nullable('bytes written ÷ writes completed (bytes)'),
        read_await_ms: nullable('read ticks ÷ reads completed: queue + device time per read (ms)'),
        write_await_ms: nullable('write ticks ÷ writes completed (ms)'),
      }),
    ),
    summary: z
      .strictObject({
        read_bytes: bytes('read by the device over the series'),
        write_bytes: bytes('written by the device over the series'),
        read_ops: count('reads completed'),
        write_ops: count('writes completed'),
        mean_utilization_pct: z.number().min(0).max(100).describe('io_ticks ÷ span × 100 (%)'),
        max_in_flight: count('most requests in flight at any sample'),
        mean_queue_depth: z.number().nonnegative().describe('time_in_queue ÷ span'),
        read_await_ms: nullable('read ticks ÷ reads (ms)'),
        write_await_ms: nullable('write ticks ÷ writes (ms)'),
      })
      .describe('The whole series: from the window start to its last point'),
  })
  .describe("The cache dir's block device, /sys/block/<dev>/stat sampled every second (whole-device counters: any other I/O to it counts)");
export type DeviceTelemetryJson = z.output<typeof DeviceTelemetrySchema>;
