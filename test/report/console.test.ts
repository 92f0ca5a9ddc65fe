// The console output: the summary printed from the results document (what is printed is what is
// saved), the replay summary, the banner and the progress line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { banner, formatSummary, validityLines } from '../../src/report/console.js';
import { formatReplaySummary } from '../../src/report/replay-report.js';
import { buildResultsJson, machineJson } from '../../src/report/results-json.js';
import { SCHEMA_VERSION } from '../../src/report/results-schema.js';
import type { ReplayResultsDocument, ResultsDocument } from '../../src/report/results-schema.js';
import type { PerformanceProfile } from '../../src/settings/choices.js';
import { Recorder } from '../../src/metrics/recorder.js';
import type { CacheCounters } from '../../src/metrics/recorder.js';
import type { RunResult } from '../../src/metrics/result.js';
import { parseRunArgs } from '../../src/cli/run-args.js';
import { GiB, MiB } from '../../src/util/units.js';
import { FIXTURE_MACHINE, runResultFixture } from './fixtures.js';

const RULE = '='.repeat(80);

function summaryLines(doc: ResultsDocument, profile: PerformanceProfile = 'latency'): string[] {
  return formatSummary(doc, profile).split('\n');
}

/** The summary of the fixture run with some of its fields replaced (a RunResult is plain data). */
function linesOf(over: Partial<RunResult> = {}, profile: PerformanceProfile = 'latency'): string[] {
  return summaryLines(buildResultsJson({ ...runResultFixture(), ...over }), profile);
}

/** The lines under a section's heading, up to the blank line or closing rule that ends it. */
function sectionOf(lines: readonly string[], title: string): string[] {
  const at = lines.indexOf(`### ${title} ###`);
  assert.notEqual(at, -1, `no section ${title}`);
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((l) => l === '' || l === RULE);
  return end === -1 ? rest : rest.slice(0, end);
}

function headings(lines: readonly string[]): string[] {
  return lines.filter((l) => l.startsWith('### ')).map((l) => l.slice(4, -4));
}

function assertHasLines(lines: readonly string[], expected: readonly string[]): void {
  for (const line of expected) assert.ok(lines.includes(line), `missing line ${JSON.stringify(line)} in\n${lines.join('\n')}`);
}

function withCounters(over: Partial<CacheCounters>): Partial<RunResult> {
  const r = runResultFixture();
  return { recorded: { ...r.recorded, counters: { ...r.recorded.counters, ...over } } };
}

/** The sections every run prints, in the reference's order, our additions (device I/O, harness) last. */
/** The device telemetry section (console-telemetry.ts; its content is tested there). */
const TELEMETRY = 'DEVICE TELEMETRY (per-second /sys/block/<dev>/stat, whole device)';
const ALWAYS = [
  'OVERALL PERFORMANCE',
  'END-TO-END LATENCY',
  'PER-REQUEST STORAGE LATENCY',
  'STORAGE PERFORMANCE',
  'CACHE TIER DISTRIBUTION',
  'TIER-SPECIFIC KV BYTES (GiB, incl. demotion traffic)',
  'STORAGE KV BANDWIDTH (GiB/s over the measured window)',
  'TIER-SPECIFIC LATENCIES (p95, ms)',
  'STORAGE TIER LATENCY BREAKDOWN (p95, ms)',
  'CACHE TYPE BREAKDOWNS',
  'MULTI-TURN',
];

test('sections in the reference order, our additions last, framed by rules', () => {
  const lines = linesOf();
  assert.deepEqual(lines.slice(0, 3), [RULE, 'BENCHMARK RESULTS', RULE]);
  assert.equal(lines.at(-1), RULE);
  assert.deepEqual(headings(lines), [...ALWAYS, 'QOS', 'DEVICE I/O (kernel counters, whole device)', TELEMETRY, 'HARNESS', 'VALIDITY']);
  assert.deepEqual(headings(linesOf({}, 'throughput')), [
    ...ALWAYS,
    'DEVICE I/O (kernel counters, whole device)',
    TELEMETRY,
    'HARNESS',
    'VALIDITY',
  ]);
});

