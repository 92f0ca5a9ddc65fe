// The pool figures `kv-cache compare` sets side by side (issue 32): one table when any entry has a
// pool block — a run's own (kvcache_bench.kv_pool) or a merged option's (all its ranks together, the
// usual way to set a shared pool against private ones). No trial statistic measures them.
import { ofBlock } from './headline.js';
import type { HeadlineFigure } from './headline.js';
import type { ReportRun } from './run-input.js';
import type { MergedOption } from './summary-input.js';
import type { KvPoolJson } from '../kv-pool-schema.js';

type MergedPool = NonNullable<MergedOption['kvcache_bench']['kv_pool']>;

const pct = (x: number | null | undefined): number | null => (x === null || x === undefined ? null : x * 100);

function figure(
  key: string,
  label: string,
  unit: string,
  digits: number,
  ofRun: (k: KvPoolJson, doc: ReportRun) => number | null,
  ofMerged: (m: MergedPool) => number | null,
): HeadlineFigure {
  return {
    key,
    label,
    unit,
    digits,
    source: `kvcache_bench.kv_pool (${key})`,
    value: (doc) => ofBlock(doc.kvcache_bench.kv_pool, (k) => ofRun(k, doc)),
    ofMerged: (o) => ofBlock(o.kvcache_bench.kv_pool, ofMerged),
  };
}

const poolHitTokens = (k: KvPoolJson): number =>
  k.shared === null
    ? 0
    : k.shared.hits_by_origin.own.tokens + k.shared.hits_by_origin.other_rank.tokens + k.shared.hits_by_origin.earlier_run.tokens;

export const KV_POOL_FIGURES: readonly HeadlineFigure[] = [
  figure(
    'pool_token_hit_rate',
    'Token hit rate (all ranks)',
    '%',
    1,
    (_k, doc) => pct(doc.kvcache_bench.kv_blocks?.token_hit_rate.total),
    (m) => pct(m.token_hit_rate),
  ),
  figure(
    'pool_trace_ideal',
    "Trace's own reuse",
    '%',
    1,
    (k) => pct(k.trace_ideal.token_hit_rate),
    (m) => pct(m.trace_ideal_token_hit_rate),
  ),
  figure(
    'pool_cross_rank_share',
    'Pool hits another rank published',
    '%',
    1,
    (k) => (k.shared === null ? null : pct(poolHitTokens(k) > 0 ? k.shared.hits_by_origin.other_rank.tokens / poolHitTokens(k) : 0)),
    (m) => pct(m.cross_rank_hit_share),
  ),
  figure(
    'pool_lookups_per_sec',
    'Pool lookups',
    '/s',
    1,
    (k) => k.shared?.lookups.per_sec ?? null,
    (m) => m.lookups?.per_sec ?? null,
  ),
  figure(
    'pool_lookup_p95',
    'Pool lookup p95',
    'ms',
    3,
    (k) => (k.shared === null || k.shared.lookups.count === 0 ? null : k.shared.lookups.latency_ms.p95),
    (m) => m.lookups?.latency.p95_ms ?? null,
  ),
];

/** True when any entry has a pool block (the table is shown then). */
export function anyKvPool(runs: ReadonlyArray<{ readonly doc: ReportRun } | { readonly merged: MergedOption }>): boolean {
  return runs.some((r) => ('doc' in r ? r.doc.kvcache_bench.kv_pool !== undefined : r.merged.kvcache_bench.kv_pool != null));
}
