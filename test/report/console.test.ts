// The console output: the summary printed from the results document (what is printed is what is
// saved), the replay summary, the banner and the progress line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { banner, formatSummary, progressLine, validityLines } from '../../src/report/console.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { formatReplaySummary } from '../../src/report/replay-report.js';
import { buildResultsJson, machineJson } from '../../src/report/results-json.js';
import { SCHEMA_VERSION } from '../../src/report/results-schema.js';
import type { ReplayResultsDocument } from '../../src/report/results-schema.js';
import { parseRunArgs } from '../../src/cli/run-args.js';
import { GiB, MiB } from '../../src/util/units.js';
import { FIXTURE_MACHINE, runResultFixture } from './fixtures.js';

test('the run summary prints the saved figures, and QoS compliance under the latency profile only', () => {
  const doc = buildResultsJson(runResultFixture());
  const text = formatSummary(doc, 'latency');
  for (const line of [
    '  Requests completed: 4   Tokens generated: 400',
    '  Measured window: 10.00 s (nominal 60 s; stop: max_requests)',
    '  Storage throughput (reference formula, tokens ÷ summed I/O time): 200.00 tok/s',
    '  Cache hit rate: 75.0 %   (hits 30, misses 10)',
    '  KV read operations: 10 (1.00/s)   write operations: 5 (0.50/s)',
    '  storage  written 3.000   read 4.000',
    '  read: device n/a (10 samples)   host n/a (10 samples)   total n/a (10 samples)',
    '  storage write: n/a (5 samples)',
    '  mean 1.06 ms   p50 1.00   p95 n/a (4 samples)   p99 n/a (4 samples)   p99.9 n/a (4 samples)',
    '  interactive: 2 requests, p95 n/a (2 samples) vs target 1 ms, compliance 50.0 % [NOT MET]',
    '  batch: no requests',
    '  nvme9n1: read 4.000 GiB (409.6 MiB/s), written 3.000 GiB (307.2 MiB/s)',
    '  requests cut short at stop: 1',
    '  event-loop delay ms: p50 0.25  p99 2.00  max 4.00   main thread busy: 25.0 %',
    '  WARNING: a warning',
  ]) {
    assert.ok(text.split('\n').includes(line), `missing line: ${line}`);
  }
  assert.doesNotMatch(text, /STORAGE PERFORMANCE ASSESSMENT|Overall:/, 'the PASS/FAIL block stays in the JSON only');
  assert.deepEqual(text.split('\n').slice(-5), [
    '### VALIDITY ###',
    'NOT VALID: run_too_short, too_few_samples',
    '  run_too_short: only 15 whole-entry storage transfers completed (at least 20 are needed for a bandwidth or a p95): raise --duration or --num-users',
    '  too_few_samples: storage latency samples (read 10, write 5) are under the 20 a p95 needs: the reported p95 is just the slowest sample; run longer or with more users',
    '='.repeat(80),
  ]);
  assert.doesNotMatch(text, /TOKEN GENERATION LATENCY/, 'no generation time, no section');
  assert.doesNotMatch(text, /PREFIX CACHING/);
  assert.doesNotMatch(formatSummary(doc, 'throughput'), /### QOS ###/);
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

test('banner and progress line', () => {
  const cfg = parseRunArgs(['--model', 'tiny-1b', '--num-users', '3', '--seed', '9', '--gpu-mem-gb', '0'], new Date()).config;
  const lines = banner(cfg, '9.9.9');
  assert.equal(lines[1], 'kv-cache 9.9.9 — KV cache storage benchmark');
  assert.match(lines[5] ?? '', /^Users: 3 {3}Duration: \d+ s {3}Seed: 9$/);
  assert.match(lines[4] ?? '', /^GPU tier: none /);
  const p = progressLine({
    elapsedSec: 12.4,
    durationSec: 60,
    requestsCompleted: 7,
    tokensPerSec: 99.6,
    storageReadBytesPerSec: 3 * MiB,
    storageWriteBytesPerSec: MiB / 2,
  });
  assert.equal(p, '\r[  12/60s] requests 7  100 tok/s  storage read 3 MiB/s  write 1 MiB/s   ');
});