test('the summary prints the saved figures with their units', () => {
  const lines = linesOf();
  assert.deepEqual(lines.slice(3, 5), [
    'KV bytes per token: 4,096 (4.0 KiB) — live entries: 5',
    'Entry size MiB: min 1.0, mean 1.5, p95 2.0, max 2.0',
  ]);
  assert.deepEqual(sectionOf(lines, 'OVERALL PERFORMANCE'), [
    '  Requests completed: 4   Tokens generated: 400',
    '  Measured window: 10.00 s (nominal 60 s; stop: max_requests)',
    '  Wall-clock throughput: 40.00 tok/s   Requests/s: 0.40',
    '  Storage throughput (reference formula, tokens ÷ summed I/O time): 200.00 tok/s',
  ]);
  // e2e samples 0.5, 1.5, 1 and 1.25 ms, exact in the histogram
  assert.deepEqual(sectionOf(lines, 'END-TO-END LATENCY'), [
    '  mean 1.06 ms   p50 1.00   p95 n/a (4 samples)   p99 n/a (4 samples)   p99.9 n/a (4 samples)',
  ]);
  assert.deepEqual(sectionOf(lines, 'STORAGE PERFORMANCE'), [
    '  Cache hit rate: 75.0 %   (hits 30, misses 10)',
    '  Total KV read: 3.00 GiB   written: 2.00 GiB   R/W ratio: 1.50',
    '  KV read operations: 10 (1.00/s)   write operations: 5 (0.50/s)',
  ]);
  assert.deepEqual(sectionOf(lines, 'CACHE TIER DISTRIBUTION'), [
    '  GPU entries: 0   CPU entries: 0   Storage entries: 5',
    '  GPU used: 0.00 GiB   CPU used: 0.00 GiB   Storage used: 5.00 GiB',
    '  Demotions GPU→CPU: 0   CPU→storage: 0   storage deletions: 0',
  ]);
  // 2 GiB placed + 1 GiB demoted in; 3 GiB of hits + 1 GiB demoted out
  assert.deepEqual(sectionOf(lines, 'TIER-SPECIFIC KV BYTES (GiB, incl. demotion traffic)'), [
    '  gpu      written 0.000   read 0.000',
    '  cpu      written 0.000   read 0.000',
    '  storage  written 3.000   read 4.000',
  ]);
  assert.deepEqual(sectionOf(lines, 'STORAGE KV BANDWIDTH (GiB/s over the measured window)'), ['  read 0.400   write 0.300']);
  assert.deepEqual(sectionOf(lines, 'CACHE TYPE BREAKDOWNS'), [
    '  system prompt hits 0   common phrase hits 0   user cache hits 0   multi-turn hits 4',
  ]);
  assert.deepEqual(sectionOf(lines, 'MULTI-TURN'), ['  hits 4   misses 1   hit rate 80.0 %']);
});

test('tier latencies only for the tiers and operations measured; the device/host breakdown for storage', () => {
  const storageOnly = linesOf();
  assert.deepEqual(sectionOf(storageOnly, 'TIER-SPECIFIC LATENCIES (p95, ms)'), [
    '  storage read: n/a (10 samples)',
    '  storage write: n/a (5 samples)',
  ]);
  assert.deepEqual(sectionOf(storageOnly, 'STORAGE TIER LATENCY BREAKDOWN (p95, ms)'), [
    '  read: device n/a (10 samples)   host n/a (10 samples)   total n/a (10 samples)',
    '  write: device n/a (5 samples)   host n/a (5 samples)   total n/a (5 samples)',
  ]);

  const cpu = new Recorder();
  cpu.recordIo('cpu', 'read', { totalMs: 0.125, deviceMs: 0.125, hostMs: 0 });
  const r = runResultFixture();
  const withCpuRead = linesOf({ recorded: { ...r.recorded, latencies: { ...r.recorded.latencies, ...cpu.snapshot().latencies } } });
  assert.deepEqual(sectionOf(withCpuRead, 'TIER-SPECIFIC LATENCIES (p95, ms)'), [
    '  cpu read: n/a (1 sample)',
    '  storage read: n/a (10 samples)',
    '  storage write: n/a (5 samples)',
  ]);
});

test('QoS compliance: met, not met and classes without requests, under the latency profile only', () => {
  assert.deepEqual(sectionOf(linesOf(), 'QOS'), [
    '  interactive: 2 requests, p95 n/a (2 samples) vs target 1 ms, compliance 50.0 % [NOT MET]',
    '  responsive: 2 requests, p95 n/a (2 samples) vs target 2 ms, compliance 100.0 % [MET]',
    '  batch: no requests',
  ]);
  assert.ok(!linesOf({}, 'throughput').some((l) => l.includes('[MET]') || l.includes('[NOT MET]')));
});

test('device counters next to the tool’s own storage bytes, or why there are none', () => {
  assert.deepEqual(sectionOf(linesOf(), 'DEVICE I/O (kernel counters, whole device)'), [
    '  nvme9n1: read 4.000 GiB (409.6 MiB/s), written 3.000 GiB (307.2 MiB/s)',
    "  tool's storage tier: read 4.000 GiB, written 3.000 GiB",
  ]);
  const { device: _device, ...unresolved } = runResultFixture();
  assert.deepEqual(sectionOf(summaryLines(buildResultsJson(unresolved)), 'DEVICE I/O (kernel counters, whole device)'), [
    '  device not resolvable for the cache dir (tmpfs, overlay, network FS?)',
  ]);
});

