// The merged summary as console lines: per option upstream's scored tuple, then ours beside it.
// A pure function of the summary document (MiB = 2^20 bytes, GiB = 2^30).
import { inert } from '../util/safe-text.js';
import { MiB } from '../util/units.js';
import type { RunSummary } from './merge.js';

const fmt = (n: number | null, digits = 1): string => (n === null ? 'n/a' : n.toFixed(digits));
const mib = (bytesPerSec: number | null): string => (bytesPerSec === null ? 'n/a' : `${(bytesPerSec / MiB).toFixed(1)} MiB/s`);

export function summaryLines(s: RunSummary, path: string): string[] {
  const lines = [
    `MLPerf KV-cache summary: ${s.total_ranks} rank(s) on ${s.host_count} host(s), ${s.trials_per_option} trial(s) per option${s.partial_failure ? ' — PARTIAL (see missing_files)' : ''}`,
  ];
  for (const [id, o] of Object.entries(s.options)) {
    const k = o.kvcache_bench;
    lines.push(
      `Option ${id}: ${o.trial_count} trial(s), ${o.rank_count} rank(s)${k.all_ranks_valid ? '' : ' — not every rank VALID'}`,
      `  upstream: read ${fmt(o.aggregated_read_bandwidth_gbps, 3)} GiB/s (sum of rank bandwidths), device p95 read ${fmt(o.aggregated_device_read_p95_ms)} ms / write ${fmt(o.aggregated_device_write_p95_ms)} ms (max of rank p95s), storage throughput ${fmt(o.aggregated_storage_throughput_tokens_per_sec)} tok/s`,
      `  ours:     read ${mib(k.storage_read_bytes_per_sec)}, write ${mib(k.storage_write_bytes_per_sec)} (all ranks' bytes ÷ common window); device read ${mib(k.device_read_bytes_per_sec)}, write ${mib(k.device_write_bytes_per_sec)}; pooled device p95 read ${fmt(k.storage_read_device_latency.p95_ms)} ms (${k.storage_read_device_latency.count} samples) / write ${fmt(k.storage_write_device_latency.p95_ms)} ms (${k.storage_write_device_latency.count}); start spread ${fmt(k.max_start_spread_ms)} ms`,
    );
    for (const m of o.missing_files) lines.push(`  missing: ${m}`);
  }
  lines.push(`Summary saved to ${path}`);
  // Paths and reasons name files of a shared directory: shown inert on the console.
  return lines.map(inert);
}
