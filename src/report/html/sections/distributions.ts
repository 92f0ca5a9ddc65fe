// Latency distributions from the saved HDR histograms, one chart per group of histograms.
import { makeChart } from '../chart-spec.js';
import { percentileCurve } from '../percentiles.js';
import type { LoadedRun } from '../run-input.js';
import { compact, seriesOf } from './members.js';
import type { Section } from './section.js';

/** The distribution charts: histogram names per chart, with what each stands for. */
const DISTRIBUTIONS: ReadonlyArray<{ id: string; title: string; members: ReadonlyArray<{ histogram: string; label: string }> }> = [
  {
    id: 'storage-read',
    title: 'Storage read latency distribution (per entry read, ms)',
    members: [
      { histogram: 'storage_read', label: 'total' },
      { histogram: 'storage_read_device', label: 'device (in read calls)' },
      { histogram: 'storage_read_host', label: 'host (in the tool)' },
    ],
  },
  {
    id: 'storage-write',
    title: 'Storage write latency distribution (per entry write, ms)',
    members: [
      { histogram: 'storage_write', label: 'total' },
      { histogram: 'storage_write_device', label: 'device (write + fsync calls)' },
      { histogram: 'storage_write_host', label: 'host (in the tool)' },
    ],
  },
  {
    id: 'demotion',
    title: 'Demotion latency distribution (ms)',
    members: [
      { histogram: 'storage_demote_write', label: 'storage demote write' },
      { histogram: 'cpu_demote_read', label: 'CPU demote read' },
      { histogram: 'gpu_demote_read', label: 'GPU demote read' },
    ],
  },
  {
    id: 'cpu',
    title: 'CPU tier latency distribution (ms)',
    members: [
      { histogram: 'cpu_read', label: 'read' },
      { histogram: 'cpu_write', label: 'write' },
    ],
  },
  {
    id: 'gpu',
    title: 'GPU tier latency distribution (ms)',
    members: [
      { histogram: 'gpu_read', label: 'read' },
      { histogram: 'gpu_write', label: 'write' },
    ],
  },
  {
    id: 'request',
    title: 'Request latency distribution (ms)',
    members: [
      { histogram: 'request_end_to_end', label: 'end to end' },
      { histogram: 'request_storage', label: 'storage time' },
      { histogram: 'request_queue_wait', label: 'queue wait' },
    ],
  },
];

export function distributionSection(runs: readonly LoadedRun[]): Section {
  const charts = compact(
    DISTRIBUTIONS.map((d) =>
      makeChart(
        { id: `dist-${d.id}`, title: d.title, xKind: 'nines', yLabel: 'ms', yLog: true },
        seriesOf(
          runs,
          d.members.map((m) => ({
            label: m.label,
            pick: (doc) => {
              const h = doc.kvcache_bench.latency_histograms[m.histogram];
              if (h === undefined || h.count === 0) return undefined;
              const c = percentileCurve(h.encoded, h.count);
              return { x: c.nines, y: c.ms };
            },
          })),
        ),
      ),
    ),
  );
  return {
    id: 'distributions',
    title: 'Latency distributions (from the saved HDR histograms)',
    charts,
    tables: [],
    notes: [
      'Percentile axis: 90 % = one nine, 99 % = two, 99.9 % = three. Each curve stops at the deepest percentile its sample count resolves (100 samples: p99).',
    ],
  };
}
