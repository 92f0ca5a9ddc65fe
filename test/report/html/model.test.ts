import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PALETTE } from '../../../src/report/html/chart-spec.js';
import { buildReportModel } from '../../../src/report/html/model.js';
import type { ReportModel } from '../../../src/report/html/model.js';
import type { LoadedOption } from '../../../src/report/html/inputs.js';
import type { Section } from '../../../src/report/html/sections/section.js';
import { ReportReplaySchema } from '../../../src/report/html/replay-input.js';
import type { ReportReplay } from '../../../src/report/html/replay-input.js';
import { ReportSummarySchema } from '../../../src/report/html/summary-input.js';
import { fixtureDoc, fixtureDocWithSeries, loaded, replayDoc, summaryDoc } from './docs.js';

const parseReplay = (doc: unknown): ReportReplay => ReportReplaySchema.parse(doc);
import { syntheticTimeline } from './synthetic-series.js';

const section = (m: ReportModel, id: string): Section => {
  const s = m.sections.find((x) => x.id === id);
  assert.ok(s !== undefined, id);
  return s;
};
/** The sections of a report of runs, in order (a replay adds its own after them). */
const RUN_SECTIONS = [
  'throughput',
  'latency-time',
  'distributions',
  'tiers',
  'kv-blocks',
  'kv-pool',
  'metadata-ops',
  'device',
  'qos',
  'ttft',
  'autoscaling',
  'parameters',
];
const chartIds = (m: ReportModel): string[] => m.sections.flatMap((s) => s.charts.map((c) => c.id));

