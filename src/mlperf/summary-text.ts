// The merged summary as console lines: per option upstream's scored tuple, then ours beside it.
// A pure function of the summary document (MiB = 2^20 bytes, GiB = 2^30).
import { inert } from '../util/safe-text.js';
import { GiB, MiB } from '../util/units.js';
import type { HostDevice, RunSummary } from './merge.js';
import type { MergedPool } from './merge-pool.js';
import type { MergedMetadata } from './merge-metadata.js';
import { METADATA_OPS } from '../metrics/metadata-stats.js';

const fmt = (n: number | null, digits = 1): string => (n === null ? 'n/a' : n.toFixed(digits));
const mib = (bytesPerSec: number | null): string => (bytesPerSec === null ? 'n/a' : `${(bytesPerSec / MiB).toFixed(1)} MiB/s`);

const pc = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);

/** A trial's pool line: the cluster's token hit rate against the trace's own, and what sharing bought. */
function poolLines(p: MergedPool | null, trial: number | undefined): string[] {
  if (p === null) return [];
  const which = trial !== undefined ? ` (trial ${trial})` : '';
  const lines = [
    `  kv pool${which}: ${p.pool}, route ${p.route}, ${p.ranks} rank(s): token hit rate ${pc(p.token_hit_rate)} of the trace's own ${pc(p.trace_ideal_token_hit_rate)}`,
  ];
  if (p.token_hit_rate_by_origin !== null && p.lookups !== null) {
    const o = p.token_hit_rate_by_origin;
    lines.push(
      `    from blocks published by: the same rank ${pc(o.own)}, another rank ${pc(o.other_rank)}, an earlier run ${pc(o.earlier_run)} (cross-rank share of pool hits ${pc(p.cross_rank_hit_share)})`,
      `    lookups ${p.lookups.count} (${fmt(p.lookups.per_sec)}/s), p50 ${fmt(p.lookups.latency.p50_ms, 3)} ms, p95 ${fmt(p.lookups.latency.p95_ms, 3)} ms, p99 ${fmt(p.lookups.latency.p99_ms, 3)} ms; published ${p.published_blocks} blocks (${mib(p.published_bytes).replace('/s', '')}), races ${p.publish_races}, vanished ${p.vanished}`,
    );
  }
  return lines;
}

/** An option's metadata line: each class its ranks used, with the pooled p95, and the sum per GiB moved. */
function metadataLines(m: MergedMetadata | null): string[] {
  if (m === null) return [];
  const used = METADATA_OPS.filter((op) => m[op].count + m[op].failed > 0);
  if (used.length === 0) return [];
  const each = used.map((op) => `${op} ${m[op].count} (${fmt(m[op].per_second)}/s, p95 ${fmt(m[op].latency.p95_ms, 3)} ms)`);
  return [`  metadata ops (${m.ranks} rank(s)): ${each.join(', ')}; ${fmt(m.per_gib_moved)} per GiB moved`];
}

/** A host's device when its bytes are not simply the ranks' own: what it wrote against theirs and their metadata, and the check. */
function hostLines(hosts: readonly HostDevice[], trial: number | undefined): string[] {
  const gib = (b: number): string => `${(b / GiB).toFixed(3)} GiB`;
  const which = trial !== undefined ? ` (trial ${trial})` : '';
  return hosts
    .filter((h) => h.bytes_check !== 'match')
    .map(
      (h) =>
        `  device ${h.host}:${h.device} (ranks ${h.ranks.join(', ')})${which}: read ${gib(h.read_bytes)} against the ranks' ${gib(h.tool_read_bytes)}, wrote ${gib(h.written_bytes)} against ${gib(h.tool_written_bytes)}` +
        `${h.metadata_write_bytes !== null ? ` + up to ${gib(h.metadata_write_bytes)} of file-system metadata` : ''}: ${h.bytes_check}`,
    );
}

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
    k.trials.forEach((t) => lines.push(...poolLines(t.kv_pool, k.trials.length > 1 ? t.trial : undefined)));
    k.trials.forEach((t) => lines.push(...hostLines(t.device_per_host, k.trials.length > 1 ? t.trial : undefined)));
    lines.push(...metadataLines(k.metadata_ops));
    for (const m of o.missing_files) lines.push(`  missing: ${m}`);
  }
  lines.push(`Summary saved to ${path}`);
  // Paths and reasons name files of a shared directory: shown inert on the console.
  return lines.map(inert);
}
