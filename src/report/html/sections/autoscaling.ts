// The autoscaler's samples and decisions, or a note that it was off.
import { makeChart } from '../chart-spec.js';
import type { LoadedRun, ReportRun } from '../run-input.js';
import { compact, seriesOf } from './members.js';
import type { Member } from './members.js';
import type { Section } from './section.js';

export function autoscalingSection(runs: readonly LoadedRun[]): Section {
  const timeline =
    (y: (p: ReportRun['throughput_timeline'][number]) => number): Member['pick'] =>
    (doc) =>
      doc.throughput_timeline.length === 0
        ? undefined
        : { x: doc.throughput_timeline.map((p) => p.timestamp), y: doc.throughput_timeline.map(y) };
  const charts = compact([
    makeChart(
      { id: 'autoscale-throughput', title: 'Autoscaler samples: throughput (tokens/s)', xKind: 'seconds', yLabel: 'tok/s' },
      seriesOf(runs, [{ label: 'tokens/s', pick: timeline((p) => p.throughput_tokens_per_sec) }]),
    ),
    makeChart(
      { id: 'autoscale-users', title: 'Autoscaler samples: users', xKind: 'seconds', yLabel: 'users' },
      seriesOf(runs, [{ label: 'users', pick: timeline((p) => p.users) }]),
    ),
  ]);
  const rows = runs.flatMap((r) =>
    r.doc.summary.autoscaling_stats.map((e) => [
      ...(runs.length > 1 ? [r.label] : []),
      e.timestamp.toFixed(1),
      e.mode,
      e.action,
      String(e.users),
      e.saturation_level.toFixed(2),
      e.read_latency_p95_ms.toFixed(2),
      e.write_latency_p95_ms.toFixed(2),
      e.throughput_tokens_per_sec.toFixed(0),
    ]),
  );
  const header = [
    ...(runs.length > 1 ? ['run'] : []),
    't (s)',
    'mode',
    'action',
    'users',
    'saturation',
    'read p95 ms',
    'write p95 ms',
    'tok/s',
  ];
  const summaries = runs.flatMap((r) => {
    const s = r.doc.summary.autoscaling_summary;
    if (s === null) return [];
    const peak =
      s.peak_user_count === undefined
        ? ''
        : `; peak ${s.peak_user_count} users at ${(s.peak_throughput_tokens_per_sec ?? 0).toFixed(0)} tok/s`;
    return [
      `${runs.length > 1 ? `${r.label}: ` : ''}${s.initial_users} → ${s.final_users} users, ${s.total_scale_events} scale events${peak}.`,
    ];
  });
  const anyAutoscaling = runs.some((r) => r.doc.summary.autoscaling_summary !== null);
  return {
    id: 'autoscaling',
    title: 'Autoscaling',
    charts,
    tables: rows.length === 0 ? [] : [{ id: 'autoscale-decisions', title: 'Autoscaler decisions', header, rows }],
    notes: anyAutoscaling ? summaries : ['Autoscaling: not enabled in this run (--enable-autoscaling).'],
  };
}
