// End-to-end: the CLI run for a few seconds on tiny-1b in a temp dir, checked through its JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inTempDir, runCli, SMALL_USERS } from './run-cli.js';

import { readValidResults } from '../report/validate-results.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { resultsJsonSchema, SCHEMA_VERSION } from '../../src/report/results-schema.js';
import { TIERS } from '../../src/metrics/cache-stats-schema.js';
import { pageBacking } from '../../src/data/huge-pages.js';
import { BlockFiles, fileCallsOf } from '../../src/tiers/block-file.js';

const BASE = ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress'];

test('bad input: exit 2, every problem in one message, no stack trace, nothing written', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli(['--num-users', '-1', '--duration', '0', '--gpu-mem-gb', '-1', '--output', out]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /num-users must be positive/);
    assert.match(r.stderr, /duration must be positive/);
    assert.match(r.stderr, /gpu-mem-gb cannot be negative/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(existsSync(out), false);
    const unknown = await runCli(['--num-userz', '3']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--num-userz/);
    // Output directories that do not exist yet are not created by a run that is refused.
    const nested = await runCli([
      '--num-users',
      '-1',
      '--output',
      join(dir, 'new', 'r.json'),
      '--xlsx-output',
      join(dir, 'new2', 's.xlsx'),
    ]);
    assert.equal(nested.code, 2);
    // A refused run with tracing asked for starts no tracer and writes no fio job either.
    const later = await runCli(['--enable-latency-tracing', '--num-users', '-1', '--output', out]);
    assert.equal(later.code, 2);
    assert.match(later.stderr, /num-users/);
    assert.deepEqual(await readdir(dir), []);
  });
});

test('help lists the flags by group and exits 0', async () => {
  const r = await runCli(['--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--model', '--num-users', '--cache-dir', '--io-mode', '--max-requests', '--output'])
    assert.ok(r.stdout.includes(flag), flag);
});

test('kv-cache schema prints the generated JSON Schema of run or replay results; anything else is exit 2', async () => {
  const run = await runCli(['schema']);
  assert.equal(run.code, 0, run.stderr);
  const printed = JSON.parse(run.stdout) as {
    $schema: string;
    properties: { kvcache_bench: { properties: { schema_version: { const: string } } } };
  };
  assert.deepEqual(printed, resultsJsonSchema('run'));
  assert.equal(printed.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(printed.properties.kvcache_bench.properties.schema_version.const, SCHEMA_VERSION);
  const replay = await runCli(['schema', 'replay']);
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(JSON.parse(replay.stdout), resultsJsonSchema('replay'));
  const bad = await runCli(['schema', 'everything']);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    "kv-cache schema: error: Invalid configuration: invalid results kind 'everything'; valid: run, replay, size\nUsage: kv-cache schema [run|replay|size]\n",
  );
  assert.equal(bad.stdout, '');
});

