// One rank of a multi-process run, `kvcache_bench.ranks` (issue 14; README "MLPerf submission runs"):
// the barrier, the agreed window and every peer's arrival. Kept apart from results-schema.ts, which
// includes it.
import * as z from 'zod';
import { count, ms } from './schema-units.js';

export const RanksSchema = z.strictObject({
  rank: count('this rank (0-based)'),
  world_size: z.number().int().positive().describe('ranks in the run'),
  launcher: z.string().describe('openmpi, pmi, slurm or kubernetes: whose environment variables gave the rank'),
  world_size_from: z.string().describe('the variable (or --world-size) that gave the world size'),
  host: z.string().describe('host name of this rank'),
  barrier: z
    .strictObject({
      dir: z.string().describe('the shared directory the ranks met in'),
      timeout_sec: z.number().positive().describe('--barrier-timeout (s)'),
      start_wait_ms: ms('from arriving at the start barrier to the agreed start'),
      end_wait_ms: ms('waiting at the end barrier for the other ranks').nullable().describe('null when the end barrier failed'),
      end_problem: z.string().nullable().describe('why the end barrier failed (this rank’s measurement stands); null when it met'),
    })
    .nullable()
    .describe('null for a world of one rank (no barrier)'),
  agreed_start_epoch_ms: z
    .number()
    .nullable()
    .describe('the common start instant decided by rank 0 (ms since the epoch); null without a barrier'),
  agreed_end_epoch_ms: z.number().nullable().describe('agreed start + --duration (ms since the epoch): every rank stops then'),
  window_start_epoch_ms: z.number().describe('when this rank’s measured window opened (ms since the epoch)'),
  window_end_epoch_ms: z.number().describe('window start + measured_window_sec (ms since the epoch): the last I/O completed'),
  start_skew_ms: z.number().nullable().describe('window start − agreed start (ms): how late this rank began; null without a barrier'),
  end_skew_ms: z.number().nullable().describe('window end − agreed end (ms): the tail of I/O in flight at the stop'),
  clock_source: z.string().describe('the clock every epoch time here is read from'),
  peers: z
    .array(
      z.strictObject({
        rank: count('rank'),
        host: z.string(),
        arrived_epoch_ms: z.number().describe('arrival at the start barrier (ms since the epoch)'),
      }),
    )
    .describe('every rank’s arrival at the start barrier, as rank 0 saw them'),
});
export type RanksJson = z.output<typeof RanksSchema>;
