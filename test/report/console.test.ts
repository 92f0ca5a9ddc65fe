// The console summary: fed a known result and results object, it prints the exact counts, units and
// verdicts that matter, and its optional blocks only when they apply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/metrics/result.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { formatSummary } from '../../src/report/console.js';
import { GiB, MiB } from '../../src/util/units.js';

function runResult(over: Partial<RunResult> = {}): RunResult {
  return {
    toolVersion: '0.1.0',
    startedAt: '2026-01-05T07:08:09.000Z',
    seed: 42,
    modelKey: 'tiny-1b',
    bytesPerToken: 131_072,
    performanceProfile: 'latency',
    effectiveConfig: {},
    stopReason: 'duration',
    elapsedSec: 10,
    nominalDurationSec: 10,
    recorder: new Recorder(),
    run: new RunMetrics({}, false),
    occupancy: {},
    entrySizes: { count: 3, minBytes: 1 * MiB, meanBytes: 2 * MiB, p95Bytes: 3 * MiB, maxBytes: 3.25 * MiB },
    conversationsLost: 0,
    eventLoopDelayMs: { mean: 0.5, p50: 0.25, p99: 1.5, max: 4 },
    storage: { dir: '/mnt/kv', fileSystem: 'ext4', ioMode: 'direct' },
    workers: 16,
    warnings: [],
    workloadSource: { type: 'synthetic' },
    ...over,
  };
}

type Obj = Record<string, unknown>;

function cacheStats(over: Obj = {}): Obj {
  return {
    storage_health: {
      overall_status: 'FAIL',
      criteria: [
        { name: 'Storage Tier Write Device P95 < 500ms', target: 500, actual: 12.3456, unit: 'ms', passed: true },
        { name: 'Storage Tier Read Device P95 < 200ms', target: 200, actual: 250, unit: 'ms', passed: false },
        { name: 'Cache Hit Rate > 30%', target: 0.3, actual: 0.75, unit: 'ratio', passed: true },
      ],
      passed_count: 2,
      total_count: 3,
    },
    cache_hit_rate: 0.75,
    cache_hits: 300,
    cache_misses: 100,
    total_read_gb: 6,
    total_write_gb: 2,
    total_read_bytes: 6 * GiB,
    total_write_bytes: 2 * GiB,
    read_iops: 400,
    write_iops: 125,
    gpu_entries: 0,
    cpu_entries: 2,
    storage_entries: 1,
    gpu_memory_used_gb: 0,
    cpu_memory_used_gb: 0.5,
    tier_storage_used_bytes: 3 * GiB,
    tier_gpu_demote_out_ops: 0,
    tier_cpu_demote_out_ops: 7,
    tier_storage_evict_delete_ops: 2,
    tier_gpu_kv_bytes_written_gb: 0,
    tier_gpu_kv_bytes_read_gb: 0,
    tier_cpu_kv_bytes_written_gb: 1.5,
    tier_cpu_kv_bytes_read_gb: 0.25,
    tier_storage_kv_bytes_written_gb: 0.5,
    tier_storage_kv_bytes_read_gb: 5.75,
    tier_storage_read_bandwidth_gbps: 0.575,
    tier_storage_write_bandwidth_gbps: 0.05,
    storage_read_p95_ms: 251,
    storage_read_device_p95_ms: 250,
    storage_read_host_p95_ms: 1,
    cpu_read_p95_ms: 0.125,
    system_prompt_hits: 4,
    common_phrase_hits: 5,
    user_cache_hits: 6,
    multi_turn_hits: 7,
    ...over,
  };
}

