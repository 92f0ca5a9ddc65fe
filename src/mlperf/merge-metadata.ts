// What the merged summary says of the ranks' metadata operations (issue 34; kvcache_bench.metadata_ops
// of each rank): per class the calls of every rank summed, their rates summed (the ranks ran at once:
// the cluster's rate), their latencies pooled from every rank's histogram (a p95 of every call, not a
// max of p95s), and the sum per GiB every rank moved. Pure: rank documents in, figures out.
import { LatencyHistogram } from '../metrics/latency.js';
import { METADATA_OPS } from '../metrics/metadata-stats.js';
import type { MetadataOp } from '../metrics/metadata-stats.js';
import type { ResultsDocument } from '../report/results-schema.js';
import { GiB } from '../util/units.js';
import { pooledOf } from './pooled.js';
import type { PooledPercentiles } from './pooled.js';

export interface MergedMetadataOp {
  readonly count: number;
  readonly failed: number;
  /** The ranks' own rates (each over its window) summed. */
  readonly per_second: number;
  /** count ÷ GiB every rank's storage tier moved; null when nothing moved. */
  readonly per_gib_moved: number | null;
  readonly latency: PooledPercentiles;
}

export type MergedMetadata = {
  /** Ranks with a metadata_ops block (trace-mode ranks and files before schema 2.8.0 have none). */
  readonly ranks: number;
  readonly total: number;
  readonly failed: number;
  readonly per_second: number;
  readonly per_gib_moved: number | null;
} & Readonly<Record<MetadataOp, MergedMetadataOp>>;

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * The metadata figures of `docs` together; null when none has the block. `trials`: how many trials the
 * documents span, whose rates are sequential, not concurrent (a rate is the ranks' sum, averaged over trials).
 * A histogram that does not decode is left out of the percentiles (collect.ts names it); its count stays.
 */
export function mergedMetadata(docs: readonly ResultsDocument[], trials = 1): MergedMetadata | null {
  const blocks = docs.flatMap((d) => (d.kvcache_bench.metadata_ops !== undefined ? [d.kvcache_bench.metadata_ops] : []));
  if (blocks.length === 0) return null;
  const moved = sum(docs.filter((d) => d.kvcache_bench.metadata_ops !== undefined).map(movedBytes)) / GiB;
  const perGib = (n: number): number | null => (moved > 0 ? n / moved : null);
  const rate = (xs: readonly number[]): number => sum(xs) / Math.max(1, trials);
  const ops = Object.fromEntries(
    METADATA_OPS.map((op): [MetadataOp, MergedMetadataOp] => {
      const count = sum(blocks.map((b) => b[op].count));
      const decodable = blocks.filter((b) => LatencyHistogram.problemOf(b[op].histogram) === undefined);
      return [
        op,
        {
          count,
          failed: sum(blocks.map((b) => b[op].failed)),
          per_second: rate(blocks.map((b) => b[op].per_second)),
          per_gib_moved: perGib(count),
          latency: pooledOf(decodable.map((b) => ({ encoded: b[op].histogram }))),
        },
      ];
    }),
  ) as Record<MetadataOp, MergedMetadataOp>;
  const total = sum(blocks.map((b) => b.total));
  return {
    ranks: blocks.length,
    total,
    failed: sum(blocks.map((b) => b.failed)),
    per_second: rate(blocks.map((b) => b.per_second)),
    per_gib_moved: perGib(total),
    ...ops,
  };
}

/** What a rank's storage tier read and wrote over its window (the denominator of its per-GiB figures). */
function movedBytes(d: ResultsDocument): number {
  return d.kvcache_bench.storage_bytes.read_bytes + d.kvcache_bench.storage_bytes.written_bytes;
}

/** The ranks' metadata histograms that do not decode, one line each (the merge leaves them out of its percentiles). */
export function badMetadataHistograms(doc: ResultsDocument): string[] {
  const m = doc.kvcache_bench.metadata_ops;
  if (m === undefined) return [];
  return METADATA_OPS.flatMap((op) => {
    const problem = LatencyHistogram.problemOf(m[op].histogram);
    return problem === undefined ? [] : [`metadata_ops.${op}.histogram left out of the pooled percentiles (${problem})`];
  });
}
