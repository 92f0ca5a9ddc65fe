// The cache directory's block device over time (/sys/block/<dev>/stat) and its summary table.
import { GiB, KiB, MiB } from '../../../util/units.js';
import { makeChart } from '../chart-spec.js';
import type { LoadedRun } from '../run-input.js';
import { compact, perDeviceSecond, seriesOf } from './members.js';
import type { Section } from './section.js';

export function deviceSection(runs: readonly LoadedRun[]): Section {
  const charts = compact([
    makeChart(
      { id: 'device-bandwidth', title: 'Device bandwidth (MiB/s, block layer)', xKind: 'seconds', yLabel: 'MiB/s' },
      seriesOf(runs, [
        perDeviceSecond('read', (p) => p.read_bytes_per_sec / MiB),
        perDeviceSecond('write', (p) => p.write_bytes_per_sec / MiB),
      ]),
    ),
    makeChart(
      { id: 'device-utilization', title: 'Device utilisation (% of each second busy)', xKind: 'seconds', yLabel: '%' },
      seriesOf(runs, [perDeviceSecond('utilisation', (p) => p.utilization_pct)]),
    ),
    makeChart(
      { id: 'device-queue', title: 'Device queue depth (average) and requests in flight', xKind: 'seconds', yLabel: 'requests' },
      seriesOf(runs, [perDeviceSecond('average queue depth', (p) => p.avg_queue_depth), perDeviceSecond('in flight', (p) => p.in_flight)]),
    ),
    makeChart(
      { id: 'device-request-size', title: 'Average device request size (KiB)', xKind: 'seconds', yLabel: 'KiB' },
      seriesOf(runs, [
        perDeviceSecond('read', (p) => (p.avg_read_request_bytes === null ? null : p.avg_read_request_bytes / KiB)),
        perDeviceSecond('write', (p) => (p.avg_write_request_bytes === null ? null : p.avg_write_request_bytes / KiB)),
      ]),
    ),
  ]);
  const summaryRows = runs.flatMap((r) => {
    const t = r.doc.kvcache_bench.device_telemetry;
    if (t === undefined || t === null) return [];
    const s = t.summary;
    const ms = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(3));
    return [
      [
        r.label,
        t.device,
        (s.read_bytes / GiB).toFixed(3),
        (s.write_bytes / GiB).toFixed(3),
        s.mean_utilization_pct.toFixed(1),
        s.mean_queue_depth.toFixed(2),
        String(s.max_in_flight),
        ms(s.read_await_ms),
        ms(s.write_await_ms),
      ],
    ];
  });
  const tables =
    summaryRows.length === 0
      ? []
      : [
          {
            id: 'device-summary',
            title: 'Device telemetry over the measured window',
            header: [
              'run',
              'device',
              'read GiB',
              'written GiB',
              'mean util %',
              'mean queue depth',
              'max in flight',
              'read await ms',
              'write await ms',
            ],
            rows: summaryRows,
          },
        ];
  const notes = runs.flatMap((r) => {
    const t = r.doc.kvcache_bench.device_telemetry;
    const who = runs.length === 1 ? 'this file' : r.label;
    if (t === undefined) return [`Device telemetry: not recorded in ${who}.`];
    if (t === null)
      return [`Device telemetry: not available for ${who} (the cache directory's block device could not be resolved; see its warnings).`];
    return [];
  });
  return { id: 'device', title: 'Device telemetry', charts, tables, notes };
}