function results(summary: Obj = {}, kvcacheBench: Obj = {}): Obj {
  return {
    summary: {
      total_requests: 120,
      total_tokens: 4800,
      elapsed_time: 10,
      avg_throughput_tokens_per_sec: 480,
      requests_per_second: 12,
      storage_throughput_tokens_per_sec: 1234.5678,
      end_to_end_latency_ms: { mean: 50, p50: 40, p95: 90.125, p99: 120, p999: 150 },
      storage_io_latency_ms: { mean: 20, p50: 10, p95: 30, p99: 40, p999: 50 },
      generation_latency_ms: { mean: 5, p50: 5, p95: 6, p99: 7, p999: 8 },
      cache_stats: cacheStats(),
      multi_turn_stats: { cache_hits: 30, cache_misses: 10, hit_rate: 0.75 },
      qos_metrics: {
        interactive: { total_requests: 20, sla: { target_p95_ms: 50, actual_p95_ms: 42.5, compliance: 0.95, met: true } },
        responsive: { total_requests: 30, sla: { target_p95_ms: 100, actual_p95_ms: 180, compliance: 0.8, met: false } },
        batch: { no_data: true },
      },
      ...summary,
    },
    kvcache_bench: {
      device_io: { device: 'vda', read_bytes: 6 * GiB, written_bytes: 2 * GiB, read_bytes_per_sec: 600 * MiB, write_bytes_per_sec: 200 * MiB },
      storage_bytes: { read_bytes: 5.75 * GiB, written_bytes: 0.5 * GiB },
      ...kvcacheBench,
    },
  };
}

function linesOf(r: RunResult, res: Obj): string[] {
  return formatSummary(r, res).split('\n');
}

function assertHasLines(lines: readonly string[], expected: readonly string[]): void {
  for (const line of expected) assert.ok(lines.includes(line), `missing line ${JSON.stringify(line)} in\n${lines.join('\n')}`);
}

test('sections in the reference order, our additions last, framed by rules', () => {
  const lines = linesOf(runResult(), results());
  assert.deepEqual(lines.slice(0, 3), ['='.repeat(80), 'BENCHMARK RESULTS', '='.repeat(80)]);
  assert.equal(lines.at(-1), '='.repeat(80));
  assert.deepEqual(
    lines.filter((l) => l.startsWith('### ')),
    [
      'STORAGE PERFORMANCE ASSESSMENT',
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
      'QOS',
      'DEVICE I/O (kernel counters, whole device)',
      'HARNESS',
    ].map((t) => `### ${t} ###`),
  );
});

test('entry sizes, counts and rates with their units', () => {
  assertHasLines(linesOf(runResult(), results()), [
    'KV bytes per token: 131,072 (128.0 KiB) — live entries: 3',
    'Entry size MiB: min 1.0, mean 2.0, p95 3.0, max 3.3',
    '  Requests completed: 120   Tokens generated: 4800',
    '  Measured window: 10.00 s (nominal 10 s; stop: duration)',
    '  Wall-clock throughput: 480.00 tok/s   Requests/s: 12.00',
    '  Storage throughput (reference formula, tokens ÷ summed I/O time): 1234.57 tok/s',
    '  mean 50.00 ms   p50 40.00   p95 90.13   p99 120.00   p99.9 150.00',
    '  Cache hit rate: 75.0 %   (hits 300, misses 100)',
    '  Total KV read: 6.00 GiB   written: 2.00 GiB   R/W ratio: 3.00',
    '  KV read operations: 400 (40.00/s)   write operations: 125 (12.50/s)',
    '  GPU entries: 0   CPU entries: 2   Storage entries: 1',
    '  GPU used: 0.00 GiB   CPU used: 0.50 GiB   Storage used: 3.00 GiB',
    '  Demotions GPU→CPU: 0   CPU→storage: 7   storage deletions: 2',
    '  cpu      written 1.500   read 0.250',
    '  storage  written 0.500   read 5.750',
    '  read 0.575   write 0.050',
    '  system prompt hits 4   common phrase hits 5   user cache hits 6   multi-turn hits 7',
    '  hits 30   misses 10   hit rate 75.0 %',
  ]);
});

test('storage health block: one line per criterion, then the overall verdict', () => {
  const lines = linesOf(runResult(), results());
  const at = lines.indexOf('### STORAGE PERFORMANCE ASSESSMENT ###');
  assert.deepEqual(lines.slice(at + 1, at + 6), [
    '  [OK] Storage Tier Write Device P95 < 500ms: actual 12.346 ms (target 500)',
    '  [X] Storage Tier Read Device P95 < 200ms: actual 250.000 ms (target 200)',
    '  [OK] Cache Hit Rate > 30%: actual 0.750 ratio (target 0.3)',
    '  Overall: FAIL (2/3 criteria)',
    '  Note: latency criteria apply to whole entries (hundreds of MiB); a 200 MiB entry at 1 GiB/s takes ~200 ms.',
  ]);
});