test('a short storage-only run writes a consistent, reference-shaped results file and leaves no files', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const cache = join(dir, 'cache');
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const r = await runCli([
      ...BASE,
      '--config',
      config,
      '--num-users',
      '4',
      '--duration',
      '3',
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0',
      '--cache-dir',
      cache,
      '--create-cache-dir',
      '--seed',
      '3',
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\n### VALIDITY ###\n(VALID|NOT VALID: )/);
    // Every reference field is required by the published schema; the file is checked against it.
    const j = await readValidResults(out);
    const s = j.summary;
    const cs = s.cache_stats;
    for (const k of ['storage_read_p95_ms', 'storage_write_p95_ms', 'storage_read_device_p95_ms', 'storage_write_host_p95_ms'] as const)
      assert.equal(typeof cs[k], 'number', k);

    // Consistency.
    const add = j.kvcache_bench;
    assert.ok(j.requests_completed > 0);
    assert.equal(add.latency_histograms.request_end_to_end?.count, j.requests_completed);
    assert.equal(s.total_requests, j.requests_completed);
    assert.equal(cs.cache_hit_rate, cs.cache_hits / (cs.cache_hits + cs.cache_misses));
    assert.equal(
      TIERS.reduce((n, t) => n + cs[`tier_${t}_placement_write_bytes`], 0),
      cs.total_write_bytes,
    );
    assert.equal(
      TIERS.reduce((n, t) => n + cs[`tier_${t}_hit_read_bytes`], 0),
      cs.total_read_bytes,
    );
    // Storage-only: every byte on the storage tier.
    assert.equal(cs.tier_storage_placement_write_bytes, cs.total_write_bytes);
    assert.equal(cs.tier_storage_hit_read_bytes, cs.total_read_bytes);
    assert.equal(cs.tier_cpu_kv_bytes_written_gb, 0);
    assert.equal(cs.gpu_entries, 0);
    assert.equal(add.stop_reason, 'duration');
    assert.ok(add.measured_window_sec >= 3);
    assert.equal(s.elapsed_time, add.measured_window_sec);
    assert.equal(add.machine.cache_dir?.file_system, add.storage_file_system);
    // The run records how its buffers were backed, as this machine and build allow.
    assert.equal(add.machine.io_buffers, pageBacking().description);
    // … and how its small entries' system calls were made (native jobs when the helper is built).
    const probe = BlockFiles.load(1);
    if (typeof probe !== 'string') probe.close();
    assert.equal(add.storage_file_calls, fileCallsOf(add.storage_io_mode === 'direct' ? 'direct' : 'buffered', probe));
    // The cache dir is left as it was found: no entry files remain.
    assert.deepEqual(existsSync(cache) ? (await readdir(cache)).filter((f) => f.endsWith('.bin')) : [], []);
  });
});

test('same seed, generation none and --max-requests: identical requests, reads, writes, hits and bytes', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const run = async (name: string): Promise<ResultsDocument> => {
      const out = join(dir, `${name}.json`);
      const r = await runCli([
        ...BASE,
        '--config',
        config,
        '--num-users',
        '5',
        '--duration',
        '60',
        '--max-requests',
        '40',
        '--seed',
        '11',
        '--gpu-mem-gb',
        '0',
        '--cpu-mem-gb',
        '0',
        '--cache-dir',
        join(dir, name),
        '--create-cache-dir',
        '--output',
        out,
      ]);
      assert.equal(r.code, 0, r.stderr);
      return readValidResults(out);
    };
    const a = await run('a');
    const b = await run('b');
    const pick = (j: ResultsDocument): Record<string, unknown> => {
      const cs = j.summary.cache_stats;
      return {
        requests: j.requests_completed,
        tokens: j.total_tokens_generated,
        mt: [j.multi_turn_cache_hits, j.multi_turn_cache_misses],
        ...Object.fromEntries(
          (
            [
              'cache_hits',
              'cache_misses',
              'read_iops',
              'write_iops',
              'total_read_bytes',
              'total_write_bytes',
              'prefill_writes',
              'decode_reads',
            ] as const
          ).map((k) => [k, cs[k]]),
        ),
      };
    };
    assert.equal(a.requests_completed, 40);
    assert.equal(a.kvcache_bench.stop_reason, 'max_requests');
    assert.deepEqual(pick(a), pick(b));
    assert.equal(a.seed, 11);
  });
});

test('SIGINT mid-run stops promptly and leaves a valid results file marked interrupted', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli(
      [
        ...BASE,
        '--num-users',
        '4',
        '--duration',
        '120',
        '--gpu-mem-gb',
        '0',
        '--cpu-mem-gb',
        '0',
        '--cache-dir',
        join(dir, 'c'),
        '--create-cache-dir',
        '--output',
        out,
      ],
      {
        onStart: (kill) => void setTimeout(() => kill('SIGINT'), 2500),
      },
    );
    assert.equal(r.code, 130, r.stderr);
    const add = (await readValidResults(out)).kvcache_bench;
    assert.equal(add.interrupted, true);
    assert.equal(add.stop_reason, 'interrupted');
    assert.ok(add.measured_window_sec < 60);
  });
});
