// The merged pool figures (issue 32): the cluster's token hit rate is every rank's hit tokens over every
// rank's tokens asked (not a mean of rates), the trace's own reuse comes from the rank that passed the
// most of it, the cross-rank share is of the pool's hits, and lookups pool every rank's histogram.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../../src/metrics/latency.js';
import { mergedPool } from '../../src/mlperf/merge-pool.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';

function histogram(ms: readonly number[]): string {
  const h = new LatencyHistogram();
  for (const x of ms) h.recordMs(x);
  return h.snapshot().encoded;
}

interface RankSpec {
  asked: number;
  hitRate: number;
  own: number;
  other: number;
  earlier: number;
  idealAsked: number;
  ideal: number | null;
  lookupsMs: number[];
  published: number;
  races: number;
}

/** Just the two blocks the merge reads, in a results document's places. */
function doc(r: RankSpec): ResultsDocument {
  const origin = (tokens: number) => ({ tokens, blocks: tokens / 100, token_hit_rate: tokens / r.asked });
  return {
    kvcache_bench: {
      kv_blocks: { tokens_asked: r.asked, token_hit_rate: { gpu: 0, cpu: 0, storage: r.hitRate, total: r.hitRate } },
      kv_pool: {
        pool: 'shared',
        route: 'round-robin',
        rank: 0,
        world_size: 2,
        requests_passed: 10,
        requests_served: 5,
        trace_ideal: { tracked: r.ideal !== null, tokens_asked: r.idealAsked, token_hit_rate: r.ideal },
        shared: {
          hits_by_origin: { own: origin(r.own), other_rank: origin(r.other), earlier_run: origin(r.earlier) },
          lookups: { count: r.lookupsMs.length, histogram: histogram(r.lookupsMs) },
          published_blocks: r.published,
          published_bytes: r.published * 1024,
          publish_races: r.races,
          vanished: 1,
        },
      },
    },
  } as unknown as ResultsDocument;
}

test('two ranks: token-weighted hit rate, the widest ideal, origin shares, pooled lookups', () => {
  const a = doc({
    asked: 1000,
    hitRate: 0.5,
    own: 100,
    other: 300,
    earlier: 100,
    idealAsked: 5000,
    ideal: 0.4,
    lookupsMs: [1, 1, 1],
    published: 10,
    races: 2,
  });
  const b = doc({
    asked: 3000,
    hitRate: 0.1,
    own: 0,
    other: 300,
    earlier: 0,
    idealAsked: 6000,
    ideal: 0.45,
    lookupsMs: [3],
    published: 5,
    races: 0,
  });
  const m = mergedPool([a, b], 2);
  assert.ok(m !== null);
  assert.equal(m.ranks, 2);
  assert.equal(m.tokens_asked, 4000);
  assert.equal(m.token_hit_rate, (500 + 300) / 4000);
  assert.equal(m.trace_ideal_token_hit_rate, 0.45, 'the rank that passed the most of the trace');
  assert.deepEqual(m.token_hit_rate_by_origin, { own: 100 / 4000, other_rank: 600 / 4000, earlier_run: 100 / 4000 });
  assert.equal(m.cross_rank_hit_share, 600 / 800);
  assert.equal(m.lookups?.count, 4);
  assert.equal(m.lookups?.per_sec, 2);
  assert.equal(m.lookups?.latency.p50_ms, 1);
  assert.ok(Math.abs((m.lookups?.latency.p99_ms ?? 0) - 3) < 0.01, 'the slowest lookup (HDR: 3 significant digits)');
  assert.deepEqual([m.published_blocks, m.published_bytes, m.publish_races, m.vanished], [15, 15 * 1024, 2, 2]);
});

test('no rank with a pool block: null', () => {
  assert.equal(mergedPool([{ kvcache_bench: {} } as unknown as ResultsDocument], 1), null);
});
