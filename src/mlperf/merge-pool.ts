// What the merged summary says of a block-granular run's pool (issue 32; docs/shared-pool.md#merged):
// the cluster's token hit rate (every rank's hit tokens ÷ every rank's tokens asked) beside the whole
// trace's own reuse, how much of it came from blocks another rank published, and the lookups through
// the storage pooled over every rank (their HDR histograms merged). Pure: rank documents in, figures out.
import { pooledOf } from './pooled.js';
import type { PooledPercentiles } from './pooled.js';
import type { ResultsDocument } from '../report/results-schema.js';

export interface MergedPool {
  readonly pool: 'private' | 'shared';
  readonly route: string;
  readonly ranks: number;
  /** Every rank's context tokens. */
  readonly tokens_asked: number;
  /** Every rank's hit tokens (any tier) ÷ tokens_asked: the cluster's token hit rate. */
  readonly token_hit_rate: number;
  /** The whole trace's reuse (one unlimited pool), from the rank that passed the most of it; null when not tracked. */
  readonly trace_ideal_token_hit_rate: number | null;
  /** Shared pools: hit tokens read from blocks each kind of publisher published ÷ tokens_asked. */
  readonly token_hit_rate_by_origin: { readonly own: number; readonly other_rank: number; readonly earlier_run: number } | null;
  /** Shared pools: of the pool's hit tokens, the share another rank published (what sharing bought). */
  readonly cross_rank_hit_share: number | null;
  readonly lookups: { readonly count: number; readonly per_sec: number; readonly latency: PooledPercentiles } | null;
  readonly published_blocks: number;
  readonly published_bytes: number;
  readonly publish_races: number;
  readonly vanished: number;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** The pool figures of one trial's ranks (`windowSec`: the trial's common window); null when no rank has a kv_pool block. */
export function mergedPool(docs: readonly ResultsDocument[], windowSec: number): MergedPool | null {
  const ranks = docs.flatMap((d) => {
    const p = d.kvcache_bench.kv_pool;
    const b = d.kvcache_bench.kv_blocks;
    return p !== undefined && b !== undefined ? [{ p, b }] : [];
  });
  const first = ranks[0];
  if (first === undefined) return null;
  const asked = sum(ranks.map((r) => r.b.tokens_asked));
  const hit = sum(ranks.map((r) => r.b.token_hit_rate.total * r.b.tokens_asked));
  const widest = ranks.reduce((a, r) => (r.p.trace_ideal.tokens_asked > a.p.trace_ideal.tokens_asked ? r : a), first);
  const shared = ranks.flatMap((r) => (r.p.shared !== null ? [r.p.shared] : []));
  const share = (n: number): number => (asked > 0 ? n / asked : 0);
  const origin = (o: 'own' | 'other_rank' | 'earlier_run'): number => sum(shared.map((s) => s.hits_by_origin[o].tokens));
  const poolHits = origin('own') + origin('other_rank') + origin('earlier_run');
  const lookups = sum(shared.map((s) => s.lookups.count));
  return {
    pool: first.p.pool,
    route: first.p.route,
    ranks: ranks.length,
    tokens_asked: asked,
    token_hit_rate: share(hit),
    trace_ideal_token_hit_rate: widest.p.trace_ideal.token_hit_rate,
    token_hit_rate_by_origin:
      shared.length === 0
        ? null
        : { own: share(origin('own')), other_rank: share(origin('other_rank')), earlier_run: share(origin('earlier_run')) },
    cross_rank_hit_share: shared.length === 0 ? null : poolHits > 0 ? origin('other_rank') / poolHits : 0,
    lookups:
      shared.length === 0
        ? null
        : {
            count: lookups,
            per_sec: windowSec > 0 ? lookups / windowSec : 0,
            latency: pooledOf(shared.map((s) => ({ encoded: s.lookups.histogram }))),
          },
    published_blocks: sum(shared.map((s) => s.published_blocks)),
    published_bytes: sum(shared.map((s) => s.published_bytes)),
    publish_races: sum(shared.map((s) => s.publish_races)),
    vanished: sum(shared.map((s) => s.vanished)),
  };
}
