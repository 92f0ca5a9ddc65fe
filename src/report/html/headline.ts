// The headline figures of a run, shared by the HTML report's first section and `kv-cache compare`:
// one row each, with where the value comes from in the results file, its unit, and the trial figure
// (`kvcache_bench.trials.stats`) whose coefficient of variation is the run's own noise for it.
import { GiB } from '../../util/units.js';
import type { TrialFiguresJson } from '../results-schema.js';
import type { ReportRun } from './run-input.js';
import { verdictText } from '../console.js';
import { isOption, isReplay } from './inputs.js';
import type { LoadedInput } from './inputs.js';
import type { ReportReplay } from './replay-input.js';
import type { MergedOption } from './summary-input.js';

export interface HeadlineFigure {
  /** Stable id: the HTML report's data-figure attribute and the compare table's row key. */
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  /** Where the value comes from in the results file (shown in the README and the report). */
  readonly source: string;
  readonly digits: number;
  /** The run's value; null when the run has none (e.g. no storage reads, no device counters). */
  readonly value: (doc: ReportRun) => number | null;
  /** The trial figure measuring the same thing (its CV is the noise), when trials record one. */
  readonly trialFigure?: keyof TrialFiguresJson;
  /** The same figure of a replay, where a replay records it (absent: n/a, never a stand-in). */
  readonly ofReplay?: (replay: ReportReplay) => number | null;
  /** The same figure of one option of a merged MLPerf summary (all its ranks), where the summary records it. */
  readonly ofMerged?: (option: MergedOption) => number | null;
}

/** `of` of an optional results block, or null where the entry has none (older files, other layouts). */
export const ofBlock = <B>(block: B | null | undefined, of: (b: B) => number | null): number | null =>
  block === null || block === undefined ? null : of(block);

/** A replay's bytes ÷ its measured window, in GiB/s (as its console summary prints them). */
const replayRate = (bytes: number, r: ReportReplay): number | null => (r.elapsed_time > 0 ? bytes / r.elapsed_time / GiB : null);

/** A latency percentile is null when its histogram has no sample (the results file then holds 0 or leaves it out). */
const ifSampled =
  (histogram: string, pick: (doc: ReportRun) => number | undefined) =>
  (doc: ReportRun): number | null =>
    (doc.kvcache_bench.latency_histograms[histogram]?.count ?? 0) > 0 ? (pick(doc) ?? null) : null;

export const HEADLINE_FIGURES: readonly HeadlineFigure[] = [
  {
    key: 'storage_read_gib_per_sec',
    label: 'Storage read',
    unit: 'GiB/s',
    source: 'kvcache_bench.storage_bytes.read_gib_per_sec',
    digits: 3,
    value: (d) => d.kvcache_bench.storage_bytes.read_gib_per_sec,
    trialFigure: 'storage_read_bytes_per_sec',
    ofReplay: (r) => replayRate(r.replay.read_bytes, r),
    ofMerged: (o) => o.kvcache_bench.storage_read_gib_per_sec,
  },
  {
    key: 'storage_write_gib_per_sec',
    label: 'Storage write',
    unit: 'GiB/s',
    source: 'kvcache_bench.storage_bytes.write_gib_per_sec',
    digits: 3,
    value: (d) => d.kvcache_bench.storage_bytes.write_gib_per_sec,
    trialFigure: 'storage_write_bytes_per_sec',
    ofReplay: (r) => replayRate(r.replay.write_bytes, r),
    ofMerged: (o) => o.kvcache_bench.storage_write_gib_per_sec,
  },
  {
    key: 'storage_read_device_p95_ms',
    label: 'Storage read p95 (device)',
    unit: 'ms',
    source: 'summary.cache_stats.storage_read_device_p95_ms',
    digits: 3,
    value: ifSampled('storage_read_device', (d) => d.summary.cache_stats.storage_read_device_p95_ms),
    trialFigure: 'storage_read_device_p95_ms',
    ofReplay: (r) => r.summary.cache_stats.storage_read_device_p95_ms ?? null,
    // The p95 of every rank's samples pooled (not upstream's max of the ranks' p95s).
    ofMerged: (o) => o.kvcache_bench.storage_read_device_latency.p95_ms,
  },
  {
    key: 'storage_read_device_p99_ms',
    label: 'Storage read p99 (device)',
    unit: 'ms',
    source: 'summary.cache_stats.storage_read_device_p99_ms',
    digits: 3,
    value: ifSampled('storage_read_device', (d) => d.summary.cache_stats.storage_read_device_p99_ms),
    ofReplay: (r) => r.summary.cache_stats.storage_read_device_p99_ms ?? null,
    ofMerged: (o) => o.kvcache_bench.storage_read_device_latency.p99_ms,
  },
  {
    key: 'requests_per_second',
    label: 'Requests',
    unit: 'req/s',
    source: 'summary.requests_per_second',
    digits: 2,
    value: (d) => d.summary.requests_per_second,
    trialFigure: 'requests_per_second',
  },
  {
    key: 'tokens_per_second',
    label: 'Tokens',
    unit: 'tok/s',
    source: 'summary.avg_throughput_tokens_per_sec',
    digits: 1,
    value: (d) => d.summary.avg_throughput_tokens_per_sec,
    trialFigure: 'avg_throughput_tokens_per_sec',
    // Upstream's aggregate: the ranks' tokens/s summed (the whole system's rate), mean over trials.
    ofMerged: (o) => o.aggregated_avg_throughput_tokens_per_sec,
  },
  {
    key: 'cache_hit_rate',
    label: 'Cache hit rate',
    unit: '%',
    source: 'summary.cache_stats.cache_hit_rate × 100',
    digits: 1,
    value: (d) => d.summary.cache_stats.cache_hit_rate * 100,
    trialFigure: 'cache_hit_rate',
  },
  {
    key: 'device_read_gib',
    label: 'Device read',
    unit: 'GiB',
    source: 'kvcache_bench.device_io.read_bytes ÷ 2^30',
    digits: 3,
    value: (d) => (d.kvcache_bench.device_io === null ? null : d.kvcache_bench.device_io.read_bytes / GiB),
    ofReplay: (r) => (r.kvcache_bench.device_io === null ? null : r.kvcache_bench.device_io.read_bytes / GiB),
  },
  {
    key: 'device_written_gib',
    label: 'Device written',
    unit: 'GiB',
    source: 'kvcache_bench.device_io.written_bytes ÷ 2^30',
    digits: 3,
    value: (d) => (d.kvcache_bench.device_io === null ? null : d.kvcache_bench.device_io.written_bytes / GiB),
    ofReplay: (r) => (r.kvcache_bench.device_io === null ? null : r.kvcache_bench.device_io.written_bytes / GiB),
  },
];

