// Repeated trials (`kvcache_bench.trials`, --trials) and why a run stopped, kept apart from
// results-schema.ts, which includes them.
import * as z from 'zod';
import { count } from './schema-units.js';

export const StopReasonSchema = z.enum([
  'duration',
  'max_requests',
  'interrupted',
  'failed',
  'capacity_peak',
  'workload_complete',
  'storage_full',
]);

const nullableFigure = (what: string) => z.number().nullable().describe(what);

/** The headline figures of one trial, the ones its spread is judged on. */
export const TrialFiguresSchema = z
  .strictObject({
    storage_bytes_per_sec: nullableFigure(
      'storage tier KV bytes read + written ÷ measured window (bytes/s): the figure the median trial is chosen by',
    ),
    storage_read_bytes_per_sec: nullableFigure('kvcache_bench.storage_bytes.read_bytes_per_sec (bytes/s)'),
    storage_write_bytes_per_sec: nullableFigure('kvcache_bench.storage_bytes.write_bytes_per_sec (bytes/s)'),
    requests_per_second: nullableFigure('summary.requests_per_second (requests/s)'),
    avg_throughput_tokens_per_sec: nullableFigure('summary.avg_throughput_tokens_per_sec (tokens/s)'),
    storage_read_device_p95_ms: nullableFigure('cache_stats.storage_read_device_p95_ms (ms); null without storage reads'),
    storage_write_device_p95_ms: nullableFigure('cache_stats.storage_write_device_p95_ms (ms); null without storage writes'),
    end_to_end_p95_ms: nullableFigure('summary.end_to_end_latency_ms.p95 (ms)'),
    cache_hit_rate: nullableFigure('cache_stats.cache_hit_rate (0–1)'),
  })
  .describe('Headline figures of one trial');
export type TrialFiguresJson = z.output<typeof TrialFiguresSchema>;

const FigureStatsSchema = z.strictObject({
  n: count('trials that had the figure'),
  median: z.number().nullable().describe('middle value; the mean of the two middle values for an even n'),
  min: z.number().nullable(),
  max: z.number().nullable(),
  mean: z.number().nullable(),
  cv: z
    .number()
    .nonnegative()
    .nullable()
    .describe('sample coefficient of variation: standard deviation with the n − 1 denominator ÷ mean; null when n < 2 or the mean is 0'),
});

export const TrialsSchema = z
  .strictObject({
    requested: count('--trials'),
    completed: count('trials that ran to their end (counted in the statistics)'),
    pause_sec: z.number().nonnegative().describe('--trial-pause (s)'),
    median_by: z
      .literal('storage_bytes_per_sec')
      .describe('the figure that picks the median trial (a device ranking ranks by storage bytes/s)'),
    median_trial: z
      .number()
      .int()
      .positive()
      .nullable()
      .describe(
        '1-based number of the median trial, whose full results this document holds: the middle one by median_by, the lower middle one for an even count; null when no trial completed',
      ),
    cv_kind: z.literal('sample').describe('the CVs use the sample standard deviation (n − 1)'),
    cv_warning_threshold: z.number().describe('a figure whose CV exceeds this fraction is named in warnings'),
    runs: z
      .array(
        z.strictObject({
          trial: z.number().int().positive(),
          file: z.string().describe("the trial's full results file"),
          stop_reason: StopReasonSchema,
          counted: z.boolean().describe('false for an interrupted or failed trial: its partial figures are shown, never counted'),
          figures: TrialFiguresSchema,
        }),
      )
      .describe('every trial that started, in order'),
    stats: z.record(z.string(), FigureStatsSchema).describe('per headline figure, over the counted trials'),
    warnings: z.array(z.string()),
  })
  .describe('Repeated trials of the same workload (--trials > 1)');
export type TrialsJson = z.output<typeof TrialsSchema>;
