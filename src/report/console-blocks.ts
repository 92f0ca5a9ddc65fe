// The console's KV BLOCKS section (block-granular runs): what the requests' contexts asked for, what
// the tiers served (the longest present prefix), what the workload's own reuse would have allowed, and
// the blocks moved. Pure: lines from the results document.
import type { KvBlocksJson } from './kv-blocks-schema.js';

const MiB = 2 ** 20;
const pc = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
const mib = (b: number): string => (b / MiB).toFixed(2);

export function kvBlocksLines(k: KvBlocksJson): string[] {
  const keys = k.keys === 'trace_hash_ids' ? "the trace's hash ids" : 'prefix hashes of prompts and conversations';
  const t = k.token_hit_rate;
  const lines = [
    '',
    `### KV BLOCKS (${k.block_tokens} tokens = ${mib(k.block_bytes)} MiB per block; keys: ${keys}; MiB = 2^20 bytes) ###`,
    `  contexts: ${k.requests} requests, ${k.tokens_asked} tokens in ${k.blocks_asked} blocks`,
    `  token hit rate: ${pc(t.total)} (gpu ${pc(t.gpu)}, cpu ${pc(t.cpu)}, storage ${pc(t.storage)})   block hit rate: ${pc(k.block_hit_rate.total)}`,
    k.ideal.tracked
      ? `  the workload's own reuse (unlimited capacity): token hit rate ${pc(k.ideal.token_hit_rate)}, block hit rate ${pc(k.ideal.block_hit_rate)}`
      : "  the workload's own reuse: not tracked (more distinct blocks than remembered)",
  ];
  const ideal = k.ideal.token_hit_rate;
  if (ideal !== null && t.total < ideal - 0.005)
    lines.push(`  achieved ${pc(t.total)} of an ideal ${pc(ideal)}: the cache is too small for the working set (or evicted before reuse)`);
  lines.push(
    `  blocks written ${k.blocks_written} (${k.block_writes_per_sec.toFixed(1)}/s)   read ${k.block_reads_per_sec.toFixed(1)}/s   decode re-reads ${k.decode_block_reads} (${k.decode_block_misses} missed)`,
  );
  if (k.blocks_found_written + k.blocks_not_written > 0)
    lines.push(
      `  missing blocks written by another request meanwhile ${k.blocks_found_written}; not written (no room, failed, run ending) ${k.blocks_not_written}`,
    );
  const sz = k.sizes;
  if (sz.count > 0)
    lines.push(
      `  block sizes MiB: min ${mib(sz.min_bytes)}   mean ${mib(sz.mean_bytes)}   max ${mib(sz.max_bytes)} (${sz.count} blocks moved)`,
    );
  return lines;
}
