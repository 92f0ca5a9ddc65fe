// What `kv-cache report` and `kv-cache compare` read from a `kv-cache replay` results file: the replay
// results schema itself (report/results-schema.ts), narrowed to what the reports show and made lenient
// as for runs (run-input.ts). A replay has no requests, tokens, cache hits, per-second series or
// validity verdict: the reports show what it has (operations, bytes, storage latency percentiles,
// device counters, machine) and say "n/a" for the rest, never a number made up for it.
import * as z from 'zod';
import { PERCENTILES } from '../../metrics/cache-stats-schema.js';
import { CacheStatsSchema } from '../../metrics/cache-stats-schema.js';
import type { PercentileName, StoragePartName } from '../../metrics/cache-stats-schema.js';
import { ReplayResultsSchema } from '../results-schema.js';
import { lenient } from './timeline-contract.js';

/** The storage latency families a replay records (placement writes and hit reads, with their device and host parts). */
export const REPLAY_LATENCIES = [
  'storage_read',
  'storage_read_device',
  'storage_read_host',
  'storage_write',
  'storage_write_device',
  'storage_write_host',
] as const satisfies ReadonlyArray<'storage_read' | 'storage_write' | StoragePartName>;
export type ReplayLatency = (typeof REPLAY_LATENCIES)[number];
export type ReplayPercentileKey = `${ReplayLatency}_${PercentileName}_ms`;

const PERCENTILE_KEYS: readonly ReplayPercentileKey[] = REPLAY_LATENCIES.flatMap((n) => PERCENTILES.map(([p]) => `${n}_${p}_ms` as const));
const percentileMask = Object.fromEntries(PERCENTILE_KEYS.map((k) => [k, true])) as Record<ReplayPercentileKey, true>;

const R = ReplayResultsSchema.shape;

/** A replay results document as the reports read it; `schema_version` is any string here (judged with a clear message). */
export const ReportReplaySchema = lenient(
  z.object({
    replay: R.replay,
    elapsed_time: R.elapsed_time,
    summary: z.object({ cache_stats: CacheStatsSchema.pick(percentileMask) }),
    kvcache_bench: R.kvcache_bench.omit({ schema_version: true }).extend({ schema_version: z.string() }),
  }),
);
export type ReportReplay = z.output<typeof ReportReplaySchema>;
