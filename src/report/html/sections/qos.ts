// End-to-end latency per QoS class against its SLA.
import type { LoadedRun } from '../run-input.js';
import type { Section } from './section.js';

export function qosSection(runs: readonly LoadedRun[]): Section {
  const rows = runs.flatMap((r) =>
    Object.entries(r.doc.summary.qos_metrics).map(([cls, q]) => {
      const who = runs.length > 1 ? [r.label] : [];
      if ('no_data' in q) return [...who, cls, '0', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'no requests'];
      return [
        ...who,
        cls,
        String(q.total_requests),
        q.latency_ms.p50.toFixed(2),
        q.latency_ms.p95.toFixed(2),
        q.latency_ms.p99.toFixed(2),
        q.sla.target_p95_ms.toFixed(0),
        `${(q.sla.compliance * 100).toFixed(1)} %`,
        q.sla.met ? 'MET' : 'NOT MET',
      ];
    }),
  );
  const header = [
    ...(runs.length > 1 ? ['run'] : []),
    'class',
    'requests',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'target p95 ms',
    'compliance',
    'SLA',
  ];
  return {
    id: 'qos',
    title: 'QoS per class (end-to-end latency)',
    charts: [],
    tables: rows.length === 0 ? [] : [{ id: 'qos', title: 'QoS classes', header, rows }],
    notes: rows.length === 0 ? ['QoS: no class saw a request.'] : [],
  };
}
