// The storage tier's metadata operations over the measured window (issue 34; docs/storage-io.md#the-metadata-bill):
// per class (create, rename, link, unlink, lookup, mkdir) how many calls the storage carried out, how
// many it refused, and the time of the ones it carried out. A failed call changed nothing, so its time
// would mix refusals (often instant) into the latencies of real work: it is counted apart.
import { METADATA_OPS } from '../tiers/metadata-ops.js';
import type { MetadataOp } from '../tiers/metadata-ops.js';
import { LatencyHistogram } from './latency.js';
import type { LatencySnapshot } from './latency.js';

export { METADATA_OPS };
export type { MetadataOp };

/** One class's figures: calls carried out, calls refused, and the times of the first. */
export interface MetadataOpFigures {
  readonly count: number;
  readonly failed: number;
  readonly latency: LatencySnapshot;
}

export type MetadataStatsSnapshot = Readonly<Record<MetadataOp, MetadataOpFigures>>;

interface OpCounters {
  count: number;
  failed: number;
  readonly latency: LatencyHistogram;
}

const emptyCounters = (): Record<MetadataOp, OpCounters> =>
  Object.fromEntries(METADATA_OPS.map((op) => [op, { count: 0, failed: 0, latency: new LatencyHistogram() }])) as Record<
    MetadataOp,
    OpCounters
  >;

/** Per-class counters of a run's metadata calls, reset with the Recorder after preparation. */
export class MetadataStats {
  private readonly ops = emptyCounters();

  /** One call of class `op` that took `ms`; `ok` false: the storage refused it. */
  record(op: MetadataOp, ms: number, ok: boolean): void {
    const c = this.ops[op];
    if (!ok) {
      c.failed++;
      return;
    }
    c.count++;
    c.latency.recordMs(ms);
  }

  reset(): void {
    for (const op of METADATA_OPS) {
      const c = this.ops[op];
      c.count = 0;
      c.failed = 0;
      c.latency.reset();
    }
  }

  snapshot(): MetadataStatsSnapshot {
    return Object.fromEntries(
      METADATA_OPS.map((op) => {
        const c = this.ops[op];
        return [op, { count: c.count, failed: c.failed, latency: c.latency.snapshot() }];
      }),
    ) as Record<MetadataOp, MetadataOpFigures>;
  }
}
