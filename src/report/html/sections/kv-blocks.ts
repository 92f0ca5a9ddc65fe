// Block-granular runs (--kv-block-tokens, --mooncake-trace): token and block hit rates per tier beside
// the workload's own reuse, blocks moved, and the sizes the tiers saw. Runs without blocks are named
// in a note, not drawn as zeros.
import type { LoadedRun } from '../run-input.js';
import type { Section } from './section.js';

const pc = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
const mib = (b: number): string => (b / 2 ** 20).toFixed(2);

export function kvBlocksSection(runs: readonly LoadedRun[]): Section {
  const withBlocks = runs.flatMap((r) => (r.doc.kvcache_bench.kv_blocks !== undefined ? [{ r, k: r.doc.kvcache_bench.kv_blocks }] : []));
  const who = (label: string): string[] => (runs.length > 1 ? [label] : []);
  const runCol = runs.length > 1 ? ['run'] : [];
  const rates = withBlocks.map(({ r, k }) => [
    ...who(r.label),
    `${k.block_tokens} (${mib(k.block_bytes)} MiB)`,
    k.keys === 'trace_hash_ids' ? 'trace hash ids' : 'prefix hash',
    String(k.requests),
    pc(k.token_hit_rate.total),
    pc(k.token_hit_rate.gpu),
    pc(k.token_hit_rate.cpu),
    pc(k.token_hit_rate.storage),
    pc(k.ideal.token_hit_rate),
    pc(k.block_hit_rate.total),
    k.block_reads_per_sec.toFixed(1),
    k.block_writes_per_sec.toFixed(1),
  ]);
  const sizes = withBlocks.flatMap(({ r, k }) =>
    k.sizes.buckets.map((b) => [
      ...who(r.label),
      `≤ ${mib(b.upto_bytes)}`,
      String(b.blocks),
      pc(k.sizes.count > 0 ? b.blocks / k.sizes.count : 0),
    ]),
  );
  const without = runs.filter((r) => r.doc.kvcache_bench.kv_blocks === undefined).map((r) => r.label);
  const notes =
    withBlocks.length === 0
      ? [
          'KV blocks: not a block-granular run (one entry per request, as the reference; --kv-block-tokens N or --mooncake-trace turns blocks on).',
        ]
      : without.length > 0
        ? [`KV blocks: ${without.join(', ')} stored one entry per request.`]
        : [];
  return {
    id: 'kv-blocks',
    title: 'KV blocks (block-granular cache)',
    charts: [],
    tables:
      withBlocks.length === 0
        ? []
        : [
            {
              id: 'kv-block-rates',
              title: "Token hit rate per tier (tokens served ÷ tokens asked) against the workload's own reuse (unlimited capacity)",
              header: [
                ...runCol,
                'block tokens',
                'keys',
                'requests',
                'token hit rate',
                'gpu',
                'cpu',
                'storage',
                'ideal',
                'block hit rate',
                'block reads/s',
                'block writes/s',
              ],
              rows: rates,
            },
            {
              id: 'kv-block-sizes',
              title: 'Sizes of the blocks moved (MiB = 2^20 bytes)',
              header: [...runCol, 'size MiB', 'blocks', 'share'],
              rows: sizes,
            },
          ],
    notes,
  };
}
