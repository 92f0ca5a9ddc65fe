// The metadata figures `kv-cache compare` sets side by side (issue 34): for each class any entry used,
// its calls per GiB moved and its p95, and all classes' calls per GiB — a run's own
// (kvcache_bench.metadata_ops) or a merged option's (its ranks' calls ÷ their GiB, latencies pooled).
// A replay's file has the block too. No trial statistic measures them.
import { METADATA_OPS } from '../../metrics/metadata-stats.js';
import type { MetadataOp } from '../../metrics/metadata-stats.js';
import type { MetadataOpsJson } from '../metadata-ops-schema.js';
import { ofBlock } from './headline.js';
import type { HeadlineFigure } from './headline.js';
import { isOption, isReplay, isRun } from './inputs.js';
import type { LoadedInput } from './inputs.js';
import type { MergedOption } from './summary-input.js';

type MergedMetadata = NonNullable<MergedOption['kvcache_bench']['metadata_ops']>;

/** The entry's metadata block (a run's or a replay's), or undefined. */
function blockOf(e: LoadedInput): MetadataOpsJson | undefined {
  if (isRun(e)) return e.doc.kvcache_bench.metadata_ops;
  if (isReplay(e)) return e.replay.kvcache_bench.metadata_ops;
  return undefined;
}

function figure(
  key: string,
  label: string,
  unit: string,
  digits: number,
  of: (m: MetadataOpsJson) => number | null,
  ofMerged: (m: MergedMetadata) => number | null,
): HeadlineFigure {
  return {
    key,
    label,
    unit,
    digits,
    source: `kvcache_bench.metadata_ops (${key})`,
    value: (doc) => ofBlock(doc.kvcache_bench.metadata_ops, of),
    ofReplay: (r) => ofBlock(r.kvcache_bench.metadata_ops, of),
    ofMerged: (o) => ofBlock(o.kvcache_bench.metadata_ops, ofMerged),
  };
}

const opFigures = (op: MetadataOp): HeadlineFigure[] => [
  figure(
    `metadata_${op}_per_gib`,
    `${op[0].toUpperCase()}${op.slice(1)}s per GiB moved`,
    '/GiB',
    1,
    (m) => m[op].per_gib_moved,
    (m) => m[op].per_gib_moved,
  ),
  figure(
    `metadata_${op}_p95`,
    `${op[0].toUpperCase()}${op.slice(1)} p95`,
    'ms',
    3,
    (m) => (m[op].count > 0 ? m[op].latency_ms.p95 : null),
    (m) => m[op].latency.p95_ms,
  ),
];

const TOTAL: HeadlineFigure = figure(
  'metadata_per_gib',
  'Metadata ops per GiB moved',
  '/GiB',
  1,
  (m) => m.per_gib_moved,
  (m) => m.per_gib_moved,
);

/** The classes any entry used, two rows each, then the sum per GiB; empty when no entry recorded a metadata call. */
export function metadataFigures(entries: readonly LoadedInput[]): HeadlineFigure[] {
  const used = METADATA_OPS.filter((op) =>
    entries.some((e) => {
      const m = isOption(e) ? e.merged.kvcache_bench.metadata_ops : blockOf(e);
      return m != null && m[op].count > 0;
    }),
  );
  return used.length === 0 ? [] : [...used.flatMap(opFigures), TOTAL];
}
