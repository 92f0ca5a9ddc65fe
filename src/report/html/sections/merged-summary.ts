// The report's section for the merged summary of an MLPerf run (kv-cache mlperf / kv-cache merge):
// one row per option with our figures (all ranks' bytes ÷ the common window, pooled percentiles) beside
// upstream's (sums and maxima of per-rank figures), each host's device against its ranks' bytes, the
// files the merge missed, and every rank's row.
// The ranks' own per-second series are in their results files (trial_*/rank_*/), each a report of its own.
import { GiB, MiB } from '../../../util/units.js';
import { HOST_BYTES_OK } from '../../host-bytes-check.js';
import type { LoadedOption } from '../inputs.js';
import type { MergedHostDevice } from '../summary-input.js';
import type { Section, TableSpec } from './section.js';

const fixed = (v: number | null, digits: number): string => (v === null ? 'n/a' : v.toFixed(digits));
const mibPerSec = (v: number | null): string => (v === null ? 'n/a' : (v / MiB).toFixed(1));
const gib = (v: number | undefined): string => (v === undefined ? 'n/a' : (v / GiB).toFixed(3));

/** The ranks' metadata allowance: null when none had a calibration, absent in summaries before 1.1.0. */
const metadataGib = (h: MergedHostDevice): string =>
  h.metadata_write_bytes === undefined ? 'n/a (summary 1.0.0)' : h.metadata_write_bytes === null ? 'none' : gib(h.metadata_write_bytes);

/** The merge judged the host's device bytes and they failed. */
const fails = (h: MergedHostDevice): boolean => h.bytes_check !== undefined && !HOST_BYTES_OK.has(h.bytes_check);

/** Whether the merge's check passed, in words a reader spots: a failing host reads NO, as an invalid rank does. */
const passes = (h: MergedHostDevice): string => (h.bytes_check === undefined ? 'n/a' : fails(h) ? 'NO' : 'yes');

/** Each option's hosts, trial by trial: the device counted once per host, beside what its ranks moved. */
function hostTable(options: readonly LoadedOption[], names: (o: LoadedOption) => string): TableSpec {
  return {
    id: 'merged-hosts',
    title: "Each host's device against its ranks' storage bytes (GiB = 2^30 bytes)",
    header: [
      'option',
      'trial',
      'host',
      'device',
      'ranks',
      'device read GiB',
      "ranks' read GiB",
      'device written GiB',
      "ranks' written GiB",
      'file-system metadata allowed GiB (up to)',
      'bytes_check',
      'passes',
    ],
    rows: options.flatMap((o) =>
      o.merged.kvcache_bench.trials.flatMap((t) =>
        t.device_per_host.map((h) => [
          names(o),
          String(t.trial),
          h.host,
          h.device,
          h.ranks.join(', '),
          gib(h.read_bytes),
          gib(h.tool_read_bytes),
          gib(h.written_bytes),
          gib(h.tool_written_bytes),
          metadataGib(h),
          h.bytes_check ?? 'n/a (not judged in this summary)',
          passes(h),
        ]),
      ),
    ),
  };
}

/** A line naming every host whose check failed, so a failure is read before the table. */
function failedHosts(options: readonly LoadedOption[], names: (o: LoadedOption) => string): string[] {
  const failed = options.flatMap((o) =>
    o.merged.kvcache_bench.trials.flatMap((t) =>
      t.device_per_host.filter(fails).map((h) => `${names(o)} trial ${t.trial} ${h.host}:${h.device} (${h.bytes_check ?? ''})`),
    ),
  );
  return failed.length === 0 ? [] : [`Device bytes not explained by the ranks' own (NO below): ${failed.join('; ')}.`];
}

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
  const hosts = hostTable(options, names);
  const missing = options.flatMap((o) => o.merged.missing_files.map((f) => `${names(o)}: missing ${f}`));
  const partial = [...new Set(options.filter((o) => o.summary.partial_failure).map((o) => o.path))].map(
    (p) => `${p}: PARTIAL — some rank files or trials are missing (listed below).`,
  );
  return {
    id: 'merged-summary',
    title: 'MLPerf run: merged summary',
    charts: [],
    tables: options.length === 0 ? [] : [optionTable, ...(hosts.rows.length > 0 ? [hosts] : []), rankTable],
    notes: [
      ...partial,
      ...missing,
      ...failedHosts(options, names),
      "Ours: every rank's bytes ÷ the trial's common window (earliest start to latest end) and percentiles of every rank's samples pooled; upstream's: per-rank figures summed (bandwidth, tokens/s) or their maximum (p95), mean over trials. Each rank's own series are in its results file (trial_*/rank_*/): report it on its own.",
      hosts.rows.length > 0
        ? "Per host: its device's counters once (its ranks see the same whole device) against the bytes its ranks moved, with the file system's metadata for their new files allowed as a single run allows it; bytes_check 'match' and 'device_writes_metadata' pass (docs/ranks.md)."
        : 'Per host device check: no rank resolved a block device under its cache dir (tmpfs, overlay, network FS).',
    ],
  };
}
