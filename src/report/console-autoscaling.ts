// The AUTOSCALING section of the console summary (after QOS, as in the reference's order): where the
// autoscaler ended up, its peak, each decision, and why the mode stopped. Computed from the results
// document only (summary.autoscaling_stats / autoscaling_summary), so it prints what is saved.
import type { ResultsDocument } from './results-schema.js';

type ScaleEventJson = ResultsDocument['summary']['autoscaling_stats'][number];

/** More decisions than this: holds and cool-downs are left out of the table (all are in the JSON). */
export const MAX_DECISION_ROWS = 20;

/** `config.autoscaler.consecutive_samples_required` from the effective config, when present. */
function samplesPerLevel(doc: ResultsDocument): number | undefined {
  const autoscaler = doc.kvcache_bench.effective_config.config.autoscaler;
  if (typeof autoscaler !== 'object' || autoscaler === null) return undefined;
  const k = (autoscaler as Record<string, unknown>).consecutive_samples_required;
  return typeof k === 'number' ? k : undefined;
}

const num = (v: number, digits = 1): string => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function peakLine(doc: ResultsDocument, events: readonly ScaleEventJson[]): string {
  const s = doc.summary.autoscaling_summary;
  if (s?.peak_throughput_tokens_per_sec !== undefined && s.peak_user_count !== undefined) {
    const k = samplesPerLevel(doc);
    const how = k === undefined || k > 1 ? `the lowest of ${k ?? 'its'} consecutive samples at that count` : 'one sample';
    return `  Peak: ${num(s.peak_throughput_tokens_per_sec)} tok/s sustained at ${s.peak_user_count} users (${how})`;
  }
  // qos mode has no peak rule: the best single sample and the most users it ran.
  const best = events.reduce((a, e) => (e.throughput_tokens_per_sec > a.throughput_tokens_per_sec ? e : a));
  const most = Math.max(...events.map((e) => e.users_during));
  return `  Most users: ${most}   best sample: ${num(best.throughput_tokens_per_sec)} tok/s with ${best.users_during} users`;
}

/** Why the autoscaling ended, in the mode's terms. */
function stopLine(doc: ResultsDocument, mode: string): string {
  const reason = doc.kvcache_bench.stop_reason;
  if (reason === 'capacity_peak')
    return '  Stop: capacity_peak — two user counts in a row without a 1 % gain over the peak: the run ended there';
  if (mode === 'capacity') return `  Stop: ${reason} — the run ended before the peak was confirmed (the peak above is the best so far)`;
  return `  Stop: ${reason} (qos mode runs until the run ends)`;
}

function decisionRows(events: readonly ScaleEventJson[]): string[] {
  const shown = events.length > MAX_DECISION_ROWS ? events.filter((e) => e.action !== 'hold' && e.action !== 'cooldown') : events;
  const header = `  ${'time s'.padStart(8)}  ${'action'.padEnd(10)}  ${'users (during → after)'.padEnd(22)}  ${'tok/s'.padStart(10)}  saturation`;
  const rows = shown.map(
    (e) =>
      `  ${e.timestamp.toFixed(1).padStart(8)}  ${e.action.padEnd(10)}  ${`${e.users_during} → ${e.users_after}`.padEnd(22)}  ${num(e.throughput_tokens_per_sec).padStart(10)}  ${e.saturation_level.toFixed(2)}`,
  );
  const hidden = events.length - shown.length;
  return [
    header,
    ...rows,
    ...(hidden > 0 ? [`  (${hidden} hold/cooldown samples not shown; every decision is in autoscaling_stats)`] : []),
  ];
}

/** The section's lines (a leading blank line and its heading); none when autoscaling was off. */
export function autoscalingBlock(doc: ResultsDocument): string[] {
  const s = doc.summary.autoscaling_summary;
  const events = doc.summary.autoscaling_stats;
  if (s === null) return [];
  const mode = events[0]?.mode ?? (s.peak_user_count !== undefined ? 'capacity' : 'qos');
  const lines = ['', `### AUTOSCALING (${mode} mode) ###`];
  lines.push(`  Users: ${s.initial_users} at start → ${s.final_users} at the end, ${s.total_scale_events} scale events`);
  if (events.length === 0) return [...lines, '  no sample was taken (the run ended within one --autoscale-interval)', stopLine(doc, mode)];
  lines.push(peakLine(doc, events), stopLine(doc, mode), ...decisionRows(events));
  return lines;
}