test('tier latencies only for the tiers and operations measured; the breakdown only for storage', () => {
  const lines = linesOf(runResult(), results());
  const at = lines.indexOf('### TIER-SPECIFIC LATENCIES (p95, ms) ###');
  assert.deepEqual(lines.slice(at + 1, at + 6), [
    '  cpu read: 0.13',
    '  storage read: 251.00',
    '',
    '### STORAGE TIER LATENCY BREAKDOWN (p95, ms) ###',
    '  read: device 250.00   host 1.00   total 251.00',
  ]);
});

test('QoS block: met, not met and classes without requests', () => {
  assertHasLines(linesOf(runResult(), results()), [
    '  interactive: 20 requests, p95 42.50 ms vs target 50 ms, compliance 95.0 % [MET]',
    '  responsive: 30 requests, p95 180.00 ms vs target 100 ms, compliance 80.0 % [NOT MET]',
    '  batch: no requests',
  ]);
  const throughput = linesOf(runResult({ performanceProfile: 'throughput' }), results());
  assert.ok(!throughput.includes('### QOS ###'), 'no QoS block in the throughput profile');
});

test('device counters next to the tool’s own storage bytes, or why there are none', () => {
  assertHasLines(linesOf(runResult(), results()), [
    '  vda: read 6.000 GiB (600.0 MiB/s), written 2.000 GiB (200.0 MiB/s)',
    "  tool's storage tier: read 5.750 GiB, written 0.500 GiB",
  ]);
  assertHasLines(linesOf(runResult(), results({}, { device_io: null })), ['  device not resolvable for the cache dir (tmpfs, overlay, network FS?)']);
});

test('harness block: storage, workers, event-loop delay, aborted requests and every warning', () => {
  const run = new RunMetrics({}, false);
  run.requestsAborted = 3;
  const lines = linesOf(runResult({ run, warnings: ['cpu-mem-gb capped to 1.0 GiB', 'second warning'] }), results());
  const at = lines.indexOf('### HARNESS ###');
  assert.deepEqual(lines.slice(at + 1), [
    '  storage: /mnt/kv (ext4, direct I/O)   workers: 16',
    '  event-loop delay ms: p50 0.25  p99 1.50  max 4.00',
    '  requests cut short at stop: 3',
    '  WARNING: cpu-mem-gb capped to 1.0 GiB',
    '  WARNING: second warning',
    '='.repeat(80),
  ]);
});

test('optional blocks: interruption banner, generation latency, prefix caching, no live entries', () => {
  const plain = linesOf(runResult(), results());
  assert.ok(!plain.some((l) => l.includes('INTERRUPTED')));
  assert.ok(!plain.includes('### TOKEN GENERATION LATENCY ###'));
  assert.ok(!plain.includes('### PREFIX CACHING ###'));

  const run = new RunMetrics({}, false);
  run.totalGenerationMs = 1;
  const lines = linesOf(
    runResult({ run, stopReason: 'interrupted', entrySizes: { count: 0, minBytes: 0, meanBytes: 0, p95Bytes: 0, maxBytes: 0 } }),
    results({ prefix_cache_stats: { prefix_hits: 8, prefix_misses: 2, bytes_saved: 24 * MiB } }),
  );
  assertHasLines(lines, [
    'Entry size: no live entries',
    '*** RUN INTERRUPTED: results below cover the part that ran ***',
    '### TOKEN GENERATION LATENCY ###',
    '  mean 5.00 ms   p50 5.00   p95 6.00   p99 7.00   p99.9 8.00',
    '  prefix hits 8   misses 2   bytes saved 24.00 MiB',
    '  Measured window: 10.00 s (nominal 10 s; stop: interrupted)',
  ]);
});

test('read/write ratio when nothing was written', () => {
  const ratio = (reads: number): string | undefined =>
    linesOf(runResult(), results({ cache_stats: cacheStats({ total_read_bytes: reads, total_write_bytes: 0, total_read_gb: reads / GiB, total_write_gb: 0 }) })).find((l) => l.includes('R/W ratio'));
  assert.equal(ratio(0), '  Total KV read: 0.00 GiB   written: 0.00 GiB   R/W ratio: 0');
  assert.equal(ratio(GiB), '  Total KV read: 1.00 GiB   written: 0.00 GiB   R/W ratio: ∞');
});
