// Storage read and write latency per second: the tool's percentiles beside the device's await.
import type { ChartSpec } from '../chart-spec.js';
import { makeChart } from '../chart-spec.js';
import type { LoadedRun } from '../run-input.js';
import type { TimelinePoint } from '../timeline-contract.js';
import { compact, missingNote, perDeviceSecond, perSecond, points, seriesOf } from './members.js';
import type { Section } from './section.js';

export function latencyOverTimeSection(runs: readonly LoadedRun[]): Section {
  const op = (which: 'read' | 'write'): ChartSpec | undefined => {
    const lat = (p: TimelinePoint) => (which === 'read' ? p.storage_read_latency_ms : p.storage_write_latency_ms);
    const members = [
      perSecond('p50', (p) => lat(p).p50),
      perSecond('p95', (p) => lat(p).p95),
      perSecond('p99', (p) => lat(p).p99),
      // Device vs host: the block layer's mean time per request (await) beside the tool's per-operation percentiles.
      perDeviceSecond('device await (mean per block request)', (p) => (which === 'read' ? p.read_await_ms : p.write_await_ms)),
    ];
    return makeChart(
      {
        id: `latency-${which}`,
        title: `Storage ${which} latency per second (ms): tool per entry operation vs device await`,
        xKind: 'seconds',
        yLabel: 'ms',
      },
      seriesOf(runs, members),
    );
  };
  return {
    id: 'latency-time',
    title: 'Latency over time',
    charts: compact([op('read'), op('write')]),
    tables: [],
    notes: missingNote('Per-second latency', runs, (d) => points(d) !== undefined),
  };
}
