// Shared pools and ranks dividing a trace (issue 32; --kv-pool, --route): per run, the pool, the route,
// the trace's own reuse, who published the blocks the hits read, and the lookups through the storage.
// Runs without a pool block are named in a note, not drawn as zeros.
import type { LoadedRun } from '../run-input.js';
import type { Section } from './section.js';

const pc = (x: number | null | undefined): string => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)} %`);

export function kvPoolSection(runs: readonly LoadedRun[]): Section {
  const withPool = runs.flatMap((r) => (r.doc.kvcache_bench.kv_pool !== undefined ? [{ r, k: r.doc.kvcache_bench.kv_pool }] : []));
  const runCol = runs.length > 1 ? ['run'] : [];
  const who = (label: string): string[] => (runs.length > 1 ? [label] : []);
  const rows = withPool.map(({ r, k }) => {
    const s = k.shared;
    const h = s?.hits_by_origin;
    return [
      ...who(r.label),
      k.pool,
      `${k.rank} of ${k.world_size}`,
      k.route,
      `${k.requests_served} / ${k.requests_passed}`,
      pc(r.doc.kvcache_bench.kv_blocks?.token_hit_rate.total),
      pc(k.trace_ideal.token_hit_rate),
      h === undefined ? 'n/a' : pc(h.own.token_hit_rate),
      h === undefined ? 'n/a' : pc(h.other_rank.token_hit_rate),
      h === undefined ? 'n/a' : pc(h.earlier_run.token_hit_rate),
      s === null ? 'n/a' : s.lookups.per_sec.toFixed(1),
      s === null || s.lookups.count === 0 ? 'n/a' : s.lookups.latency_ms.p95.toFixed(3),
      s === null ? 'n/a' : `${s.publish_races} / ${s.vanished}`,
    ];
  });
  const without = runs.filter((r) => r.doc.kvcache_bench.kv_pool === undefined).map((r) => r.label);
  const notes =
    withPool.length === 0
      ? ['KV pool: no run had a shared pool or ranks dividing a trace (--kv-pool shared, --route with ranks; docs/shared-pool.md).']
      : [
          "Token hit rates are of this rank's tokens asked; the trace's own reuse is one unlimited pool over every request the rank passed (all ranks'). kv-cache merge gives the cluster's rate.",
          ...(without.length > 0 ? [`KV pool: ${without.join(', ')} had none.`] : []),
        ];
  return {
    id: 'kv-pool',
    title: 'KV pool (shared storage, ranks dividing a trace)',
    charts: [],
    tables:
      withPool.length === 0
        ? []
        : [
            {
              id: 'kv-pool-figures',
              title: 'Token hit rates by who published the block, and the lookups through the storage',
              header: [
                ...runCol,
                'pool',
                'rank',
                'route',
                'requests served / passed',
                'token hit rate',
                "trace's own reuse",
                'from own blocks',
                "from another rank's",
                "from an earlier run's",
                'lookups/s',
                'lookup p95 ms',
                'races / vanished',
              ],
              rows,
            },
          ],
    notes,
  };
}
