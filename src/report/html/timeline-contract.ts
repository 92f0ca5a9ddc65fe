// The per-second series of a results file (`kvcache_bench.timeline` and `kvcache_bench.device_telemetry`,
// issue 15 item 1) as the reports read them: the same fields as results-schema.ts's TimelineSchema and
// DeviceTelemetrySchema, but lenient like the rest of the report's input (run-input.ts), so a file of a
// later minor version with more fields per point still loads; the strict schemas would refuse it.
import * as z from 'zod';

const int = z.number().int().nonnegative();
const nullableNum = z.number().nullable();

const TierSecondSchema = z.object({
  read_bytes: int,
  write_bytes: int,
  read_ops: int,
  write_ops: int,
  occupancy_bytes: int,
  evictions: int,
});

const LatencySecondSchema = z.object({ count: int, p50: nullableNum, p95: nullableNum, p99: nullableNum, max: nullableNum });

export const TimelinePointSchema = z.object({
  t_sec: z.number(),
  duration_sec: z.number().nonnegative(),
  requests_completed: int,
  tokens_per_sec: z.number(),
  hit_rate: nullableNum,
  users: int,
  in_flight_ops: int,
  queue_wait_ms_p95: nullableNum,
  evictions: int,
  tiers: z.partialRecord(z.enum(['gpu', 'cpu', 'storage']), TierSecondSchema).describe('one key per tier of the run'),
  storage_read_latency_ms: LatencySecondSchema,
  storage_write_latency_ms: LatencySecondSchema,
});
export type TimelinePoint = z.output<typeof TimelinePointSchema>;

export const TimelineSchema = z.object({ interval_sec: z.number().positive(), points: z.array(TimelinePointSchema) });
export type Timeline = z.output<typeof TimelineSchema>;

export const DevicePointSchema = z.object({
  t_sec: z.number(),
  duration_sec: z.number().nonnegative(),
  read_iops: z.number(),
  write_iops: z.number(),
  read_bytes_per_sec: z.number(),
  write_bytes_per_sec: z.number(),
  in_flight: int,
  utilization_pct: z.number(),
  avg_queue_depth: z.number(),
  avg_read_request_bytes: nullableNum,
  avg_write_request_bytes: nullableNum,
  read_await_ms: nullableNum,
  write_await_ms: nullableNum,
});
export type DevicePoint = z.output<typeof DevicePointSchema>;

export const DeviceTelemetrySchema = z.object({
  device: z.string(),
  source: z.string(),
  interval_sec: z.number().positive(),
  points: z.array(DevicePointSchema),
  summary: z.object({
    read_bytes: int,
    write_bytes: int,
    read_ops: int,
    write_ops: int,
    mean_utilization_pct: z.number(),
    max_in_flight: int,
    mean_queue_depth: z.number(),
    read_await_ms: nullableNum,
    write_await_ms: nullableNum,
  }),
});
export type DeviceTelemetry = z.output<typeof DeviceTelemetrySchema>;
