// The block-granular figures `kv-cache compare` sets side by side (issue 22): a table after the
// headline figures when any run is block-granular, runs without blocks n/a. No trial statistic
// measures them, so their differences are never called significant.
import type { HeadlineFigure } from './headline.js';
import type { ReportRun } from './run-input.js';
import type { KvBlocksJson } from '../kv-blocks-schema.js';

const figure = (key: string, label: string, unit: string, digits: number, pick: (k: KvBlocksJson) => number | null): HeadlineFigure => ({
  key,
  label,
  unit,
  digits,
  source: `kvcache_bench.kv_blocks (${key})`,
  value: (doc: ReportRun) => {
    const k = doc.kvcache_bench.kv_blocks;
    return k === undefined ? null : pick(k);
  },
});

const pct = (x: number | null): number | null => (x === null ? null : x * 100);

export const KV_BLOCK_FIGURES: readonly HeadlineFigure[] = [
  figure('kv_block_tokens', 'Block size', 'tokens', 0, (k) => k.block_tokens),
  figure('kv_token_hit_rate', 'Token hit rate', '%', 1, (k) => pct(k.token_hit_rate.total)),
  figure('kv_token_hit_rate_storage', 'Token hit rate, storage', '%', 1, (k) => pct(k.token_hit_rate.storage)),
  figure('kv_ideal_token_hit_rate', 'Ideal token hit rate', '%', 1, (k) => pct(k.ideal.token_hit_rate)),
  figure('kv_block_reads_per_sec', 'Block reads', 'blocks/s', 1, (k) => k.block_reads_per_sec),
  figure('kv_block_writes_per_sec', 'Block writes', 'blocks/s', 1, (k) => k.block_writes_per_sec),
];

/** True when any run is block-granular (the table is shown then). */
export function anyKvBlocks(runs: ReadonlyArray<{ readonly doc: ReportRun }>): boolean {
  return runs.some((r) => r.doc.kvcache_bench.kv_blocks !== undefined);
}
