// The results document built from a hand-made RunResult with known counts: the reference's fields and
// formulas, our additions, and the generated JSON Schema accepting it and refusing renamed or
// mistyped fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildResultsJson } from '../../src/report/results-json.js';
import { ResultsSchema, resultsJsonSchema, SCHEMA_VERSION } from '../../src/report/results-schema.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import type { RunResult } from '../../src/metrics/result.js';
import { GiB } from '../../src/util/units.js';
import { runResultFixture } from './fixtures.js';
import { assertValidResults, schemaErrors } from './validate-results.js';

/** The document as a consumer reads it back from the file. */
const roundTrip = (doc: ResultsDocument): unknown => JSON.parse(JSON.stringify(doc)) as unknown;

test('top level: the reference layout and per-request totals; raw lists absent by default', () => {
  const doc = buildResultsJson(runResultFixture());
  assert.deepEqual(Object.keys(doc), [
    'requests_completed',
    'total_tokens_generated',
    'total_storage_io_latency',
    'total_generation_latency',
    'throughput_timeline',
    'multi_turn_cache_hits',
    'multi_turn_cache_misses',
    'seed',
    'summary',
    'kvcache_bench',
  ]);
  assert.equal(doc.requests_completed, 4);
  assert.equal(doc.total_tokens_generated, 400);
  assert.equal(doc.total_storage_io_latency, 2);
  assert.equal(doc.total_generation_latency, 0);
  assert.deepEqual(doc.throughput_timeline, []);
  assert.equal(doc.multi_turn_cache_hits, 4);
  assert.equal(doc.multi_turn_cache_misses, 1, 'the aborted request’s reload miss counts');
  assert.equal(doc.seed, 42);
});

test('--keep-latency-samples: the raw per-request lists in seconds, after the totals', () => {
  const doc = buildResultsJson(runResultFixture({ keepRawSamples: true }));
  assert.deepEqual(doc.end_to_end_latencies, [0.0005, 0.0015, 0.001, 0.00125]);
  assert.deepEqual(doc.storage_latencies, [0.5, 0.5, 0.5, 0.5]);
  assert.deepEqual(doc.generation_latencies, [0, 0, 0, 0]);
  assert.deepEqual(Object.keys(doc).slice(4, 7), ['end_to_end_latencies', 'storage_latencies', 'generation_latencies']);
  assertValidResults(roundTrip(doc));
});

test("summary: the reference's formulas over the measured window and the summed storage time", () => {
  const s = buildResultsJson(runResultFixture()).summary;
  assert.equal(s.total_requests, 4);
  assert.equal(s.total_tokens, 400);
  assert.equal(s.elapsed_time, 10);
  assert.equal(s.avg_throughput_tokens_per_sec, 40, 'tokens ÷ measured window');
  assert.equal(s.total_storage_io_time, 2);
  assert.equal(s.storage_throughput_tokens_per_sec, 200, 'tokens ÷ SUMMED per-request storage seconds');
  assert.equal(s.requests_per_second, 0.4);
  assert.equal(s.end_to_end_latency_ms.mean, 1.0625);
  assert.equal(s.end_to_end_latency_ms.p50, 1);
  assert.equal(s.end_to_end_latency_ms.p99, 1.5);
  assert.equal(s.storage_io_latency_ms.mean, 500);
  assert.deepEqual(s.multi_turn_stats, { cache_hits: 4, cache_misses: 1, hit_rate: 0.8 });
  assert.deepEqual(s.prefix_cache_stats, {});
  assert.deepEqual(s.autoscaling_stats, []);
  assert.equal(s.autoscaling_summary, null);
  assert.deepEqual(s.qos_metrics, {
    interactive: {
      total_requests: 2,
      latency_ms: { mean: 1, p50: 0.5, p95: 1.5, p99: 1.5, max: 1.5 },
      sla: { target_p95_ms: 1, actual_p95_ms: 1.5, compliance: 0.5, met: false },
      violations: 1,
    },
    responsive: {
      total_requests: 2,
      latency_ms: { mean: 1.125, p50: 1, p95: 1.25, p99: 1.25, max: 1.25 },
      sla: { target_p95_ms: 2, actual_p95_ms: 1.25, compliance: 1, met: true },
      violations: 0,
    },
    batch: { no_data: true },
  });
});

