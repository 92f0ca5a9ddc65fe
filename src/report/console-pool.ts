// The console's KV POOL section (issue 32; block-granular runs with a shared pool or ranks dividing a
// trace): the pool and route, the trace's own reuse over every request passed, and for a shared pool
// the lookups through the storage, who published the blocks the hits read, publishes and races, and
// what the pool held at start. Pure: lines from the results document.
import type { KvPoolJson } from './kv-pool-schema.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const pc = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
const ms = (x: number): string => x.toFixed(3);

export function kvPoolLines(k: KvPoolJson): string[] {
  const lines = [
    '',
    `### KV POOL (${k.pool}; rank ${k.rank} of ${k.world_size}; route ${k.route}; MiB = 2^20 bytes) ###`,
    `  requests: ${k.requests_served} served here of ${k.requests_passed} passed in trace order`,
    k.trace_ideal.token_hit_rate === null
      ? "  the whole trace's reuse: not tracked (only sources that name their blocks, Mooncake traces, give it)"
      : `  the whole trace's reuse (one unlimited pool for every request passed): token hit rate ${pc(k.trace_ideal.token_hit_rate)}`,
  ];
  const s = k.shared;
  if (s === null) return lines;
  const h = s.hits_by_origin;
  const l = s.lookups;
  lines.push(
    `  pool: ${s.location} (${s.namespace}); this rank's share ${s.capacity_share_bytes === null ? 'unlimited' : `${(s.capacity_share_bytes / GiB).toFixed(3)} GiB`}${s.keep_pool ? '; kept after the run (--keep-pool)' : ''}`,
    `  at start: ${s.at_start.blocks} blocks (${(s.at_start.block_bytes / MiB).toFixed(1)} MiB) from earlier runs; ${s.at_start.stale_temps} temporary files of killed writers${s.at_start.stale_temps_removed > 0 ? ` (${s.at_start.stale_temps_removed} removed)` : ''}`,
    `  pool hits by publisher: this rank ${pc(h.own.token_hit_rate)} (${h.own.blocks} blocks), another rank ${pc(h.other_rank.token_hit_rate)} (${h.other_rank.blocks}), an earlier run ${pc(h.earlier_run.token_hit_rate)} (${h.earlier_run.blocks}) of tokens asked`,
    `  lookups (existence checks on the storage): ${l.count} (${l.found} found), ${l.per_sec.toFixed(1)}/s; ms p50 ${ms(l.latency_ms.p50)}  p95 ${ms(l.latency_ms.p95)}  p99 ${ms(l.latency_ms.p99)}  p99.9 ${ms(l.latency_ms.p999)}  max ${ms(l.latency_ms.max)}`,
    `  published ${s.published_blocks} blocks (${(s.published_bytes / MiB).toFixed(1)} MiB); races lost ${s.publish_races} (${(s.discarded_bytes / MiB).toFixed(1)} MiB discarded); vanished before read ${s.vanished}; own blocks removed by others ${s.lost_own}`,
  );
  return lines;
}