test('harness block: the payload generator, when the run generated bytes', () => {
  const r = {
    ...runResultFixture(),
    payload: { filler: '2 worker threads', stampedBytes: 3 * GiB, copiedBytes: GiB, consumerWaitMs: 2.5, chunksWaitedFor: 2 },
  };
  const lines = summaryLines(buildResultsJson(r));
  // 2.5 ms of waiting beside the fixture's 5 storage writes of 2 ms: 2.5 / 12.5 = 20 %.
  assert.ok(
    lines.includes(
      '  payload bytes: 4.000 GiB (75.0 % by stamps, filled by 2 worker threads); writes waited for them 20.0 % of their time (3 ms, 2 chunks)',
    ),
    lines.join('\n'),
  );
});

test('harness block: storage, workers, event-loop delay, requests cut short and every warning, then the closing rule', () => {
  const lines = linesOf({ warnings: ['cpu-mem-gb capped to 1.0 GiB', 'second warning'] });
  assert.deepEqual(lines.slice(lines.indexOf('### HARNESS ###') + 1), [
    '  storage: /mnt/test/cache (ext2/3/4, direct I/O)   workers: 4',
    '  event-loop delay ms: p50 0.25  p99 2.00  max 4.00   main thread busy: 25.0 %',
    '  requests cut short at stop: 1',
    '  WARNING: cpu-mem-gb capped to 1.0 GiB',
    '  WARNING: second warning',
    '',
    '### VALIDITY ###',
    'NOT VALID: run_too_short, too_few_samples',
    '  run_too_short: only 15 whole-entry storage transfers completed (at least 20 are needed for a bandwidth or a p95): raise --duration or --num-users',
    '  too_few_samples: storage latency samples (read 10, write 5) are under the 20 a p95 needs: the reported p95 is just the slowest sample; run longer or with more users',
    RULE,
  ]);
});

test('optional blocks: interruption notice, generation latency, prefix caching, no live entries', () => {
  const plain = linesOf();
  assert.ok(!plain.some((l) => l.includes('INTERRUPTED')));

  const doc = buildResultsJson({
    ...runResultFixture({ generationMs: 1.5 }),
    stopReason: 'interrupted',
    entrySizes: { count: 0, minBytes: 0, meanBytes: 0, p95Bytes: 0, maxBytes: 0 },
    prefix: { prefixHits: 8, prefixMisses: 2, systemPromptReuse: 5, commonPhraseReuse: 3, bytesSaved: 24 * MiB },
  });
  const lines = summaryLines(doc);
  assert.deepEqual(lines.slice(3, 7), [
    'KV bytes per token: 4,096 (4.0 KiB) — live entries: 0',
    'Entry size: no live entries',
    '',
    '*** RUN INTERRUPTED: results below cover the part that ran ***',
  ]);
  // Generation latency after the storage latency, prefix caching after the cache-type breakdown.
  assert.deepEqual(headings(lines), [
    ...ALWAYS.slice(0, 3),
    'TOKEN GENERATION LATENCY',
    ...ALWAYS.slice(3, -1),
    'PREFIX CACHING',
    'MULTI-TURN',
    'QOS',
    'DEVICE I/O (kernel counters, whole device)',
    TELEMETRY,
    'HARNESS',
    'VALIDITY',
  ]);
  assert.deepEqual(sectionOf(lines, 'TOKEN GENERATION LATENCY'), [
    '  mean 1.50 ms   p50 1.50   p95 n/a (4 samples)   p99 n/a (4 samples)   p99.9 n/a (4 samples)',
  ]);
  assert.deepEqual(sectionOf(lines, 'PREFIX CACHING'), ['  prefix hits 8   misses 2   bytes saved 24.00 MiB']);
  assertHasLines(lines, ['  Measured window: 10.00 s (nominal 60 s; stop: interrupted)']);
});

test('R/W ratio when nothing was written: 0 without reads, ∞ with reads', () => {
  const ratioLine = (readBytes: number): string | undefined =>
    linesOf(withCounters({ totalReadBytes: readBytes, totalWriteBytes: 0 })).find((l) => l.includes('R/W ratio'));
  assert.equal(ratioLine(0), '  Total KV read: 0.00 GiB   written: 0.00 GiB   R/W ratio: 0');
  assert.equal(ratioLine(GiB), '  Total KV read: 1.00 GiB   written: 0.00 GiB   R/W ratio: ∞');
});

