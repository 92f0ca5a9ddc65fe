// The report's document model: results files → sections of charts, tables and "not recorded" notes.
// Pure data (no HTML): html-writer.ts renders it, the page's script draws the charts from it.
import { GiB, KiB, MiB } from '../../util/units.js';
import { makeChart, seriesStyle } from './chart-spec.js';
import type { ChartSpec, RawSeries } from './chart-spec.js';
import { percentileCurve } from './percentiles.js';
import type { LoadedRun, ReportRun } from './run-input.js';
import type { DevicePoint, TimelinePoint } from './timeline-contract.js';
import { foldDeviceSliver, foldLastSliver, foldTimelineSliver } from '../sliver.js';

export interface TableSpec {
  readonly id: string;
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
  /** Shown folded (a long reference table): the reader opens it when needed. */
  readonly collapsed?: boolean;
}

export interface Section {
  readonly id: string;
  readonly title: string;
  readonly charts: readonly ChartSpec[];
  readonly tables: readonly TableSpec[];
  /** Lines such as "Per-second timeline: not recorded in this file". */
  readonly notes: readonly string[];
}

export interface ReportModel {
  readonly title: string;
  readonly runs: readonly LoadedRun[];
  readonly sections: readonly Section[];
}

const TIERS = ['gpu', 'cpu', 'storage'] as const;
type Tier = (typeof TIERS)[number];
const TIER_NAMES: Record<Tier, string> = { gpu: 'GPU tier', cpu: 'CPU tier', storage: 'Storage tier' };

/** One line of a chart before the runs are multiplied in: its label and how to read it from a run. */
interface Member {
  readonly label: string;
  readonly pick: (doc: ReportRun) => { x: readonly number[]; y: ReadonlyArray<number | null> } | undefined;
}

/** Every run × member as a styled series; with several runs the legend says "#2 read" (the run list above the charts gives #2's colour and name). */
function seriesOf(runs: readonly LoadedRun[], members: readonly Member[]): RawSeries[] {
  return runs.flatMap((run, r) =>
    members.flatMap((m, i) => {
      const xy = m.pick(run.doc);
      if (xy === undefined) return [];
      const label = runs.length > 1 ? `#${r + 1} ${m.label}` : m.label;
      return [{ spec: { label, run: r, ...seriesStyle(r, i, runs.length) }, ...xy }];
    }),
  );
}

const points = (doc: ReportRun): readonly TimelinePoint[] | undefined => {
  const p = doc.kvcache_bench.timeline?.points;
  return p === undefined || p.length === 0 ? undefined : p;
};
/** The timeline as its rates are drawn: a sliver at the end folded into the second before it (../sliver.ts). */
const ratePoints = (doc: ReportRun): readonly TimelinePoint[] | undefined => {
  const p = points(doc);
  const step = doc.kvcache_bench.timeline?.interval_sec;
  return p === undefined || step === undefined ? p : foldLastSliver(p, step, foldTimelineSliver);
};
/** The device series, every field a rate or an average over its interval: a sliver at the end folded likewise. */
const devicePoints = (doc: ReportRun): readonly DevicePoint[] | undefined => {
  const t = doc.kvcache_bench.device_telemetry;
  const p = t?.points;
  return t === undefined || t === null || p === undefined || p.length === 0
    ? undefined
    : foldLastSliver(p, t.interval_sec, foldDeviceSliver);
};

/** A member reading one value per timeline second (`from`: the points as they are, or with a last sliver folded for rates). */
const perSecond = (label: string, y: (p: TimelinePoint) => number | null, from = points): Member => ({
  label,
  pick: (doc) => {
    const p = from(doc);
    return p === undefined ? undefined : { x: p.map((q) => q.t_sec), y: p.map(y) };
  },
});
/** A member drawing a rate per timeline second. */
const perSecondRate = (label: string, y: (p: TimelinePoint) => number | null): Member => perSecond(label, y, ratePoints);
const perDeviceSecond = (label: string, y: (p: DevicePoint) => number | null): Member => ({
  label,
  pick: (doc) => {
    const p = devicePoints(doc);
    return p === undefined ? undefined : { x: p.map((q) => q.t_sec), y: p.map(y) };
  },
});
/** Per-second rate of an interval count: count ÷ the interval's real length (the last may be short, down to half a step). */
const rate = (n: number, p: { duration_sec: number }): number | null => (p.duration_sec > 0 ? n / p.duration_sec : null);

/** Tiers that appear in any run's timeline. */
function timelineTiers(runs: readonly LoadedRun[]): Tier[] {
  return TIERS.filter((t) => runs.some((r) => points(r.doc)?.some((p) => p.tiers[t] !== undefined)));
}

