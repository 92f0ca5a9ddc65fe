// The report's section for the merged summary of an MLPerf run (kv-cache mlperf / kv-cache merge):
// one row per option with our figures (all ranks' bytes ÷ the common window, pooled percentiles) beside
// upstream's (sums and maxima of per-rank figures), the files the merge missed, and every rank's row.
// The ranks' own per-second series are in their results files (trial_*/rank_*/), each a report of its own.
import { MiB } from '../../../util/units.js';
import type { LoadedOption } from '../inputs.js';
import type { Section, TableSpec } from './section.js';

const fixed = (v: number | null, digits: number): string => (v === null ? 'n/a' : v.toFixed(digits));
const mibPerSec = (v: number | null): string => (v === null ? 'n/a' : (v / MiB).toFixed(1));

export function mergedSummarySection(options: readonly LoadedOption[], names: (o: LoadedOption) => string): Section {
  const optionTable: TableSpec = {
    id: 'merged-options',
    title: 'Options: all ranks as one system',
    header: [
      'option',
      'ranks',
      'trials',
      'storage read GiB/s',
      'storage write GiB/s',
      'device read MiB/s',
      'device write MiB/s',
      'read p95 ms (pooled)',
      'write p95 ms (pooled)',
      'upstream read GiB/s (Σ ranks)',
      'upstream write GiB/s (Σ ranks)',
      'upstream read p95 ms (max of ranks)',
      'upstream tok/s (Σ ranks)',
      'start spread ms',
      'every rank VALID',
    ],
    rows: options.map((o) => {
      const m = o.merged;
      const k = m.kvcache_bench;
      return [
        names(o),
        String(m.rank_count),
        String(m.trial_count),
        k.storage_read_gib_per_sec.toFixed(3),
        k.storage_write_gib_per_sec.toFixed(3),
        mibPerSec(k.device_read_bytes_per_sec),
        mibPerSec(k.device_write_bytes_per_sec),
        `${fixed(k.storage_read_device_latency.p95_ms, 3)} (${k.storage_read_device_latency.count} samples)`,
        `${fixed(k.storage_write_device_latency.p95_ms, 3)} (${k.storage_write_device_latency.count} samples)`,
        m.aggregated_read_bandwidth_gbps.toFixed(3),
        m.aggregated_write_bandwidth_gbps.toFixed(3),
        m.aggregated_device_read_p95_ms.toFixed(3),
        m.aggregated_avg_throughput_tokens_per_sec.toFixed(1),
        fixed(k.max_start_spread_ms, 1),
        k.all_ranks_valid ? 'yes' : 'NO',
      ];
    }),
  };
  const rankTable: TableSpec = {
    id: 'merged-ranks',
    title: 'Every rank of every trial',
    header: [
      'option',
      'trial',
      'rank',
      'host',
      'stop',
      'VALID in the run',
      'reasons',
      'read MiB',
      'written MiB',
      'window s',
      'start skew ms',
      'read p95 ms',
      'write p95 ms',
      'file',
    ],
    rows: options.flatMap((o) =>
      o.merged.kvcache_bench.rank_table.map((r) => [
        names(o),
        String(r.trial),
        String(r.rank),
        r.host,
        r.stop_reason,
        r.valid_in_run ? 'yes' : 'NO',
        r.validity_reasons.join(', '),
        (r.storage_read_bytes / MiB).toFixed(1),
        (r.storage_written_bytes / MiB).toFixed(1),
        r.measured_window_sec.toFixed(3),
        fixed(r.start_skew_ms, 1),
        r.storage_read_device_p95_ms.toFixed(3),
        r.storage_write_device_p95_ms.toFixed(3),
        r.file,
      ]),
    ),
    collapsed: true,
  };
  const missing = options.flatMap((o) => o.merged.missing_files.map((f) => `${names(o)}: missing ${f}`));
  const partial = [...new Set(options.filter((o) => o.summary.partial_failure).map((o) => o.path))].map(
    (p) => `${p}: PARTIAL — some rank files or trials are missing (listed below).`,
  );
  return {
    id: 'merged-summary',
    title: 'MLPerf run: merged summary',
    charts: [],
    tables: options.length === 0 ? [] : [optionTable, rankTable],
    notes: [
      ...partial,
      ...missing,
      "Ours: every rank's bytes ÷ the trial's common window (earliest start to latest end) and percentiles of every rank's samples pooled; upstream's: per-rank figures summed (bandwidth, tokens/s) or their maximum (p95), mean over trials. Each rank's own series are in its results file (trial_*/rank_*/): report it on its own.",
    ],
  };
}
