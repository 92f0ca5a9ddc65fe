// The aggregated figures (Rules.md §6.3.4) recomputed from the rank files with the rules' formulas
// and compared with the merged summary, with ours beside them (bytes over the common window, pooled
// percentiles: merge.ts), and the ranks' own quality as we judge it: validity, overlapping windows,
// device bytes per host, no rank stopped early.
import { GiB } from '../../util/units.js';
import { pooledPercentiles, POOLED_HISTOGRAMS, trialFigures } from '../merge.js';
import { HOST_BYTES_OK } from '../../report/host-bytes-check.js';
import type { TrialInput } from '../merge.js';
import type { ResultsDocument } from '../../report/results-schema.js';
import { evidence, rankEvidence, ranksOf, relPath, sameNumber, verdictOf } from './facts.js';
import type { Finding } from './facts.js';
import type { CheckInput, Division, Rule, Status, SummaryOption, Verdict } from './types.js';

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : sum(xs) / xs.length);
const fmt = (n: number | null | undefined, digits = 3): string => (n == null ? 'n/a' : n.toFixed(digits));

/** Trials grouped by option, in option order. */
function byOption(input: CheckInput): Array<[string, TrialInput[]]> {
  const m = new Map<string, TrialInput[]>();
  for (const t of input.trials) m.set(t.option, [...(m.get(t.option) ?? []), t]);
  return [...m].sort(([a], [b]) => a.localeCompare(b));
}

/** 6.3.4.1 / 6.3.4.2: a rank figure summed over the ranks of each trial, then the mean over trials. */
const sumThenMean = (trials: readonly TrialInput[], f: (d: ResultsDocument) => number): number =>
  mean(trials.map((t) => sum(t.files.map((x) => f(x.doc)))));

/** 6.3.4.3: the max over every rank and trial of the rank's own p95 (a CPU-tier rank contributes 0). */
const maxOfRanks = (trials: readonly TrialInput[], f: (d: ResultsDocument) => number | null | undefined): number =>
  Math.max(0, ...trials.flatMap((t) => t.files.map((x) => f(x.doc) ?? 0)));

interface Figure {
  readonly field: keyof SummaryOption;
  readonly ours: (trials: readonly TrialInput[]) => number;
  /** Our own figure beside it, in words. */
  readonly beside: (trials: readonly TrialInput[]) => string;
}

/** Compares each recomputed figure with the summary's, per option; no summary is CANNOT TELL with our values shown. */
function compareFigures(input: CheckInput, figures: readonly Figure[]): Verdict {
  const findings: Finding[] = [];
  const summary = input.summary;
  for (const [option, trials] of byOption(input)) {
    const got = summary?.options?.[option];
    for (const fig of figures) {
      const ours = fig.ours(trials);
      const recorded = got?.[fig.field];
      const file = summary !== undefined ? relPath(input, summary.path) : 'kvcache_run_summary_*.json';
      const required = `${ours} (recomputed from ${trials.length} trial(s); ours: ${fig.beside(trials)})`;
      // No summary file: nothing to compare (CANNOT TELL); a summary without a readable figure is a wrong summary (FAIL).
      const status: Status =
        recorded === undefined ? (summary === undefined ? 'CANNOT TELL' : 'FAIL') : sameNumber(recorded, ours) ? 'PASS' : 'FAIL';
      const value = recorded ?? summary?.problem ?? (summary === undefined ? 'no summary file' : 'absent');
      findings.push({ status, evidence: evidence(file, `options.${option}.${fig.field}`, value, required) });
    }
  }
  return verdictOf(findings, evidence('.', 'trials', 'none', 'rank files to recompute from'));
}

const commonWindowGiB = (trials: readonly TrialInput[], pick: 'read' | 'write'): string => {
  const per = trials.map(trialFigures).map((f) => (pick === 'read' ? f.storage_read_bytes_per_sec : f.storage_write_bytes_per_sec));
  return `${fmt(mean(per) / GiB)} GiB/s over the common window`;
};

const pooledP95 = (trials: readonly TrialInput[], name: string): string => {
  const p = pooledPercentiles(
    trials.flatMap((t) => t.files.map((f) => f.doc)),
    name,
  );
  return `pooled p95 ${fmt(p.p95_ms)} ms of ${p.count} samples`;
};

const aggregateBandwidth = (input: CheckInput): Verdict =>
  compareFigures(input, [
    {
      field: 'aggregated_read_bandwidth_gbps',
      ours: (ts) => sumThenMean(ts, (d) => d.summary.cache_stats.tier_storage_read_bandwidth_gbps),
      beside: (ts) => commonWindowGiB(ts, 'read'),
    },
    {
      field: 'aggregated_write_bandwidth_gbps',
      ours: (ts) => sumThenMean(ts, (d) => d.summary.cache_stats.tier_storage_write_bandwidth_gbps),
      beside: (ts) => commonWindowGiB(ts, 'write'),
    },
  ]);

