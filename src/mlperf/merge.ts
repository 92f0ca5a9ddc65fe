// The merged summary of an MLPerf run's rank files (kvcache_run_summary_<time>.json). Two sets of
// figures side by side:
// - upstream's fields with upstream's formulas, so its tooling reads the file: per option, each
//   rank figure summed over the ranks of a trial, then the mean over trials; device p95 = the max
//   over ranks and trials of each rank's own p95 (ranks that never touched storage left out);
// - ours under `kvcache_bench`: bytes of all ranks ÷ the trial's common window (earliest window start
//   to latest window end), percentiles of the ranks' merged HDR histograms (a real p95 of every
//   sample, not a max of p95s), device bytes per host (each host's device counted once), the start
//   skew between ranks, a per-rank table and each rank's validity.
// Pure: the files are read and parsed elsewhere (collect.ts).
import { byteMismatch, metadataExplainsWrites } from '../metrics/validity.js';
import { HOST_BYTES_OK } from '../report/host-bytes-check.js';
import type { ResultsDocument } from '../report/results-schema.js';
import { GiB } from '../util/units.js';
import { mergedPool } from './merge-pool.js';
import { mergedMetadata } from './merge-metadata.js';
import type { MergedMetadata } from './merge-metadata.js';
import { pooledOf } from './pooled.js';
import type { PooledPercentiles } from './pooled.js';

export type { PooledPercentiles } from './pooled.js';
import type { MergedPool } from './merge-pool.js';

/** 1.1.0: device_per_host[].metadata_write_bytes, and bytes_check `device_writes_metadata`. */
export const SUMMARY_SCHEMA_VERSION = '1.1.0';

/** The HDR histograms the merge pools across ranks (collect.ts checks each before the merge decodes it). */
export const POOLED_HISTOGRAMS = ['storage_read_device', 'storage_write_device'] as const;

export interface RankFile {
  readonly rank: number;
  readonly path: string;
  readonly doc: ResultsDocument;
}

export interface TrialInput {
  /** `1`, `2`, `3`, or a directory name for trials outside an option_<k> directory. */
  readonly option: string;
  readonly trial: number;
  readonly dir: string;
  readonly files: readonly RankFile[];
  /** Rank files that should exist but were missing or unreadable, each with its reason. */
  readonly missing: readonly string[];
  /** Ranks the trial should have (files + missing ranks) when `missing` lists a range of ranks as one line; else files + missing. */
  readonly rankCount?: number;
}

export interface MergeMeta {
  readonly runDatetime: string;
  readonly npernode: number | null;
  readonly hostCount: number;
  readonly totalRanks: number;
  readonly trialsPerOption: number;
  readonly division: string | null;
  readonly systemName: string | null;
}

export interface RankRow {
  readonly trial: number;
  readonly rank: number;
  readonly host: string;
  readonly file: string;
  readonly stop_reason: string;
  /** The rank's own verdict: its device counters include its peers on the host, so alone it sees them as foreign I/O. */
  readonly valid: boolean;
  readonly validity_reasons: string[];
  /** The verdict in the run: its reasons other than the device-byte comparison, which is made per host instead (device_per_host). */
  readonly valid_in_run: boolean;
  readonly storage_read_bytes: number;
  readonly storage_written_bytes: number;
  readonly measured_window_sec: number;
  readonly start_skew_ms: number | null;
  readonly storage_read_device_p95_ms: number;
  readonly storage_write_device_p95_ms: number;
  readonly cpu_tier_only: boolean;
}

export interface HostDevice {
  readonly host: string;
  readonly device: string;
  readonly ranks: number[];
  readonly read_bytes: number;
  readonly written_bytes: number;
  /** What the host's ranks moved through their storage tiers (the bytes the device should show). */
  readonly tool_read_bytes: number;
  readonly tool_written_bytes: number;
  /**
   * The most the file system's own writes for the ranks' new files may add (the sum of their
   * metadata_calibration.expected_write_bytes); null when no rank has one (slab, an object store, no
   * calibration, or a calibration disturbed by another writer).
   */
  readonly metadata_write_bytes: number | null;
  /**
   * The device bytes against the ranks' own, with the rule of a single run's validity: 'match',
   * 'device_writes_metadata' (the writes beyond the tolerance are within metadata_write_bytes: valid,
   * as in a run), or which side exceeds.
   */
  readonly bytes_check: string;
}

