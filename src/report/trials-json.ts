// The `kvcache_bench.trials` block of repeated trials (--trials): each trial's headline figures read
// from its results document, their statistics over the trials that ran to their end, and which trial
// is the median one. A pure function of the trials' documents; the statistics are metrics/trials.ts.
import { figureStats, medianTrialIndex, TRIAL_CV_WARNING, unstableFigures } from '../metrics/trials.js';
import type { ResultsDocument, TrialFiguresJson, TrialsJson } from './results-schema.js';

/** One trial that started: its number (from 1), its results file and its results. */
export interface TrialRecord {
  readonly trial: number;
  readonly file: string;
  readonly results: ResultsDocument;
}

/** A trial is counted only when it ran to its end: an interrupted or failed trial measured a shorter, different run. */
export function trialCounted(doc: ResultsDocument): boolean {
  const reason = doc.kvcache_bench.stop_reason;
  return reason !== 'interrupted' && reason !== 'failed';
}

export function trialFigures(doc: ResultsDocument): TrialFiguresJson {
  const sb = doc.kvcache_bench.storage_bytes;
  const cs = doc.summary.cache_stats;
  return {
    storage_bytes_per_sec: sb.read_bytes_per_sec + sb.write_bytes_per_sec,
    storage_read_bytes_per_sec: sb.read_bytes_per_sec,
    storage_write_bytes_per_sec: sb.write_bytes_per_sec,
    requests_per_second: doc.summary.requests_per_second,
    avg_throughput_tokens_per_sec: doc.summary.avg_throughput_tokens_per_sec,
    storage_read_device_p95_ms: cs.storage_read_device_p95_ms ?? null,
    storage_write_device_p95_ms: cs.storage_write_device_p95_ms ?? null,
    end_to_end_p95_ms: doc.summary.end_to_end_latency_ms.p95,
    cache_hit_rate: cs.cache_hit_rate,
  };
}

const FIGURES = [
  'storage_bytes_per_sec',
  'storage_read_bytes_per_sec',
  'storage_write_bytes_per_sec',
  'requests_per_second',
  'avg_throughput_tokens_per_sec',
  'storage_read_device_p95_ms',
  'storage_write_device_p95_ms',
  'end_to_end_p95_ms',
  'cache_hit_rate',
] as const satisfies ReadonlyArray<keyof TrialFiguresJson>;

export interface TrialsBlock {
  readonly block: TrialsJson;
  /** The median trial's record (undefined when no trial completed). */
  readonly median: TrialRecord | undefined;
}

/** The trials block of `records` (every trial that started, in order). */
export function buildTrials(records: readonly TrialRecord[], requested: number, pauseSec: number): TrialsBlock {
  const runs = records.map((r) => ({
    trial: r.trial,
    file: r.file,
    stop_reason: r.results.kvcache_bench.stop_reason,
    counted: trialCounted(r.results),
    figures: trialFigures(r.results),
  }));
  const counted = runs.filter((r) => r.counted);
  const stats = Object.fromEntries(FIGURES.map((name) => [name, figureStats(counted.map((r) => r.figures[name]))]));
  const medianAt = medianTrialIndex(counted.map((r) => r.figures.storage_bytes_per_sec));
  const medianTrial = medianAt === undefined ? undefined : counted[medianAt].trial;
  const unstable = unstableFigures(stats);
  const warnings =
    unstable.length === 0
      ? []
      : [
          `the trials disagree: CV above ${TRIAL_CV_WARNING * 100} % for ${unstable.map(({ figure, cv }) => `${figure} (${(cv * 100).toFixed(1)} %)`).join(', ')}; rank devices on these with care (longer runs, more trials, a quiet machine)`,
        ];
  const uncounted = runs.filter((r) => !r.counted);
  for (const r of uncounted) warnings.push(`trial ${r.trial} was ${r.stop_reason}: its partial figures are listed, not counted`);
  if (counted.length < requested) warnings.push(`${counted.length} of ${requested} trials completed: the statistics cover those only`);
  return {
    block: {
      requested,
      completed: counted.length,
      pause_sec: pauseSec,
      median_by: 'storage_bytes_per_sec',
      median_trial: medianTrial ?? null,
      cv_kind: 'sample',
      cv_warning_threshold: TRIAL_CV_WARNING,
      runs,
      stats,
      warnings,
    },
    median: records.find((r) => r.trial === medianTrial),
  };
}

/** The document `--output` holds: the given trial's full results with the trials block added. */
export function withTrials(doc: ResultsDocument, block: TrialsJson): ResultsDocument {
  return { ...doc, kvcache_bench: { ...doc.kvcache_bench, trials: block } };
}