test('a file without the per-second series: histogram charts only, and each missing series is said', () => {
  const m = buildReportModel([loaded(fixtureDoc(), 'a.json', 'a.json (direct, 4 users)')]);
  assert.equal(m.title, 'kvcache-bench report: a.json (direct, 4 users)');
  assert.deepEqual(
    m.sections.map((s) => s.id),
    RUN_SECTIONS,
  );
  assert.deepEqual(chartIds(m), ['dist-storage-read', 'dist-storage-write', 'dist-request']);
  assert.match(section(m, 'kv-blocks').notes[0] ?? '', /^KV blocks: not a block-granular run/);
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

test("a tier no run used (a storage-only run's CPU tier of 0 GiB) is not charted, and a note says why; one run using it brings it back", () => {
  const doc = fixtureDocWithSeries({ seconds: 3, tiers: ['cpu', 'storage'] });
  const idle = { read_bytes: 0, write_bytes: 0, read_ops: 0, write_ops: 0, occupancy_bytes: 0, evictions: 0 };
  const points = doc.kvcache_bench.timeline.points.map((p) => ({ ...p, tiers: { ...p.tiers, cpu: idle } }));
  const storageOnly = { ...doc, kvcache_bench: { ...doc.kvcache_bench, timeline: { interval_sec: 1, points } } };
  const m = buildReportModel([loaded(storageOnly)]);
  const ids = chartIds(m);
  assert.ok(ids.includes('bandwidth-storage') && ids.includes('iops-storage'), ids.join(' '));
  assert.ok(!ids.includes('bandwidth-cpu') && !ids.includes('iops-cpu'), ids.join(' '));
  assert.deepEqual(section(m, 'throughput').notes, [
    'Not charted: CPU tier, which no run read, wrote or filled (0 GiB, or never reached).',
  ]);
  const occupancy = section(m, 'tiers').charts.find((c) => c.id === 'occupancy');
  assert.deepEqual(
    occupancy?.series.map((x) => x.label),
    ['storage'],
  );
  const both = buildReportModel([loaded(storageOnly, 'a.json'), loaded(doc, 'b.json')]);
  assert.ok(chartIds(both).includes('bandwidth-cpu'));
  assert.deepEqual(section(both, 'throughput').notes, []);
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

test('a sliver last second (9 ms holding 280 MiB of reads cut short) is folded into the second before it in the rate charts, not drawn as a spike', () => {
  const doc = fixtureDocWithSeries({ seconds: 3, lastDurationSec: 0.009, tiers: ['storage'] });
  const points = doc.kvcache_bench.timeline.points;
  const [, whole, sliver] = points;
  assert.ok(whole !== undefined && sliver !== undefined);
  const cut = {
    ...sliver,
    requests_completed: 1,
    tiers: { storage: { ...sliver.tiers.storage!, read_bytes: 280 * 2 ** 20, read_ops: 70 } },
  };
  const withCut = { ...doc, kvcache_bench: { ...doc.kvcache_bench, timeline: { interval_sec: 1, points: [points[0], whole, cut] } } };
  const m = buildReportModel([loaded(withCut)]);
  const chart = (sectionId: string, id: string) => section(m, sectionId).charts.find((c) => c.id === id)!;
  const bw = chart('throughput', 'bandwidth-storage');
  const mib = (b: number): number => b / 2 ** 20;
  const storage = (p: typeof whole) => p.tiers.storage!;
  // The folded point stays at x = 2 and covers 1.009 s: (whole + sliver) bytes ÷ 1.009 s. Unfolded: 31111 MiB/s at x = 2.009.
  assert.deepEqual(bw.data[0], [1, 2]);
  assert.deepEqual(bw.data[1], [
    Number((mib(storage(points[0]).read_bytes) / 1).toPrecision(5)),
    Number(((mib(storage(whole).read_bytes) + 280) / 1.009).toPrecision(5)),
  ]);
  assert.deepEqual(chart('throughput', 'iops-storage').data[1]?.[1], Number(((storage(whole).read_ops + 70) / 1.009).toPrecision(5)));
  assert.deepEqual(chart('throughput', 'requests').data[1]?.[1], Number(((whole.requests_completed + 1) / 1.009).toPrecision(5)));
  assert.deepEqual(
    chart('throughput', 'tokens').data[1]?.[1],
    Number(((whole.tokens_per_sec * 1 + sliver.tokens_per_sec * 0.009) / 1.009).toPrecision(5)),
  );
  // State and percentiles are not rates: the sliver's own point is drawn where it is.
  assert.deepEqual(chart('tiers', 'occupancy').data[0], [1, 2, 2.009]);
  assert.deepEqual(chart('latency-time', 'latency-read').data[0], [1, 2, 2.009]);
  // The device series too: its last point, 9 ms long, folded into the second before it.
  const dev = doc.kvcache_bench.device_telemetry!.points;
  const devBw = chart('device', 'device-bandwidth');
  assert.deepEqual(devBw.data[0], [1, 2]);
  assert.deepEqual(
    devBw.data[1]?.[1],
    Number(((dev[1].read_bytes_per_sec * 1 + dev[2].read_bytes_per_sec * 0.009) / 1.009 / 2 ** 20).toPrecision(5)),
  );
});

test('a last interval of half a step or more is a second of its own, drawn at its own rate', () => {
  const doc = fixtureDocWithSeries({ seconds: 3, lastDurationSec: 0.5, tiers: ['storage'] });
  const m = buildReportModel([loaded(doc)]);
  const bw = section(m, 'throughput').charts.find((c) => c.id === 'bandwidth-storage')!;
  const last = doc.kvcache_bench.timeline.points[2];
  assert.deepEqual(bw.data[0], [1, 2, 2.5]);
  assert.equal(bw.data[1]?.[2], Number((last.tiers.storage!.read_bytes / 2 ** 20 / 0.5).toPrecision(5)));
});

test('a block-granular run: its token hit rates per tier beside the ideal, and the sizes of the blocks moved', () => {
  const doc = fixtureDoc();
  const kv = {
    block_tokens: 512,
    block_bytes: 512 * 131072,
    keys: 'trace_hash_ids' as const,
    requests: 10,
    tokens_asked: 1000,
    blocks_asked: 4,
    token_hit_rate: { gpu: 0, cpu: 0.25, storage: 0.125, total: 0.375 },
    block_hit_rate: { gpu: 0, cpu: 0.25, storage: 0.25, total: 0.5 },
    ideal: { tracked: true, token_hit_rate: 0.5, block_hit_rate: 0.5 },
    blocks_written: 2,
    tokens_written: 625,
    blocks_found_written: 0,
    blocks_not_written: 0,
    decode_block_reads: 0,
    decode_block_misses: 0,
    block_reads_per_sec: 2,
    block_writes_per_sec: 2,
    sizes: {
      count: 4,
      min_bytes: 1 << 20,
      mean_bytes: 3 << 20,
      max_bytes: 4 << 20,
      buckets: [
        { upto_bytes: 1 << 20, blocks: 1 },
        { upto_bytes: 4 << 20, blocks: 3 },
      ],
    },
  };
  const m = buildReportModel([loaded({ ...doc, kvcache_bench: { ...doc.kvcache_bench, kv_blocks: kv } }, 'b.json', 'b.json')]);
  const s = section(m, 'kv-blocks');
  assert.deepEqual(s.notes, []);
  assert.deepEqual(s.tables[0]?.rows, [
    ['512 (64.00 MiB)', 'trace hash ids', '10', '37.5 %', '0.0 %', '25.0 %', '12.5 %', '50.0 %', '50.0 %', '2.0', '2.0'],
  ]);
  assert.deepEqual(s.tables[1]?.rows, [
    ['≤ 1.00', '1', '25.0 %'],
    ['≤ 4.00', '3', '75.0 %'],
  ]);
});

test('a replay alone: its own section (what was replayed, latency percentiles), no run section with nothing in it', () => {
  const replay = replayDoc();
  const m = buildReportModel([{ path: 'r.json', label: 'r.json (replay, direct)', replay: parseReplay(replay) }]);
  assert.equal(m.title, 'kvcache-bench report: r.json (replay, direct)');
  assert.deepEqual(
    m.sections.map((s) => s.id),
    ['replay'],
  );
  const [facts, latency] = section(m, 'replay').tables;
  const fact = (label: string): string[] | undefined => facts?.rows.find((r) => r[0] === label)?.slice(1);
  assert.deepEqual(facts?.header, ['', 'r.json (replay, direct)']);
  assert.deepEqual(fact('writes / reads / deletes'), ['4 / 5 / 1']);
  assert.deepEqual(fact('written / read (GiB)'), ['0.004 / 0.010']);
  assert.deepEqual(fact('write / read (GiB/s over the measured window)'), ['0.002 / 0.005']);
  assert.deepEqual(fact('reads or deletes of keys never written'), ['1']);
  assert.deepEqual(fact('device read / written (GiB)'), ['n/a (block device not resolvable)']);
  assert.deepEqual(latency?.header, ['operation', 'samples', 'p50', 'p95', 'p99', 'p999']);
  // 5 reads: a median, and no p95 (it needs 20 samples) — as the console says n/a.
  assert.deepEqual(latency?.rows[1], [
    'read (device)',
    '5',
    replay.summary.cache_stats.storage_read_device_p50_ms?.toFixed(3),
    'n/a',
    'n/a',
    'n/a',
  ]);
  assert.deepEqual(latency?.rows[3]?.slice(0, 2), ['write (total)', '4']);
});

test('a replay beside a run: the run sections chart the run as #2 (its place in the list), then the replay section', () => {
  const run = loaded(fixtureDoc(), 'a.json', 'a.json (direct, 4 users)');
  const replay = { path: 'r.json', label: 'r.json (replay, direct)', replay: parseReplay(replayDoc()) };
  const m = buildReportModel([replay, run]);
  assert.equal(m.title, 'kvcache-bench comparison of 2 results');
  assert.deepEqual(
    m.sections.map((s) => s.id),
    [...RUN_SECTIONS, 'replay'],
  );
  const read = section(m, 'distributions').charts[0];
  assert.deepEqual(
    read.series.map((s) => [s.label, s.run, s.color]),
    [
      ['#2 total', 1, PALETTE[1]],
      ['#2 device (in read calls)', 1, PALETTE[1]],
      ['#2 host (in the tool)', 1, PALETTE[1]],
    ],
  );
  assert.deepEqual(section(m, 'parameters').tables[0]?.header, ['setting', '#2 a.json (direct, 4 users)']);
  assert.deepEqual(section(m, 'replay').tables[0]?.header, ['', '#1 r.json (replay, direct)']);
});

test("a merged summary: one row per option, ours beside upstream's, missing files and every rank listed", () => {
  const summary = summaryDoc();
  const m = buildReportModel(mergedOptions(summary));
  assert.deepEqual(
    m.sections.map((s) => s.id),
    ['merged-summary'],
  );
  const s = section(m, 'merged-summary');
  assert.deepEqual(
    s.tables.map((t) => t.id),
    ['merged-options', 'merged-hosts', 'merged-ranks'],
  );
  const [opts, , ranks] = s.tables;
  const o = summary.options['1'];
  assert.deepEqual(opts?.rows[0]?.slice(0, 4), ['#1 s.json option 1', '2', '1', o.kvcache_bench.storage_read_gib_per_sec.toFixed(3)]);
  assert.equal(opts?.rows[0]?.[7], '1.250 (20 samples)');
  assert.equal(opts?.rows[0]?.at(-1), 'NO');
  assert.equal(ranks?.collapsed, true);
  assert.deepEqual(
    ranks?.rows.map((r) => [r[0], r[1], r[2], r[3], r.at(-1)]),
    [
      ['#1 s.json option 1', '1', '0', 'vm', 'option_1/trial_1/rank_0/r.json'],
      ['#1 s.json option 1', '1', '1', 'vm', 'option_1/trial_1/rank_1/r.json'],
      ['#2 s.json option 2', '1', '0', 'vm', 'option_2/trial_1/rank_0/r.json'],
      ['#2 s.json option 2', '1', '1', 'vm', 'option_2/trial_1/rank_1/r.json'],
    ],
  );
  assert.deepEqual(s.notes.slice(0, 2), [
    's.json: PARTIAL — some rank files or trials are missing (listed below).',
    '#2 s.json option 2: missing option_2/trial_1/rank_2/kvcache_results_*.json: rank 2 wrote nothing',
  ]);
});

type Summary = ReturnType<typeof summaryDoc>;
type Host = Summary['options'][string]['kvcache_bench']['trials'][number]['device_per_host'][number];

/** The merged-summary section of `summary` as the report reads it from a file. */
/** A summary's options as `kv-cache report` loads them from s.json (plain data, as a file holds it). */
function mergedOptions(summary: Summary): LoadedOption[] {
  const parsed = ReportSummarySchema.parse(JSON.parse(JSON.stringify(summary)));
  return Object.entries(parsed.options).map(([option, merged]) => ({
    path: 's.json',
    label: `s.json option ${option}`,
    option,
    merged,
    summary: parsed,
  }));
}

function mergedSection(summary: Summary): Section {
  return section(buildReportModel(mergedOptions(summary)), 'merged-summary');
}

/** The summary with option `id`'s first trial's hosts replaced by `edit` of them (plain data, as a file holds it). */
function withHosts(s: Summary, id: string, edit: (h: Host) => object): Summary {
  const o = s.options[id];
  const [t, ...rest] = o.kvcache_bench.trials;
  const trial = { ...t, device_per_host: t.device_per_host.map(edit) as Host[] };
  return { ...s, options: { ...s.options, [id]: { ...o, kvcache_bench: { ...o.kvcache_bench, trials: [trial, ...rest] } } } };
}

test("a merged summary's hosts: device bytes against the ranks', the metadata allowed, the check, a failing host marked NO and named", () => {
  // Option 2's host wrote 1 GiB beyond its ranks' 6, within their 1.5 GiB of calibrated metadata: it passes.
  const s = mergedSection(
    withHosts(summaryDoc(), '2', (h) => ({
      ...h,
      read_bytes: 8 * 2 ** 30,
      written_bytes: 7 * 2 ** 30,
      metadata_write_bytes: 1.5 * 2 ** 30,
      bytes_check: 'device_writes_metadata',
    })),
  );
  const hosts = s.tables.find((t) => t.id === 'merged-hosts');
  assert.ok(hosts !== undefined);
  assert.deepEqual(hosts.header, [
    'option',
    'trial',
    'host',
    'device',
    'ranks',
    'device read GiB',
    "ranks' read GiB",
    'device written GiB',
    "ranks' written GiB",
    'file-system metadata allowed GiB (up to)',
    'bytes_check',
    'passes',
  ]);
  // The fixture's two ranks each moved 4 GiB read and 3 GiB written through the storage tier; the device saw 4 and 3 in all.
  assert.deepEqual(hosts.rows, [
    [
      '#1 s.json option 1',
      '1',
      'vm',
      'nvme9n1',
      '0, 1',
      '4.000',
      '8.000',
      '3.000',
      '6.000',
      'none',
      'device_reads_below_tool,device_writes_below_tool',
      'NO',
    ],
    ['#2 s.json option 2', '1', 'vm', 'nvme9n1', '0, 1', '8.000', '8.000', '7.000', '6.000', '1.500', 'device_writes_metadata', 'yes'],
  ]);
  assert.ok(
    s.notes.includes(
      "Device bytes not explained by the ranks' own (NO below): #1 s.json option 1 trial 1 vm:nvme9n1 (device_reads_below_tool,device_writes_below_tool).",
    ),
  );
});

test("a merged summary 1.0.0: a host without the metadata allowance (or, in the first ones, without the ranks' bytes) reads n/a", () => {
  const early = withHosts(summaryDoc(), '1', ({ metadata_write_bytes: _m, ...h }) => h);
  const first = withHosts(
    early,
    '2',
    ({ metadata_write_bytes: _m, tool_read_bytes: _r, tool_written_bytes: _w, bytes_check: _c, ...h }) => h,
  );
  const s = mergedSection({ ...first, schema_version: '1.0.0' });
  assert.deepEqual(
    s.tables.find((t) => t.id === 'merged-hosts')?.rows.map((r) => r.slice(5)),
    [
      ['4.000', '8.000', '3.000', '6.000', 'n/a (summary 1.0.0)', 'device_reads_below_tool,device_writes_below_tool', 'NO'],
      ['4.000', 'n/a', '3.000', 'n/a', 'n/a (summary 1.0.0)', 'n/a (not judged in this summary)', 'n/a'],
    ],
  );
});

test("the machine table shows where the harness's time went: the payload wait share against the verdict's limit", () => {
  const doc = fixtureDoc();
  const payload = {
    filler: '2 worker threads',
    stamped_bytes: 3 * 2 ** 30,
    copied_bytes: 2 ** 29,
    write_wait_ms: 830,
    chunks_waited_for: 12,
    write_wait_share: 0.83,
  };
  const m = buildReportModel([
    loaded({ ...doc, kvcache_bench: { ...doc.kvcache_bench, payload_generation: payload } }, 'p.json', 'p.json'),
  ]);
  const rows = section(m, 'parameters').tables[0]?.rows ?? [];
  const row = (k: string): string | undefined => rows.find((r) => r[0] === k)?.[1];
  assert.equal(row('payload_write_wait_share'), '83.0 % (verdict limit 10 %)');
  assert.equal(row('payload_chunks_waited_for'), '12');
  assert.equal(row('payload_stamped_gib'), '3.000');
  assert.equal(row('payload_copied_gib'), '0.500');
  assert.equal(row('payload_filler'), '2 worker threads');
  // A file without the block (trace mode, before schema 2.3.0): no payload rows.
  const { payload_generation: _payload, ...bare } = doc.kvcache_bench;
  const none = buildReportModel([loaded({ ...doc, kvcache_bench: bare }, 'a.json', 'a.json')]);
  assert.deepEqual(
    (section(none, 'parameters').tables[0]?.rows ?? []).filter((r) => r[0]?.startsWith('payload_')),
    [],
  );
});