const aggregateThroughput = (input: CheckInput): Verdict =>
  compareFigures(input, [
    {
      field: 'aggregated_storage_throughput_tokens_per_sec',
      ours: (ts) => sumThenMean(ts, (d) => d.summary.storage_throughput_tokens_per_sec),
      beside: (ts) => `${ts.reduce((n, t) => n + t.files.length, 0)} rank file(s) summed per trial`,
    },
  ]);

// Upstream takes a max of per-rank p95s, which is not a percentile of the pooled samples: ours is beside it.
const aggregateDeviceLatency = (input: CheckInput): Verdict =>
  compareFigures(input, [
    {
      field: 'aggregated_device_read_p95_ms',
      ours: (ts) => maxOfRanks(ts, (d) => d.summary.cache_stats.storage_read_device_p95_ms),
      beside: (ts) => pooledP95(ts, POOLED_HISTOGRAMS[0]),
    },
    {
      field: 'aggregated_device_write_p95_ms',
      ours: (ts) => maxOfRanks(ts, (d) => d.summary.cache_stats.storage_write_device_p95_ms),
      beside: (ts) => pooledP95(ts, POOLED_HISTOGRAMS[1]),
    },
  ]);

/** An Option whose every rank kept everything in the CPU tier measured no storage: CLOSED fails it, OPEN may keep it (as OPEN-only). */
function latencyValidity(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  const division: Division | undefined = input.division;
  for (const [option, trials] of byOption(input)) {
    const files = trials.flatMap((t) => t.files);
    const cpuOnly = files.filter((f) => f.doc.summary.cache_stats.storage_entries === 0);
    const where = `option_${option}`;
    const value = `${cpuOnly.length} of ${files.length} rank file(s) with storage_entries = 0${cpuOnly.length > 0 ? ` (ranks ${[...new Set(cpuOnly.map((f) => f.rank))].join(', ')})` : ''}`;
    if (files.length === 0) continue;
    if (cpuOnly.length < files.length)
      findings.push({
        status: 'PASS',
        evidence: evidence(where, 'summary.cache_stats.storage_entries', value, 'not every rank CPU-tier only'),
      });
    else
      findings.push({
        status: division === 'open' ? 'PASS' : division === 'closed' ? 'FAIL' : 'CANNOT TELL',
        evidence: evidence(
          where,
          'summary.cache_stats.storage_entries',
          value,
          division === 'open' ? 'OPEN-only result (every rank CPU-tier)' : 'not every rank CPU-tier only (CLOSED)',
        ),
      });
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files with cache_stats'));
}

/** The device-byte reasons are judged per host (KB.3): a rank alone sees its peers' I/O on a shared device. */
const DEVICE_BYTE_CODE = /^device_(reads|writes)_(exceed|below)_tool$/;

function rankValidity(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const findings: Finding[] = [];
  for (const r of ranks) {
    const codes = r.doc.kvcache_bench.validity.reasons.map((x) => x.code).filter((c) => !DEVICE_BYTE_CODE.test(c));
    if (codes.length > 0)
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(input, r, 'kvcache_bench.validity.reasons', codes.join(', '), 'none (VALID)'),
      });
  }
  if (findings.length < ranks.length)
    findings.push({
      status: 'PASS',
      evidence: evidence(
        '.',
        'kvcache_bench.validity',
        `${ranks.length - findings.length} of ${ranks.length} rank file(s) VALID (device bytes judged per host)`,
        'VALID',
      ),
    });
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files with a validity verdict'));
}

function windowsOverlap(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  for (const t of input.trials) {
    const ws = t.files.map((f) => ({ f, r: f.doc.kvcache_bench.ranks }));
    const trialDir = relPath(input, t.dir);
    if (ws.length < 2) continue;
    const missing = ws.filter((w) => w.r == null);
    if (missing.length > 0) {
      for (const w of missing)
        findings.push({
          status: 'CANNOT TELL',
          evidence: evidence(relPath(input, w.f.path), 'kvcache_bench.ranks', null, 'the rank window recorded'),
        });
      continue;
    }
    const starts = ws.map((w) => w.r?.window_start_epoch_ms ?? 0);
    const ends = ws.map((w) => w.r?.window_end_epoch_ms ?? 0);
    const overlapSec = (Math.min(...ends) - Math.max(...starts)) / 1000;
    const commonSec = (Math.max(...ends) - Math.min(...starts)) / 1000;
    findings.push({
      status: overlapSec > 0 ? 'PASS' : 'FAIL',
      evidence: evidence(
        trialDir,
        'kvcache_bench.ranks.window_{start,end}_epoch_ms',
        `all ${ws.length} ranks overlap ${overlapSec.toFixed(3)} s of a ${commonSec.toFixed(3)} s common window`,
        'every rank measuring at once (overlap > 0)',
      ),
    });
    for (const w of ws)
      if ((w.r?.window_end_epoch_ms ?? 0) <= Math.max(...starts))
        findings.push({
          status: 'FAIL',
          evidence: evidence(
            relPath(input, w.f.path),
            'kvcache_bench.ranks.window_end_epoch_ms',
            w.r?.window_end_epoch_ms,
            `after the last rank's start (${Math.max(...starts)})`,
          ),
        });
  }
  if (findings.length === 0)
    return { status: 'NOT APPLICABLE', evidence: [evidence('.', 'ranks per trial', 1, 'two or more for windows to overlap')] };
  return verdictOf(findings, evidence('.', 'trials', 'none', 'trials with ranks'));
}

