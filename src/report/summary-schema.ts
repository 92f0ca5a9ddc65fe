// The reference's `summary` block of a run's results (its latency blocks, QoS classes, prefix cache,
// autoscaling and multi-turn figures) and the root `throughput_timeline` points, kept apart from
// results-schema.ts, which includes them.
import * as z from 'zod';
import { CacheStatsSchema } from '../metrics/cache-stats-schema.js';
import { count, ms } from './schema-units.js';

export const LatencyBlockSchema = z
  .strictObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number(), p999: z.number(), p9999: z.number() })
  .describe('Latency distribution summary (ms)');
export type LatencyBlock = z.output<typeof LatencyBlockSchema>;

const QosClassSchema = z.union([
  z.strictObject({ no_data: z.literal(true) }).describe('The class saw no request'),
  z.strictObject({
    total_requests: count('completed requests of the class'),
    latency_ms: z
      .strictObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number(), max: z.number() })
      .describe('end-to-end latency (ms)'),
    sla: z.strictObject({
      target_p95_ms: ms('the class target p95'),
      actual_p95_ms: ms('measured p95'),
      compliance: z.number().min(0).max(1).describe('share of requests within the target'),
      met: z.boolean().describe('compliance ≥ 0.95'),
    }),
    violations: count('requests over the target'),
  }),
]);

const PrefixCacheStatsSchema = z.union([
  z.strictObject({}).describe('Prefix caching disabled'),
  z.strictObject({
    prefix_hits: count('requests whose prefix was cached'),
    prefix_misses: count('requests whose prefix was not'),
    system_prompt_reuse: count('system-prompt reuses'),
    common_phrase_reuse: count('common-phrase reuses'),
    bytes_saved: z.number().nonnegative().describe('prefix bytes not written again (bytes)'),
  }),
]);

const ScaleEventSchema = z.strictObject({
  timestamp: z.number().describe('seconds since the measured phase started'),
  mode: z.enum(['qos', 'capacity']),
  action: z.enum(['scale_up', 'scale_down', 'hold', 'cooldown', 'stop']),
  users: count('users after the decision'),
  // Issue 15: both user counts explicitly (the timeline's `users` is the count during the sample).
  users_during: count('users in force while the sample was taken: the load that produced its figures'),
  users_after: count('users from this decision on (= users)'),
  saturation_level: z.number(),
  read_latency_p95_ms: ms('windowed storage read p95'),
  write_latency_p95_ms: ms('windowed storage write p95'),
  throughput_tokens_per_sec: z.number().nonnegative(),
  peak_throughput_tokens_per_sec: z.number().nonnegative().optional().describe('capacity mode only'),
});

const AutoscalingSummarySchema = z.strictObject({
  initial_users: count('users at start'),
  final_users: count('users at the end'),
  total_scale_events: count('scale-ups and scale-downs'),
  peak_user_count: count('users at the throughput peak (capacity mode only)').optional(),
  peak_throughput_tokens_per_sec: z.number().nonnegative().optional().describe('capacity mode only'),
});

export const TimelinePointSchema = z.strictObject({
  timestamp: z.number().describe('seconds since the measured phase started'),
  throughput_tokens_per_sec: z.number().nonnegative(),
  users: count('users that produced the sample (= users_during)'),
  // Issue 15: the same two counts as the decision at this timestamp in autoscaling_stats.
  users_during: count('users in force while the sample was taken'),
  users_after: count('users after the decision taken at this sample'),
});

export const SummarySchema = z.strictObject({
  total_requests: count('completed requests'),
  total_tokens: count('generated tokens'),
  elapsed_time: z.number().nonnegative().describe('the measured window (s)'),
  avg_throughput_tokens_per_sec: z.number().nonnegative().describe('generated tokens ÷ measured window'),
  total_storage_io_time: z.number().nonnegative().describe('sum of per-request storage I/O time (s)'),
  storage_throughput_tokens_per_sec: z
    .number()
    .nonnegative()
    .describe(
      "The reference's formula: generated tokens ÷ the SUM of per-request I/O time over all concurrent requests (a per-request serial rate, not a system rate)",
    ),
  requests_per_second: z.number().nonnegative().describe('completed requests ÷ measured window'),
  end_to_end_latency_ms: LatencyBlockSchema,
  storage_io_latency_ms: LatencyBlockSchema,
  generation_latency_ms: LatencyBlockSchema,
  cache_stats: CacheStatsSchema,
  qos_metrics: z.record(z.string(), QosClassSchema).describe('Per QoS class (interactive, responsive, batch)'),
  prefix_cache_stats: PrefixCacheStatsSchema,
  autoscaling_stats: z.array(ScaleEventSchema).describe('Every autoscaler decision; empty without autoscaling'),
  autoscaling_summary: AutoscalingSummarySchema.nullable().describe('null without autoscaling'),
  multi_turn_stats: z.strictObject({
    cache_hits: count('earlier turns found in the cache'),
    cache_misses: count('earlier turns not found'),
    hit_rate: z.number().min(0).max(1),
  }),
});
export type Summary = z.output<typeof SummarySchema>;