function tierMember(
  tier: Tier,
  label: string,
  y: (t: NonNullable<TimelinePoint['tiers'][Tier]>, p: TimelinePoint) => number | null,
  from = points,
): Member {
  return perSecond(
    label,
    (p) => {
      const t = p.tiers[tier];
      return t === undefined ? null : y(t, p);
    },
    from,
  );
}
const tierRate = (
  tier: Tier,
  label: string,
  y: (t: NonNullable<TimelinePoint['tiers'][Tier]>, p: TimelinePoint) => number | null,
): Member => tierMember(tier, label, y, ratePoints);

/** "Per-second timeline: not recorded in a.json, b.json" — or nothing when every run has it. */
function missingNote(what: string, runs: readonly LoadedRun[], has: (doc: ReportRun) => boolean): string[] {
  const without = runs.filter((r) => !has(r.doc));
  if (without.length === 0) return [];
  const where = runs.length === 1 ? 'this file' : without.map((r) => r.label).join(', ');
  return [`${what}: not recorded in ${where}.`];
}

const compact = <T>(xs: ReadonlyArray<T | undefined>): T[] => xs.filter((x): x is T => x !== undefined);

function throughputSection(runs: readonly LoadedRun[]): Section {
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
    notes: missingNote('Per-second timeline', runs, (d) => points(d) !== undefined),
  };
}

function latencyOverTimeSection(runs: readonly LoadedRun[]): Section {
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

function distributionSection(runs: readonly LoadedRun[]): Section {
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

function tiersSection(runs: readonly LoadedRun[]): Section {
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

function deviceSection(runs: readonly LoadedRun[]): Section {
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

function autoscalingSection(runs: readonly LoadedRun[]): Section {
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

function qosSection(runs: readonly LoadedRun[]): Section {
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

/** A setting's value as table text: JSON for lists and objects, '—' for none. */
function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Key/value rows with one column per run. */
function keyValueTable(
  id: string,
  title: string,
  runs: readonly LoadedRun[],
  values: (doc: ReportRun) => Record<string, unknown>,
): TableSpec {
  const perRun = runs.map((r) => values(r.doc));
  const keys = [...new Set(perRun.flatMap((v) => Object.keys(v)))];
  return {
    id,
    title,
    header: ['setting', ...runs.map((r, i) => (runs.length > 1 ? `#${i + 1} ${r.label}` : r.label))],
    rows: keys.map((k) => [k, ...perRun.map((v) => show(v[k]))]),
  };
}

/** The rows of a key/value table whose values differ between runs (what a comparison is about). */
function differingRows(t: TableSpec, id: string, title: string): TableSpec {
  return { ...t, id, title, rows: t.rows.filter((row) => new Set(row.slice(1)).size > 1) };
}

function parametersSection(runs: readonly LoadedRun[]): Section {
  const machine = (d: ReportRun): Record<string, unknown> => {
    const m = d.kvcache_bench.machine;
    return {
      cpu_model: m.cpu_model,
      cpu_count: m.cpu_count,
      total_memory_gib: (m.total_memory_bytes / GiB).toFixed(1),
      kernel_release: m.kernel_release,
      node_version: m.node_version,
      io_buffers: m.io_buffers,
      file_system: m.cache_dir?.file_system,
      block_device: m.cache_dir?.block_device,
      device_model: m.cache_dir?.device_model,
      kvcache_bench_version: d.kvcache_bench.version,
      schema_version: d.kvcache_bench.schema_version,
      started_at: d.kvcache_bench.started_at,
      stop_reason: d.kvcache_bench.stop_reason,
      measured_window_sec: d.kvcache_bench.measured_window_sec.toFixed(3),
      seed: d.seed,
    };
  };
  const flags = keyValueTable(
    'effective-config',
    'Effective flags (kvcache_bench.effective_config.args)',
    runs,
    (d) => d.kvcache_bench.effective_config.args,
  );
  const differing = runs.length > 1 ? [differingRows(flags, 'differing-flags', 'Flags that differ between the runs')] : [];
  return {
    id: 'parameters',
    title: 'Run parameters and machine',
    charts: [],
    tables: [keyValueTable('machine', 'Machine and run', runs, machine), ...differing, { ...flags, collapsed: true }],
    notes: [],
  };
}

/** The whole report of one run or a comparison of several (the first run is the baseline). */
export function buildReportModel(runs: readonly LoadedRun[]): ReportModel {
  const title = runs.length === 1 ? `kvcache-bench report: ${runs[0]?.label ?? ''}` : `kvcache-bench comparison of ${runs.length} runs`;
  return {
    title,
    runs,
    sections: [
      throughputSection(runs),
      latencyOverTimeSection(runs),
      distributionSection(runs),
      tiersSection(runs),
      deviceSection(runs),
      qosSection(runs),
      autoscalingSection(runs),
      parametersSection(runs),
    ],
  };
}
