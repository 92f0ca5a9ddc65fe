// The results' `kvcache_bench.metadata_ops` block (issue 34): the storage tier's metadata calls as rates
// over the measured window and per GiB it moved. Pure: a function of the recorded figures.
import { METADATA_OPS } from '../metrics/metadata-stats.js';
import type { MetadataOp, MetadataStatsSnapshot } from '../metrics/metadata-stats.js';
import { GiB } from '../util/units.js';
import type { MetadataOpsJson } from './metadata-ops-schema.js';

/** `elapsedSec`: the measured window; `movedBytes`: what the storage tier read and wrote in it. */
export function metadataOpsJson(m: MetadataStatsSnapshot, elapsedSec: number, movedBytes: number): MetadataOpsJson {
  const gib = movedBytes / GiB;
  const perSecond = (n: number): number => (elapsedSec > 0 ? n / elapsedSec : 0);
  const perGib = (n: number): number | null => (gib > 0 ? n / gib : null);
  const ops = Object.fromEntries(
    METADATA_OPS.map((op) => {
      const f = m[op];
      const l = f.latency;
      return [
        op,
        {
          count: f.count,
          failed: f.failed,
          per_second: perSecond(f.count),
          per_gib_moved: perGib(f.count),
          latency_ms: { mean: l.mean, p50: l.p50, p95: l.p95, p99: l.p99, p999: l.p999, max: l.max },
          histogram: l.encoded,
        },
      ];
    }),
  ) as Pick<MetadataOpsJson, MetadataOp>;
  const total = METADATA_OPS.reduce((n, op) => n + m[op].count, 0);
  const failed = METADATA_OPS.reduce((n, op) => n + m[op].failed, 0);
  return { ...ops, total, failed, per_second: perSecond(total), per_gib_moved: perGib(total) };
}