test('cache_stats: byte totals with demotions, GiB bandwidths over the window, percentiles only with samples', () => {
  const cs = buildResultsJson(runResultFixture()).summary.cache_stats;
  assert.equal(cs.cache_hit_rate, 0.75);
  assert.equal(cs.tier_storage_kv_bytes_written_gb, 3, 'placed 2 GiB + demoted in 1 GiB');
  assert.equal(cs.tier_storage_kv_bytes_read_gb, 4, 'hits 3 GiB + demoted out 1 GiB');
  assert.equal(cs.tier_storage_read_bandwidth_gbps, 0.4);
  assert.equal(cs.tier_storage_write_bandwidth_gbps, 0.3);
  assert.equal(cs.tier_storage_read_bytes_per_sec, (4 * GiB) / 10);
  assert.equal(cs.tier_gpu_kv_bytes_written_gb, 0);
  assert.equal(cs.total_read_gb, 3);
  assert.equal(cs.read_write_ratio, 1.5);
  assert.equal(cs.read_iops, 10, 'a count, not a rate');
  assert.equal(cs.storage_tokens_processed, 1234.5);
  assert.equal(cs.storage_entries, 5);
  assert.equal(cs.tier_storage_used_bytes, 5 * GiB);
  assert.equal(cs.tier_storage_limit_bytes, null, 'unlimited');
  assert.equal(cs.tier_gpu_limit_bytes, 0, 'absent tier');
  assert.equal(cs.storage_read_p50_ms, 1.5);
  assert.equal(cs.storage_write_p9999_ms, 2);
  assert.equal(cs.storage_read_device_p95_ms, 1.25);
  assert.equal(cs.storage_write_host_p99_ms, 0.5);
  assert.equal(cs.cpu_read_p50_ms, undefined);
  assert.ok(!('storage_demote_read_p50_ms' in cs), 'no demotion latencies recorded');
  // 5 writes and 10 reads are too few for a p95: those criteria are listed unjudged.
  assert.deepEqual(cs.storage_health, {
    overall_status: 'INCOMPLETE',
    criteria: [
      { name: 'Storage Tier Write Device P95 < 500ms', target: 500, actual: null, unit: 'ms', passed: null, samples: 5 },
      { name: 'Storage Tier Read Device P95 < 200ms', target: 200, actual: null, unit: 'ms', passed: null, samples: 10 },
      { name: 'Cache Hit Rate > 30%', target: 0.3, actual: 0.75, unit: 'ratio', passed: true, samples: 40 },
    ],
    passed_count: 1,
    total_count: 3,
  });
});

test('kvcache_bench: tool and schema versions, bytes and device counters, machine, histograms', () => {
  const k = buildResultsJson(runResultFixture()).kvcache_bench;
  assert.equal(k.tool, 'kvcache-bench');
  assert.equal(k.version, '9.9.9');
  assert.equal(k.schema_version, SCHEMA_VERSION);
  assert.equal(k.stop_reason, 'max_requests');
  assert.equal(k.interrupted, false);
  assert.equal(k.measured_window_sec, 10);
  assert.equal(k.requests_aborted_at_stop, 1);
  assert.deepEqual(k.storage_bytes, {
    read_bytes: 4 * GiB,
    written_bytes: 3 * GiB,
    read_bytes_per_sec: (4 * GiB) / 10,
    write_bytes_per_sec: (3 * GiB) / 10,
    read_gib_per_sec: 0.4,
    write_gib_per_sec: 0.3,
  });
  assert.ok(k.device_io !== null);
  assert.equal(k.device_io.device, 'nvme9n1');
  assert.equal(k.device_io.read_bytes_per_sec, (4 * GiB) / 10);
  assert.equal(k.device_io.write_ops, 30);
  assert.deepEqual(k.machine, {
    cpu_model: 'Test CPU @ 3.0GHz',
    cpu_count: 6,
    total_memory_bytes: 16 * GiB,
    kernel_release: '6.1.0-test',
    node_version: 'v20.0.0',
    io_buffers: '2 MiB transparent huge pages (advised: enabled = madvise)',
    cache_dir: { file_system: 'ext2/3/4', block_device: 'nvme9n1', device_model: 'Test NVMe 1TB' },
  });
  assert.deepEqual(k.workload_source, { kind: 'synthetic' });
  assert.deepEqual(k.prefill_latency_ms.mean, 250);
  const h = k.latency_histograms;
  assert.equal(h.request_end_to_end?.count, 4);
  assert.equal(h.request_end_to_end?.sum_ms, 4.25);
  assert.equal(h.storage_read?.count, 10);
  assert.equal(h.request_decode, undefined, 'no decode samples, no histogram');
});

test('kvcache_bench.validity: the verdict of the run, and the main thread busy share beside it', () => {
  const k = buildResultsJson(runResultFixture()).kvcache_bench;
  assert.equal(k.main_thread_busy_fraction, 0.25);
  assert.deepEqual(k.validity, {
    valid: false,
    reasons: [
      {
        code: 'run_too_short',
        message:
          'only 15 whole-entry storage transfers completed (at least 20 are needed for a bandwidth or a p95): raise --duration or --num-users',
      },
      {
        code: 'too_few_samples',
        message:
          'storage latency samples (read 10, write 5) are under the 20 a p95 needs: the reported p95 is just the slowest sample; run longer or with more users',
      },
    ],
    warnings: [],
  });
});