export interface TrialFigures {
  readonly trial: number;
  readonly dir: string;
  readonly ranks: number;
  readonly common_window_sec: number;
  readonly storage_read_bytes: number;
  readonly storage_written_bytes: number;
  readonly storage_read_bytes_per_sec: number;
  readonly storage_write_bytes_per_sec: number;
  readonly storage_read_gib_per_sec: number;
  readonly storage_write_gib_per_sec: number;
  readonly device_per_host: HostDevice[];
  readonly device_read_bytes_per_sec: number | null;
  readonly device_write_bytes_per_sec: number | null;
  readonly storage_read_device_latency: PooledPercentiles;
  readonly storage_write_device_latency: PooledPercentiles;
  readonly start_spread_ms: number | null;
  readonly max_abs_start_skew_ms: number | null;
  readonly end_spread_ms: number | null;
  readonly all_ranks_valid: boolean;
  /** Block-granular runs with a shared pool or ranks dividing a trace: the cluster's hit rate and pool traffic (merge-pool.ts); else null. */
  readonly kv_pool: MergedPool | null;
  /** The ranks' storage metadata calls: counts and rates summed, latencies pooled (merge-metadata.ts); null when no rank has them. */
  readonly metadata_ops: MergedMetadata | null;
}

export interface OptionSummary {
  readonly aggregated_read_bandwidth_gbps: number;
  readonly aggregated_write_bandwidth_gbps: number;
  readonly aggregated_avg_throughput_tokens_per_sec: number;
  readonly aggregated_storage_throughput_tokens_per_sec: number;
  readonly aggregated_device_read_p95_ms: number;
  readonly aggregated_device_write_p95_ms: number;
  readonly rank_count: number;
  readonly trial_count: number;
  readonly missing_files: string[];
  readonly cpu_tier_ranks: number[];
  readonly kvcache_bench: {
    readonly note: string;
    readonly storage_read_bytes_per_sec: number;
    readonly storage_write_bytes_per_sec: number;
    readonly storage_read_gib_per_sec: number;
    readonly storage_write_gib_per_sec: number;
    readonly device_read_bytes_per_sec: number | null;
    readonly device_write_bytes_per_sec: number | null;
    readonly storage_read_device_latency: PooledPercentiles;
    readonly storage_write_device_latency: PooledPercentiles;
    readonly max_start_spread_ms: number | null;
    readonly all_ranks_valid: boolean;
    readonly trials: TrialFigures[];
    readonly rank_table: RankRow[];
    /** Every trial's ranks together (lookups per second over the trials' summed common windows); null without pool blocks. */
    readonly kv_pool: MergedPool | null;
    /** Every trial's ranks together: counts summed, rates the mean over trials of the ranks' summed rates, latencies pooled; null without blocks. */
    readonly metadata_ops: MergedMetadata | null;
  };
}