function deviceBytesPerHost(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  // One rank file of several: its host's device also carried its peers' bytes, which are not here.
  const alone = ranksOf(input).filter((r) => input.kind === 'file' && (r.doc.kvcache_bench.ranks?.world_size ?? 1) > 1);
  if (alone.length > 0)
    return {
      status: 'CANNOT TELL',
      evidence: alone.map((r) =>
        rankEvidence(
          input,
          r,
          'kvcache_bench.ranks.world_size',
          r.doc.kvcache_bench.ranks?.world_size,
          "1, or the run directory with every rank's file",
        ),
      ),
    };
  for (const t of input.trials) {
    const fig = trialFigures(t);
    const trialDir = relPath(input, t.dir);
    const noDevice = t.files.filter((f) => f.doc.kvcache_bench.device_io === null);
    for (const f of noDevice)
      findings.push({
        status: 'CANNOT TELL',
        evidence: evidence(relPath(input, f.path), 'kvcache_bench.device_io', null, 'device counters of the cache dir'),
      });
    for (const h of fig.device_per_host)
      findings.push({
        status: HOST_BYTES_OK.has(h.bytes_check) ? 'PASS' : 'FAIL',
        evidence: evidence(
          trialDir,
          `device ${h.host}:${h.device} (ranks ${h.ranks.join(', ')})`,
          `device read ${h.read_bytes} / written ${h.written_bytes} B vs ranks' ${h.tool_read_bytes} / ${h.tool_written_bytes} B${h.metadata_write_bytes !== null ? ` (+ up to ${h.metadata_write_bytes} B of file-system metadata)` : ''}: ${h.bytes_check}`,
          "device bytes (counted once per host) match the ranks' storage bytes",
        ),
      });
  }
  return verdictOf(findings, evidence('.', 'trials', 'none', 'rank files with device counters'));
}

function noEarlyStop(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const findings: Finding[] = [];
  for (const r of ranks) {
    const k = r.doc.kvcache_bench;
    if (k.stop_reason !== 'duration' || k.interrupted)
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(
          input,
          r,
          'kvcache_bench.stop_reason',
          `${k.stop_reason}${k.interrupted ? ' (interrupted)' : ''}`,
          `duration (ran its ${k.nominal_duration_sec} s)`,
        ),
      });
  }
  if (findings.length < ranks.length)
    findings.push({
      status: 'PASS',
      evidence: evidence(
        '.',
        'kvcache_bench.stop_reason',
        `duration in ${ranks.length - findings.length} of ${ranks.length} rank file(s)`,
        'duration',
      ),
    });
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files with a stop reason'));
}

export const FIGURE_RULES: readonly Rule[] = [
  {
    id: '6.3.4.1',
    name: 'kvcacheAggregateBandwidth',
    appliesTo: ['run'],
    requirement: "aggregated_{read,write}_bandwidth_gbps = mean over trials of the ranks' tier_storage_*_bandwidth_gbps summed per trial",
    evaluate: aggregateBandwidth,
  },
  {
    id: '6.3.4.2',
    name: 'kvcacheAggregateThroughput',
    appliesTo: ['run'],
    requirement:
      "aggregated_storage_throughput_tokens_per_sec = mean over trials of the ranks' storage_throughput_tokens_per_sec summed per trial",
    evaluate: aggregateThroughput,
  },
  {
    id: '6.3.4.3',
    name: 'kvcacheAggregateDeviceLatency',
    appliesTo: ['run'],
    requirement: "aggregated_device_{read,write}_p95_ms = max over ranks and trials of the ranks' storage_*_device_p95_ms",
    evaluate: aggregateDeviceLatency,
  },
  {
    id: '6.3.4.4',
    name: 'kvcacheLatencyValidity',
    appliesTo: ['any'],
    requirement: 'no Option whose every rank has storage_entries = 0 (CLOSED fails it; OPEN keeps it as OPEN-only)',
    evaluate: latencyValidity,
  },
  {
    id: 'KB.1',
    name: 'rankValidity',
    appliesTo: ['any'],
    requirement: "every rank file's own validity verdict is VALID (its device-byte reasons judged per host, KB.3)",
    evaluate: rankValidity,
  },
  {
    id: 'KB.2',
    name: 'windowsOverlap',
    appliesTo: ['any'],
    requirement: "in every trial, every rank's measured window overlaps the others' (they measured at once)",
    evaluate: windowsOverlap,
  },
  {
    id: 'KB.3',
    name: 'deviceBytesPerHost',
    appliesTo: ['any'],
    requirement: "each host's device bytes (counted once) match its ranks' storage bytes",
    evaluate: deviceBytesPerHost,
  },
  {
    id: 'KB.4',
    name: 'noRankStoppedEarly',
    appliesTo: ['any'],
    requirement: 'every rank stopped at its duration (not interrupted, failed, full or capped)',
    evaluate: noEarlyStop,
  },
];
