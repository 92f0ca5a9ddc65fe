// Tier occupancy, evictions, hit rate, load and queue wait over time.
import { GiB } from '../../../util/units.js';
import { makeChart } from '../chart-spec.js';
import type { LoadedRun } from '../run-input.js';
import { compact, missingNote, perSecond, perSecondRate, points, rate, seriesOf, tierMember, tierRate, timelineTiers } from './members.js';
import type { Section } from './section.js';

export function tiersSection(runs: readonly LoadedRun[]): Section {
  const tiers = timelineTiers(runs);
  const charts = compact([
    makeChart(
      { id: 'occupancy', title: 'Tier occupancy (GiB held at each second)', xKind: 'seconds', yLabel: 'GiB' },
      seriesOf(
        runs,
        tiers.map((t) => tierMember(t, t, (s) => s.occupancy_bytes / GiB)),
      ),
    ),
    makeChart(
      { id: 'evictions', title: 'Evictions per second (entries moved down or dropped)', xKind: 'seconds', yLabel: 'entries/s' },
      seriesOf(runs, [
        perSecondRate('all tiers', (p) => rate(p.evictions, p)),
        ...tiers.map((t) => tierRate(t, t, (s, p) => rate(s.evictions, p))),
      ]),
    ),
    makeChart(
      { id: 'hit-rate', title: 'Cache hit rate per second (%)', xKind: 'seconds', yLabel: '%' },
      seriesOf(runs, [perSecond('hit rate', (p) => (p.hit_rate === null ? null : p.hit_rate * 100))]),
    ),
    makeChart(
      { id: 'load', title: 'Users and tier operations in flight', xKind: 'seconds', yLabel: 'count' },
      seriesOf(runs, [perSecond('active users', (p) => p.users), perSecond('operations in flight', (p) => p.in_flight_ops)]),
    ),
    makeChart(
      { id: 'queue-wait', title: 'Request queue wait p95 per second (ms)', xKind: 'seconds', yLabel: 'ms' },
      seriesOf(runs, [perSecond('queue wait p95', (p) => p.queue_wait_ms_p95)]),
    ),
  ]);
  return {
    id: 'tiers',
    title: 'Tier occupancy, evictions and load over time',
    charts,
    tables: [],
    notes: missingNote('Per-second occupancy and evictions', runs, (d) => points(d) !== undefined),
  };
}