export interface RunSummary {
  readonly schema_version: string;
  readonly run_datetime: string;
  readonly npernode: number | null;
  readonly host_count: number;
  readonly total_ranks: number;
  readonly trials_per_option: number;
  readonly partial_failure: boolean;
  readonly options: Record<string, OptionSummary>;
  readonly kvcache_bench: {
    readonly tool: 'kvcache-bench';
    readonly division: string | null;
    readonly system_name: string | null;
    readonly units: string;
    readonly scored_tuple: string[];
  };
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const spread = (xs: readonly number[]): number | null => (xs.length === 0 ? null : Math.max(...xs) - Math.min(...xs));

/** A rank that moved no storage bytes (served from GPU/CPU tiers only): its storage latencies are empty. */
function touchedStorage(doc: ResultsDocument): boolean {
  return doc.kvcache_bench.storage_bytes.read_bytes + doc.kvcache_bench.storage_bytes.written_bytes > 0;
}

/** Percentiles of every sample of `name` across `docs` (their HDR histograms merged). */
export function pooledPercentiles(docs: readonly ResultsDocument[], name: string): PooledPercentiles {
  return pooledOf(
    docs.flatMap((d) => {
      const h = d.kvcache_bench.latency_histograms[name];
      return h !== undefined ? [{ encoded: h.encoded, sumMs: h.sum_ms }] : [];
    }),
  );
}

/** [start, end] of a rank's window in epoch ms: its ranks block, else started_at + the window. */
function windowOf(doc: ResultsDocument): { start: number; end: number } {
  const k = doc.kvcache_bench;
  if (k.ranks != null) return { start: k.ranks.window_start_epoch_ms, end: k.ranks.window_end_epoch_ms };
  const start = Date.parse(k.started_at);
  return { start, end: start + k.measured_window_sec * 1000 };
}

function hostOf(doc: ResultsDocument): string {
  return doc.kvcache_bench.ranks?.host ?? 'unknown';
}

/** Each host's device once: ranks on one host see the same whole-device counters, so the widest (max) stands for all. */
function devicePerHost(files: readonly RankFile[]): HostDevice[] {
  const groups = new Map<string, Omit<HostDevice, 'bytes_check'>>();
  for (const f of files) {
    const io = f.doc.kvcache_bench.device_io;
    if (io === null) continue;
    const key = `${hostOf(f.doc)}\u0000${io.device}`;
    const tool = f.doc.kvcache_bench.storage_bytes;
    const metadata = f.doc.kvcache_bench.metadata_calibration?.expected_write_bytes ?? null;
    const g = groups.get(key) ?? {
      host: hostOf(f.doc),
      device: io.device,
      ranks: [],
      read_bytes: 0,
      written_bytes: 0,
      tool_read_bytes: 0,
      tool_written_bytes: 0,
      metadata_write_bytes: null,
    };
    groups.set(key, {
      ...g,
      ranks: [...g.ranks, f.rank],
      read_bytes: Math.max(g.read_bytes, io.read_bytes),
      written_bytes: Math.max(g.written_bytes, io.written_bytes),
      tool_read_bytes: g.tool_read_bytes + tool.read_bytes,
      tool_written_bytes: g.tool_written_bytes + tool.written_bytes,
      metadata_write_bytes: metadata === null ? g.metadata_write_bytes : (g.metadata_write_bytes ?? 0) + metadata,
    });
  }
  return [...groups.values()].map((g) => ({ ...g, bytes_check: bytesCheck(g) }));
}

/**
 * The single-run rule (metrics/validity.ts) applied to a host's device and all its ranks' bytes
 * together, the file system's own writes for their new files allowed as a run allows them.
 */
function bytesCheck(g: Omit<HostDevice, 'bytes_check'>): string {
  const read = byteMismatch(g.read_bytes, g.tool_read_bytes);
  const write = byteMismatch(g.written_bytes, g.tool_written_bytes);
  const metadataExplains = metadataExplainsWrites(g.written_bytes, g.tool_written_bytes, g.metadata_write_bytes ?? 0);
  const codes = [
    ...(read !== undefined ? [read === 'above' ? 'device_reads_exceed_tool' : 'device_reads_below_tool'] : []),
    ...(write !== undefined && !metadataExplains ? [write === 'above' ? 'device_writes_exceed_tool' : 'device_writes_below_tool'] : []),
  ];
  if (codes.length > 0) return codes.join(',');
  return metadataExplains ? 'device_writes_metadata' : 'match';
}

/** A rank's own reasons that are not the device-byte comparison (judged per host instead). */
const DEVICE_BYTE_CODE = /^device_(reads|writes)_(exceed|below)_tool$/;
function ownReasons(doc: ResultsDocument): string[] {
  return doc.kvcache_bench.validity.reasons.map((r) => r.code).filter((c) => !DEVICE_BYTE_CODE.test(c));
}

function rankRow(trial: number, f: RankFile): RankRow {
  const k = f.doc.kvcache_bench;
  const cs = f.doc.summary.cache_stats;
  return {
    trial,
    rank: f.rank,
    host: hostOf(f.doc),
    file: f.path,
    stop_reason: k.stop_reason,
    valid: k.validity.valid,
    validity_reasons: k.validity.reasons.map((r) => r.code),
    valid_in_run: ownReasons(f.doc).length === 0,
    storage_read_bytes: k.storage_bytes.read_bytes,
    storage_written_bytes: k.storage_bytes.written_bytes,
    measured_window_sec: k.measured_window_sec,
    start_skew_ms: k.ranks?.start_skew_ms ?? null,
    storage_read_device_p95_ms: cs.storage_read_device_p95_ms ?? 0,
    storage_write_device_p95_ms: cs.storage_write_device_p95_ms ?? 0,
    cpu_tier_only: !touchedStorage(f.doc),
  };
}

export function trialFigures(t: TrialInput): TrialFigures {
  const docs = t.files.map((f) => f.doc);
  const windows = docs.map(windowOf);
  const windowSec = windows.length === 0 ? 0 : (Math.max(...windows.map((w) => w.end)) - Math.min(...windows.map((w) => w.start))) / 1000;
  const per = (bytes: number): number => (windowSec > 0 ? bytes / windowSec : 0);
  const readBytes = sum(docs.map((d) => d.kvcache_bench.storage_bytes.read_bytes));
  const writtenBytes = sum(docs.map((d) => d.kvcache_bench.storage_bytes.written_bytes));
  const hosts = devicePerHost(t.files);
  const skews = docs.map((d) => d.kvcache_bench.ranks?.start_skew_ms).filter((s): s is number => typeof s === 'number');
  return {
    trial: t.trial,
    dir: t.dir,
    ranks: t.files.length,
    common_window_sec: windowSec,
    storage_read_bytes: readBytes,
    storage_written_bytes: writtenBytes,
    storage_read_bytes_per_sec: per(readBytes),
    storage_write_bytes_per_sec: per(writtenBytes),
    storage_read_gib_per_sec: per(readBytes) / GiB,
    storage_write_gib_per_sec: per(writtenBytes) / GiB,
    device_per_host: hosts,
    device_read_bytes_per_sec: hosts.length === 0 ? null : per(sum(hosts.map((h) => h.read_bytes))),
    device_write_bytes_per_sec: hosts.length === 0 ? null : per(sum(hosts.map((h) => h.written_bytes))),
    storage_read_device_latency: pooledPercentiles(docs, POOLED_HISTOGRAMS[0]),
    storage_write_device_latency: pooledPercentiles(docs, POOLED_HISTOGRAMS[1]),
    start_spread_ms: spread(windows.map((w) => w.start)),
    max_abs_start_skew_ms: skews.length === 0 ? null : Math.max(...skews.map(Math.abs)),
    end_spread_ms: spread(windows.map((w) => w.end)),
    all_ranks_valid:
      t.missing.length === 0 && docs.every((d) => ownReasons(d).length === 0) && hosts.every((h) => HOST_BYTES_OK.has(h.bytes_check)),
    kv_pool: mergedPool(docs, windowSec),
    metadata_ops: mergedMetadata(docs),
  };
}

/** One option's trials → upstream's aggregated fields plus ours. */
export function mergeOption(trials: readonly TrialInput[]): OptionSummary {
  const perTrial = (f: (d: ResultsDocument) => number): number => mean(trials.map((t) => sum(t.files.map((x) => f(x.doc)))));
  const storageDocs = trials.flatMap((t) => t.files.filter((f) => touchedStorage(f.doc)).map((f) => f.doc));
  const maxOf = (f: (d: ResultsDocument) => number): number => (storageDocs.length === 0 ? 0 : Math.max(...storageDocs.map(f)));
  const cpuTierRanks = [...new Set(trials.flatMap((t) => t.files.filter((f) => !touchedStorage(f.doc)).map((f) => f.rank)))].sort(
    (a, b) => a - b,
  );
  const figures = trials.map(trialFigures);
  const allDocs = trials.flatMap((t) => t.files.map((f) => f.doc));
  const meanOrNull = (xs: ReadonlyArray<number | null>): number | null =>
    xs.some((x) => x === null) || xs.length === 0 ? null : mean(xs as number[]);
  const starts = figures.map((f) => f.start_spread_ms).filter((s): s is number => s !== null);
  return {
    aggregated_read_bandwidth_gbps: perTrial((d) => d.summary.cache_stats.tier_storage_read_bandwidth_gbps),
    aggregated_write_bandwidth_gbps: perTrial((d) => d.summary.cache_stats.tier_storage_write_bandwidth_gbps),
    aggregated_avg_throughput_tokens_per_sec: perTrial((d) => d.summary.avg_throughput_tokens_per_sec),
    aggregated_storage_throughput_tokens_per_sec: perTrial((d) => d.summary.storage_throughput_tokens_per_sec),
    aggregated_device_read_p95_ms: maxOf((d) => d.summary.cache_stats.storage_read_device_p95_ms ?? 0),
    aggregated_device_write_p95_ms: maxOf((d) => d.summary.cache_stats.storage_write_device_p95_ms ?? 0),
    rank_count: Math.max(0, ...trials.map((t) => t.rankCount ?? t.files.length + t.missing.length)),
    trial_count: trials.length,
    missing_files: trials.flatMap((t) => [...t.missing]),
    cpu_tier_ranks: cpuTierRanks,
    kvcache_bench: {
      note: 'bytes of all ranks ÷ each trial’s common window (earliest window start to latest window end), mean over trials; latencies pooled from every rank’s and trial’s HDR histogram; device bytes once per host and device. GiB = 2^30 bytes.',
      storage_read_bytes_per_sec: mean(figures.map((f) => f.storage_read_bytes_per_sec)),
      storage_write_bytes_per_sec: mean(figures.map((f) => f.storage_write_bytes_per_sec)),
      storage_read_gib_per_sec: mean(figures.map((f) => f.storage_read_gib_per_sec)),
      storage_write_gib_per_sec: mean(figures.map((f) => f.storage_write_gib_per_sec)),
      device_read_bytes_per_sec: meanOrNull(figures.map((f) => f.device_read_bytes_per_sec)),
      device_write_bytes_per_sec: meanOrNull(figures.map((f) => f.device_write_bytes_per_sec)),
      storage_read_device_latency: pooledPercentiles(allDocs, POOLED_HISTOGRAMS[0]),
      storage_write_device_latency: pooledPercentiles(allDocs, POOLED_HISTOGRAMS[1]),
      max_start_spread_ms: starts.length === 0 ? null : Math.max(...starts),
      all_ranks_valid: figures.every((f) => f.all_ranks_valid),
      trials: figures,
      rank_table: trials.flatMap((t) => t.files.map((f) => rankRow(t.trial, f))),
      kv_pool: mergedPool(allDocs, sum(figures.map((f) => f.common_window_sec))),
      metadata_ops: mergedMetadata(allDocs, trials.length),
    },
  };
}

export function mergeRun(trials: readonly TrialInput[], meta: MergeMeta): RunSummary {
  const byOption = new Map<string, TrialInput[]>();
  for (const t of trials) byOption.set(t.option, [...(byOption.get(t.option) ?? []), t]);
  const options: Record<string, OptionSummary> = {};
  for (const [id, ts] of [...byOption].sort(([a], [b]) => a.localeCompare(b)))
    options[id] = mergeOption(ts.sort((a, b) => a.trial - b.trial));
  const partial =
    trials.length === 0 ||
    trials.some((t) => t.missing.length > 0) ||
    Object.values(options).some((o) => o.trial_count < meta.trialsPerOption);
  return {
    schema_version: SUMMARY_SCHEMA_VERSION,
    run_datetime: meta.runDatetime,
    npernode: meta.npernode,
    host_count: meta.hostCount,
    total_ranks: meta.totalRanks,
    trials_per_option: meta.trialsPerOption,
    partial_failure: partial,
    options,
    kvcache_bench: {
      tool: 'kvcache-bench',
      division: meta.division,
      system_name: meta.systemName,
      units: "upstream's _gbps fields are GiB/s (2^30 bytes/s), as the per-rank fields they sum; ours say bytes/s or gib",
      scored_tuple: [
        'aggregated_read_bandwidth_gbps',
        'aggregated_device_read_p95_ms',
        'aggregated_device_write_p95_ms',
        'aggregated_storage_throughput_tokens_per_sec',
      ],
    },
  };
}
