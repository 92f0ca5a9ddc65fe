// The run compared with a real trace (--validation-trace), the root `validation` block, kept apart
// from results-schema.ts, which includes it.
import * as z from 'zod';
import { count } from './schema-units.js';

const FigureComparisonSchema = z.strictObject({
  benchmark: z.number().describe("the run's value"),
  trace: z.number().describe("the trace's value"),
  error_pct: z.number().nonnegative().nullable().describe('|benchmark − trace| ÷ trace × 100; null when the trace value is 0'),
  within_5pct: z.boolean(),
});

export const ValidationSchema = z
  .strictObject({
    trace_file: z.string(),
    passed: z.boolean().describe('every figure within tolerance_pct (the reference passed on the average error)'),
    avg_error_pct: z.number().nonnegative().describe("mean of the figures' relative errors (%), the reference's criterion"),
    tolerance_pct: z.number().positive(),
    comparison: z
      .record(z.string(), FigureComparisonSchema)
      .describe('cache_hit_rate (as the reference), read_write_ratio, bytes_per_request, context_tokens_mean/p50/p95'),
    trace_stats: z.strictObject({
      total_requests: count('records in the trace'),
      cache_hit_rate: z.number().min(0).max(1),
      read_write_ratio: z.number().nonnegative().describe('read ÷ max(write, 1) bytes'),
      bytes_per_request: z.number().nonnegative().describe('(read + write) bytes ÷ records'),
      context_tokens_mean: z.number().nonnegative(),
      context_tokens_p50: z.number().nonnegative(),
      context_tokens_p95: z.number().nonnegative(),
      generation_tokens_mean: z.number().nonnegative(),
    }),
  })
  .describe('The run compared with a real trace (--validation-trace); absent without it');
export type ValidationJson = z.output<typeof ValidationSchema>;