test('the replay summary prints its document: counts, bandwidth, latencies, device bytes', () => {
  const cacheStats = buildResultsJson(runResultFixture()).summary.cache_stats;
  const doc: ReplayResultsDocument = {
    replay: {
      trace: 't.csv',
      rows: 12,
      writes: 5,
      reads: 10,
      deletes: 1,
      write_bytes: 2 * GiB,
      read_bytes: 3 * GiB,
      skipped_other_tier_rows: 0,
      missing_keys: 2,
      concurrency: 4,
      paced: false,
      all_tiers: false,
    },
    elapsed_time: 10,
    summary: { cache_stats: cacheStats },
    kvcache_bench: {
      tool: 'kvcache-bench',
      version: '9.9.9',
      schema_version: SCHEMA_VERSION,
      stop_reason: 'workload_complete',
      interrupted: false,
      duration_limit_sec: null,
      operations_aborted_at_stop: 0,
      hashed_keys: 0,
      measured_window_sec: 10,
      storage_dir: '/c',
      storage_io_mode: 'direct',
      storage_file_system: 'xfs',
      device_io: { device: 'vdz', read_bytes: 3 * MiB, written_bytes: 2 * MiB, read_bytes_per_sec: 0, write_bytes_per_sec: 0 },
      machine: machineJson(FIXTURE_MACHINE),
    },
  };
  assert.equal(
    formatReplaySummary(doc),
    [
      'Replayed 5 writes (2.000 GiB), 10 reads (3.000 GiB), 1 deletes in 10.00 s',
      'Skipped: 0 rows of other tiers, 2 reads/deletes of keys never written',
      'Storage bandwidth: read 0.300 GiB/s, write 0.200 GiB/s (direct I/O on xfs)',
      'Read latency:  p50 1.50  p95 1.50  p99 1.50 ms   (device p50 1.25  p95 1.25  p99 1.25 ms)',
      'Write latency: p50 2.00  p95 2.00  p99 2.00 ms   (device p50 1.50  p95 1.50  p99 1.50 ms)',
      'Device vdz: read 3.0 MiB, written 2.0 MiB',
    ].join('\n'),
  );
});

test('banner', () => {
  const cfg = parseRunArgs(['--model', 'tiny-1b', '--num-users', '3', '--seed', '9', '--gpu-mem-gb', '0'], new Date()).config;
  const lines = banner(cfg, '9.9.9');
  assert.equal(lines[1], 'kv-cache 9.9.9 — KV cache storage benchmark');
  assert.match(lines[5] ?? '', /^Users: 3 {3}Duration: \d+ s {3}Seed: 9$/);
  assert.match(lines[4] ?? '', /^GPU tier: none /);
});
test('with enough samples the summary prints percentiles and ends VALID, warnings below', () => {
  const fixture = runResultFixture();
  const rec = new Recorder();
  Object.assign(rec.traffic.storage, fixture.recorded.traffic.storage);
  for (let i = 0; i < 100; i++) rec.recordIo('storage', 'read', { totalMs: 1.5, deviceMs: 1.25, hostMs: 0.25 });
  for (let i = 0; i < 20; i++) rec.recordIo('storage', 'write', { totalMs: 2, deviceMs: 1.5, hostMs: 0.5 });
  const doc = buildResultsJson({ ...fixture, recorded: rec.snapshot() });
  const lines = formatSummary(doc, 'latency').split('\n');
  assert.ok(lines.includes('  read: device 1.25   host 0.25   total 1.50'));
  assert.ok(lines.includes('  storage write: 2.00'));
  assert.deepEqual(lines.slice(-4), [
    '### VALIDITY ###',
    'VALID',
    '  (warning) few_samples_for_tail: too few storage latency samples for the tail percentiles: a p99 needs 100 (write 20); a p99.9 needs 1,000 (read 100, write 20); those fields are the slowest samples, not percentiles',
    '='.repeat(80),
  ]);
});

test('validityLines: one NOT VALID line naming every code, each message below it', () => {
  assert.deepEqual(
    validityLines({
      valid: false,
      reasons: [
        { code: 'trace_mode', message: 'm1' },
        { code: 'harness_saturated', message: 'm2' },
      ],
      warnings: [{ code: 'buffered_io', message: 'm3' }],
    }),
    [
      '',
      '### VALIDITY ###',
      'NOT VALID: trace_mode, harness_saturated',
      '  trace_mode: m1',
      '  harness_saturated: m2',
      '  (warning) buffered_io: m3',
    ],
  );
});
