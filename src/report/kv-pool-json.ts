// The results' `kvcache_bench.kv_pool` block (issue 32): the pool and route of a block-granular run as
// rates a reader can compare across runs and ranks. Pure: a function of the RunResult.
import { POOL_ORIGINS } from '../metrics/pool-stats.js';
import type { KvPoolFacts } from '../metrics/result.js';
import type { KvPoolJson } from './kv-pool-schema.js';

const share = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);

/** `tokensAsked`: the rank's own context tokens (kv_blocks.tokens_asked), the denominator of its hit rates. */
export function kvPoolJson(k: KvPoolFacts, elapsedSec: number, tokensAsked: number): KvPoolJson {
  const s = k.stats;
  const ideal = s.traceIdeal;
  const shared = k.shared;
  const lat = s.lookupLatency;
  return {
    pool: k.pool,
    route: k.route,
    rank: k.rank,
    world_size: k.worldSize,
    requests_passed: s.routedSeen,
    requests_served: s.routedServed,
    trace_ideal: {
      tracked: ideal.tracked && s.routedSeen > 0,
      tokens_asked: ideal.tokensAsked,
      token_hit_rate: ideal.tracked && s.routedSeen > 0 ? share(ideal.hitTokens, ideal.tokensAsked) : null,
    },
    shared:
      shared === undefined
        ? null
        : {
            location: shared.atStart.location,
            namespace: shared.atStart.namespace,
            capacity_share_bytes: Number.isFinite(shared.shareBytes) ? shared.shareBytes : null,
            keep_pool: shared.keep,
            at_start: {
              blocks: shared.atStart.blocks,
              block_bytes: shared.atStart.blockBytes,
              stale_temps: shared.atStart.staleTemps,
              stale_temp_bytes: shared.atStart.staleTempBytes,
              stale_temps_removed: shared.atStart.staleTempsRemoved,
            },
            lookups: {
              count: s.lookups,
              found: s.lookupsFound,
              per_sec: elapsedSec > 0 ? s.lookups / elapsedSec : 0,
              latency_ms: { mean: lat.mean, p50: lat.p50, p95: lat.p95, p99: lat.p99, p999: lat.p999, max: lat.max },
              histogram: lat.encoded,
            },
            hits_by_origin: Object.fromEntries(
              POOL_ORIGINS.map((o) => [
                o,
                { tokens: s.hitTokens[o], blocks: s.hitBlocks[o], token_hit_rate: share(s.hitTokens[o], tokensAsked) },
              ]),
            ) as NonNullable<KvPoolJson['shared']>['hits_by_origin'],
            published_blocks: s.published,
            published_bytes: s.publishedBytes,
            publish_races: s.publishRaces,
            discarded_bytes: s.discardedBytes,
            vanished: s.vanished,
            lost_own: s.lostOwn,
          },
  };
}
