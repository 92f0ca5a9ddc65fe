import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PALETTE } from '../../../src/report/html/chart-spec.js';
import { buildReportModel } from '../../../src/report/html/model.js';
import type { ReportModel, Section } from '../../../src/report/html/model.js';
import { fixtureDoc, fixtureDocWithSeries, loaded } from './docs.js';
import { syntheticTimeline } from './synthetic-series.js';

const section = (m: ReportModel, id: string): Section => {
  const s = m.sections.find((x) => x.id === id);
  assert.ok(s !== undefined, id);
  return s;
};
const chartIds = (m: ReportModel): string[] => m.sections.flatMap((s) => s.charts.map((c) => c.id));

test('a file without the per-second series: histogram charts only, and each missing series is said', () => {
  const m = buildReportModel([loaded(fixtureDoc(), 'a.json', 'a.json (direct, 4 users)')]);
  assert.equal(m.title, 'kvcache-bench report: a.json (direct, 4 users)');
  assert.deepEqual(
    m.sections.map((s) => s.id),
    ['throughput', 'latency-time', 'distributions', 'tiers', 'device', 'qos', 'autoscaling', 'parameters'],
  );
  assert.deepEqual(chartIds(m), ['dist-storage-read', 'dist-storage-write', 'dist-request']);
  assert.deepEqual(section(m, 'throughput').notes, ['Per-second timeline: not recorded in this file.']);
  assert.deepEqual(section(m, 'device').notes, ['Device telemetry: not recorded in this file.']);
  assert.deepEqual(section(m, 'autoscaling').notes, ['Autoscaling: not enabled in this run (--enable-autoscaling).']);
  const read = section(m, 'distributions').charts[0];
  assert.deepEqual(
    read.series.map((s) => s.label),
    ['total', 'device (in read calls)', 'host (in the tool)'],
  );
  // The fixture's 10 reads: 1.5 ms in all, 1.25 ms in read calls, 0.25 ms in the tool.
  assert.deepEqual(
    read.data.slice(1).map((col) => [...new Set(col)]),
    [[1.5], [1.25], [0.25]],
  );
  assert.equal(read.data[0]?.length, 21);
});

test('a file with the series: bandwidth per tier is bytes ÷ 2^20 ÷ the interval length (a short last second included)', () => {
  const doc = fixtureDocWithSeries({ seconds: 3, lastDurationSec: 0.5, tiers: ['cpu', 'storage'] });
  const m = buildReportModel([loaded(doc)]);
  assert.deepEqual(chartIds(m), [
    'bandwidth-cpu',
    'bandwidth-storage',
    'iops-cpu',
    'iops-storage',
    'requests',
    'tokens',
    'latency-read',
    'latency-write',
    'dist-storage-read',
    'dist-storage-write',
    'dist-request',
    'occupancy',
    'evictions',
    'hit-rate',
    'load',
    'queue-wait',
    'device-bandwidth',
    'device-utilization',
    'device-queue',
    'device-request-size',
  ]);
  const points = syntheticTimeline({ seconds: 3, lastDurationSec: 0.5, tiers: ['cpu', 'storage'] }).points;
  const bw = section(m, 'throughput').charts.find((c) => c.id === 'bandwidth-storage')!;
  assert.deepEqual(bw.data[0], [1, 2, 2.5]);
  assert.deepEqual(
    bw.data[1],
    points.map((p) => Number((p.tiers.storage!.read_bytes / 2 ** 20 / p.duration_sec).toPrecision(5))), // 5 significant digits
  );
  assert.deepEqual(
    bw.series.map((s) => s.label),
    ['read', 'write'],
  );
  // Latency over time: the tool's percentiles and the device's await, in one chart.
  const lat = section(m, 'latency-time').charts[0];
  assert.deepEqual(
    lat.series.map((s) => s.label),
    ['p50', 'p95', 'p99', 'device await (mean per block request)'],
  );
  assert.deepEqual(section(m, 'throughput').notes, []);
  assert.deepEqual(section(m, 'device').tables[0]?.rows[0]?.slice(0, 2), ['run.json', 'vda']);
});

test('an empty timeline (a window under a second) draws no per-second chart and says so', () => {
  const doc = fixtureDocWithSeries({ seconds: 0 });
  const m = buildReportModel([loaded(doc)]);
  assert.deepEqual(chartIds(m), ['dist-storage-read', 'dist-storage-write', 'dist-request']);
  assert.deepEqual(section(m, 'throughput').notes, ['Per-second timeline: not recorded in this file.']);
});

test('unresolvable device: the telemetry section says why, without charts', () => {
  const m = buildReportModel([loaded(fixtureDocWithSeries({ seconds: 2 }, false))]);
  assert.deepEqual(section(m, 'device').charts, []);
  assert.deepEqual(section(m, 'device').notes, [
    "Device telemetry: not available for this file (the cache directory's block device could not be resolved; see its warnings).",
  ]);
});

test('several runs: one colour per run, members told apart by dash, runs named in the legend and the notes', () => {
  const a = loaded(fixtureDocWithSeries({ seconds: 2 }), 'a.json', 'a.json (direct, 4 users)');
  const b = loaded(fixtureDoc(), 'b.json', 'b.json (buffered, 16 users)');
  const m = buildReportModel([a, b]);
  assert.equal(m.title, 'kvcache-bench comparison of 2 runs');
  const read = section(m, 'distributions').charts[0];
  assert.deepEqual(
    read.series.map((s) => [s.label, s.color, s.dash ?? null]),
    [
      ['#1 total', PALETTE[0], null],
      ['#1 device (in read calls)', PALETTE[0], [6, 4]],
      ['#1 host (in the tool)', PALETTE[0], [2, 3]],
      ['#2 total', PALETTE[1], null],
      ['#2 device (in read calls)', PALETTE[1], [6, 4]],
      ['#2 host (in the tool)', PALETTE[1], [2, 3]],
    ],
  );
  assert.deepEqual(section(m, 'throughput').notes, ['Per-second timeline: not recorded in b.json (buffered, 16 users).']);
  const [machine, differing, all] = section(m, 'parameters').tables;
  assert.deepEqual(machine?.header, ['setting', '#1 a.json (direct, 4 users)', '#2 b.json (buffered, 16 users)']);
  assert.deepEqual(differing?.rows, []); // the same fixture flags
  assert.equal(all?.collapsed, true);
});

test('comparison: the flags that differ between the runs get their own table', () => {
  const b = fixtureDoc();
  const d16 = {
    ...b,
    kvcache_bench: { ...b.kvcache_bench, effective_config: { ...b.kvcache_bench.effective_config, args: { num_users: 16, seed: 42 } } },
  };
  const m = buildReportModel([loaded(fixtureDoc(), 'a.json'), loaded(d16, 'b.json')]);
  const differing = section(m, 'parameters').tables.find((t) => t.id === 'differing-flags');
  assert.deepEqual(differing?.rows, [['num_users', '4', '16']]);
});
