// Bandwidth and IOPS per tier, requests/s and tokens/s over time (from the per-second timeline).
import { MiB } from '../../../util/units.js';
import { makeChart } from '../chart-spec.js';
import type { LoadedRun } from '../run-input.js';
import {
  TIER_NAMES,
  compact,
  idleTiersNote,
  missingNote,
  perSecondRate,
  points,
  rate,
  seriesOf,
  tierRate,
  timelineTiers,
} from './members.js';
import type { Section } from './section.js';

export function throughputSection(runs: readonly LoadedRun[]): Section {
  const tiers = timelineTiers(runs);
  const charts = compact([
    ...tiers.map((t) =>
      makeChart(
        { id: `bandwidth-${t}`, title: `${TIER_NAMES[t]} bandwidth (MiB/s, completed I/O)`, xKind: 'seconds', yLabel: 'MiB/s' },
        seriesOf(runs, [
          tierRate(t, 'read', (s, p) => rate(s.read_bytes / MiB, p)),
          tierRate(t, 'write', (s, p) => rate(s.write_bytes / MiB, p)),
        ]),
      ),
    ),
    ...tiers.map((t) =>
      makeChart(
        { id: `iops-${t}`, title: `${TIER_NAMES[t]} operations per second`, xKind: 'seconds', yLabel: 'ops/s' },
        seriesOf(runs, [tierRate(t, 'read', (s, p) => rate(s.read_ops, p)), tierRate(t, 'write', (s, p) => rate(s.write_ops, p))]),
      ),
    ),
    makeChart(
      { id: 'requests', title: 'Requests completed per second', xKind: 'seconds', yLabel: 'req/s' },
      seriesOf(runs, [perSecondRate('requests/s', (p) => rate(p.requests_completed, p))]),
    ),
    makeChart(
      { id: 'tokens', title: 'Tokens per second', xKind: 'seconds', yLabel: 'tok/s' },
      seriesOf(runs, [perSecondRate('tokens/s', (p) => p.tokens_per_sec)]),
    ),
  ]);
  return {
    id: 'throughput',
    title: 'Bandwidth and IOPS over time',
    charts,
    tables: [],
    notes: [...missingNote('Per-second timeline', runs, (d) => points(d) !== undefined), ...idleTiersNote(runs)],
  };
}