/** A block-granular run's token hit rate (0–1 → %), or null for a whole-request run or an untracked ideal. */
const blockRate = (pick: (k: NonNullable<ReportRun['kvcache_bench']['kv_blocks']>) => number | null) => (d: ReportRun) => {
  const k = d.kvcache_bench.kv_blocks;
  const v = k === undefined ? null : pick(k);
  return v === null ? null : v * 100;
};

/**
 * What block mode leads with (issue 35): the share of the contexts' tokens served from cache, beside
 * the share the workload's own reuse allows. The reference's cache_hit_rate counts operations, decode
 * re-reads of cached blocks included, so on a Mooncake trace it read 42.8 % where 3.4 % of the tokens hit.
 */
export const BLOCK_LEAD_FIGURES: readonly HeadlineFigure[] = [
  {
    key: 'token_hit_rate',
    label: 'Token hit rate (block mode)',
    unit: '%',
    source: 'kvcache_bench.kv_blocks.token_hit_rate.total × 100',
    digits: 1,
    value: blockRate((k) => k.token_hit_rate.total),
  },
  {
    key: 'ideal_token_hit_rate',
    label: 'Ideal token hit rate (the workload’s reuse, unlimited capacity)',
    unit: '%',
    source: 'kvcache_bench.kv_blocks.ideal.token_hit_rate × 100',
    digits: 1,
    value: blockRate((k) => k.ideal.token_hit_rate),
  },
];

/** The reference's hit rate where block mode shows it: in its place, labelled for what it counts. */
const REFERENCE_HIT_RATE_LABEL = 'Cache hit rate (reference: per operation, decode re-reads included)';

/**
 * The headline figures of these entries: HEADLINE_FIGURES, led in block mode (any run block-granular)
 * by the token hit rate and its ideal, with the reference's cache_hit_rate kept where it is, labelled.
 */
export function headlineFiguresOf(runs: readonly LoadedInput[]): readonly HeadlineFigure[] {
  const blockMode = runs.some((r) => !isReplay(r) && !isOption(r) && r.doc.kvcache_bench.kv_blocks !== undefined);
  if (!blockMode) return HEADLINE_FIGURES;
  return [
    ...BLOCK_LEAD_FIGURES,
    ...HEADLINE_FIGURES.map((f) => (f.key === 'cache_hit_rate' ? { ...f, label: REFERENCE_HIT_RATE_LABEL } : f)),
  ];
}

/** A figure's value as shown: fixed digits with thousands separators; "n/a" without a value. */
export function formatFigure(value: number | null, digits: number): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A figure of any entry: a run's value, else the replay's or the merged option's where they record it, else null (n/a). */
export function figureValue(figure: HeadlineFigure, input: LoadedInput): number | null {
  if (isReplay(input)) return figure.ofReplay?.(input.replay) ?? null;
  if (isOption(input)) return figure.ofMerged?.(input.merged) ?? null;
  return figure.value(input.doc);
}

/** "VALID" or "NOT VALID: code, code". */
export function validityText(doc: ReportRun): string {
  return verdictText(doc.kvcache_bench.validity);
}

/** An entry's verdict: a run's own; a merged option's over its ranks; none for a replay (it records no verdict). */
export function entryVerdict(input: LoadedInput): { readonly valid: boolean | null; readonly short: string; readonly text: string } {
  if (isReplay(input)) return { valid: null, short: 'no verdict', text: 'a replay records no validity verdict' };
  if (isOption(input)) {
    const ok = input.merged.kvcache_bench.all_ranks_valid;
    return {
      valid: ok,
      short: ok ? 'VALID' : 'NOT VALID',
      text: ok ? 'VALID (every rank)' : 'NOT VALID (not every rank is VALID: see the rank table)',
    };
  }
  const v = input.doc.kvcache_bench.validity;
  return { valid: v.valid, short: v.valid ? 'VALID' : 'NOT VALID', text: verdictText(v) };
}

/** The coefficient of variation of a figure over a run's trials, or undefined without trials (or n < 2), and for replays and summaries. */
export function trialCv(input: LoadedInput, figure: HeadlineFigure): number | undefined {
  if (figure.trialFigure === undefined || !('doc' in input)) return undefined;
  return input.doc.kvcache_bench.trials?.stats[figure.trialFigure]?.cv ?? undefined;
}