test('trace mode: storage_health INCOMPLETE, validity names trace_mode and nothing about storage samples', () => {
  const base = runResultFixture();
  const doc = buildResultsJson({
    ...base,
    device: undefined,
    storage: { dir: '(none: trace mode)', ioMode: 'none (trace mode)', fileSystem: 'none' },
    storageSetup: { ...base.storageSetup, traceMode: true },
  });
  assert.equal(doc.summary.cache_stats.storage_health.overall_status, 'INCOMPLETE');
  assert.deepEqual(
    doc.summary.cache_stats.storage_health.criteria.map((c) => c.samples),
    [0, 0, 40],
  );
  assert.equal(doc.kvcache_bench.validity.valid, false);
  assert.deepEqual(
    doc.kvcache_bench.validity.reasons.map((r) => r.code),
    ['trace_mode'],
  );
  assert.deepEqual(doc.kvcache_bench.validity.warnings, []);
  assertValidResults(roundTrip(doc));
});

test('variants: interrupted, no device, prefix caching, autoscaling, ShareGPT source, trace mode', () => {
  const base = runResultFixture();
  const variant: RunResult = {
    ...base,
    stopReason: 'interrupted',
    device: undefined,
    prefix: { prefixHits: 3, prefixMisses: 1, systemPromptReuse: 2, commonPhraseReuse: 1, bytesSaved: 4096 },
    autoscaling: {
      events: [
        {
          timestamp: 5,
          mode: 'capacity',
          action: 'scale_up',
          users: 5,
          users_during: 4,
          users_after: 5,
          saturation_level: 0.5,
          read_latency_p95_ms: 1,
          write_latency_p95_ms: 2,
          throughput_tokens_per_sec: 40,
          peak_throughput_tokens_per_sec: 40,
        },
      ],
      summary: { initial_users: 4, final_users: 5, total_scale_events: 1, peak_user_count: 5, peak_throughput_tokens_per_sec: 40 },
      timeline: [{ timestamp: 5, throughput_tokens_per_sec: 40, users: 4, users_during: 4, users_after: 5 }],
    },
    workloadSource: {
      kind: 'sharegpt',
      path: '/d.json',
      tokenizer: 'chars',
      records: 3,
      conversationsLoaded: 3,
      turns: 6,
      skippedPairs: 0,
      skippedRecords: 0,
    },
    machine: { ...base.machine, cacheDir: null },
  };
  const doc = buildResultsJson(variant);
  assert.equal(doc.kvcache_bench.interrupted, true);
  assert.equal(doc.kvcache_bench.device_io, null);
  assert.equal(doc.kvcache_bench.machine.cache_dir, null);
  assert.deepEqual(doc.summary.prefix_cache_stats, {
    prefix_hits: 3,
    prefix_misses: 1,
    system_prompt_reuse: 2,
    common_phrase_reuse: 1,
    bytes_saved: 4096,
  });
  assert.equal(doc.summary.autoscaling_summary?.peak_user_count, 5);
  assert.equal(doc.throughput_timeline.length, 1);
  assertValidResults(roundTrip(doc));
});

test('the generated JSON Schema accepts a built document, as the zod schema does', () => {
  const doc = roundTrip(buildResultsJson(runResultFixture()));
  assertValidResults(doc);
  assert.equal(ResultsSchema.safeParse(doc).success, true);
  const schema = resultsJsonSchema('run') as {
    $schema: string;
    properties: { kvcache_bench: { properties: { schema_version: { const: string } } } };
  };
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(schema.properties.kvcache_bench.properties.schema_version.const, SCHEMA_VERSION);
});

test('the generated JSON Schema rejects a renamed field, a wrong type and a stray field', () => {
  type Doc = ResultsDocument & Record<string, unknown>;
  const fresh = (): Doc => roundTrip(buildResultsJson(runResultFixture())) as Doc;
  const mutations: ReadonlyArray<readonly [string, (d: Doc) => void, RegExp]> = [
    [
      'a required field renamed',
      (d) => {
        const s = d.summary as Record<string, unknown>;
        s.storage_throughput_tok_per_sec = s.storage_throughput_tokens_per_sec;
        delete s.storage_throughput_tokens_per_sec;
      },
      /storage_throughput_tokens_per_sec/,
    ],
    [
      'an optional percentile renamed',
      (d) => {
        const cs = d.summary.cache_stats as Record<string, unknown>;
        cs.storage_read_p95 = cs.storage_read_p95_ms;
        delete cs.storage_read_p95_ms;
      },
      /storage_read_p95/,
    ],
    ['a count as a string', (d) => void ((d as Record<string, unknown>).requests_completed = '4'), /requests_completed must be integer/],
    ['another schema version', (d) => void ((d.kvcache_bench as Record<string, unknown>).schema_version = '0.0.1'), /schema_version/],
    ['an unknown stop reason', (d) => void ((d.kvcache_bench as Record<string, unknown>).stop_reason = 'done'), /stop_reason/],
    [
      'a ShareGPT source without its counts',
      (d) => void ((d.kvcache_bench as Record<string, unknown>).workload_source = { kind: 'sharegpt', path: 'x' }),
      /workload_source/,
    ],
  ];
  for (const [what, mutate, where] of mutations) {
    const doc = fresh();
    mutate(doc);
    const errors = schemaErrors(doc);
    assert.ok(errors.length > 0, `${what}: accepted`);
    assert.match(errors.join('\n'), where, what);
  }
});
