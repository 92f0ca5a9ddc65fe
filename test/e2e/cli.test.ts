// End-to-end: the CLI run for a few seconds on tiny-1b in a temp dir, checked through its JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inTempDir, runCli, SMALL_USERS } from './run-cli.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => v as Obj;


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
    const nested = await runCli(['--num-users', '-1', '--output', join(dir, 'new', 'r.json'), '--xlsx-output', join(dir, 'new2', 's.xlsx')]);
    assert.equal(nested.code, 2);
    const later = await runCli(['--enable-latency-tracing', '--output', out]);
    assert.equal(later.code, 2);
    assert.match(later.stderr, /not implemented yet/);
    assert.deepEqual(await readdir(dir), []);
  });
});

test('help lists the flags by group and exits 0', async () => {
  const r = await runCli(['--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--model', '--num-users', '--cache-dir', '--io-mode', '--max-requests', '--output']) assert.ok(r.stdout.includes(flag), flag);
});

test('a short storage-only run writes a consistent, reference-shaped results file and leaves no files', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const cache = join(dir, 'cache');
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const r = await runCli([...BASE, '--config', config, '--num-users', '4', '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--cache-dir', cache, '--seed', '3', '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /STORAGE PERFORMANCE ASSESSMENT/);
    const j = JSON.parse(await readFile(out, 'utf8')) as Obj;
    for (const k of ['requests_completed', 'total_tokens_generated', 'total_storage_io_latency', 'total_generation_latency', 'multi_turn_cache_hits', 'multi_turn_cache_misses', 'seed', 'summary']) assert.ok(k in j, k);
    const s = obj(j.summary);
    for (const k of ['total_requests', 'total_tokens', 'elapsed_time', 'avg_throughput_tokens_per_sec', 'total_storage_io_time', 'storage_throughput_tokens_per_sec', 'requests_per_second', 'end_to_end_latency_ms', 'storage_io_latency_ms', 'generation_latency_ms', 'cache_stats', 'qos_metrics', 'prefix_cache_stats', 'autoscaling_stats', 'autoscaling_summary', 'multi_turn_stats']) assert.ok(k in s, k);
    for (const b of ['end_to_end_latency_ms', 'storage_io_latency_ms', 'generation_latency_ms']) for (const p of ['mean', 'p50', 'p95', 'p99', 'p999', 'p9999']) assert.equal(typeof obj(s[b])[p], 'number');
    const cs = obj(s.cache_stats);
    for (const k of ['cache_hit_rate', 'cache_hits', 'cache_misses', 'gpu_entries', 'cpu_entries', 'storage_entries', 'gpu_memory_used_gb', 'cpu_memory_used_gb', 'offloads_cpu', 'offloads_storage', 'storage_health', 'prefill_writes', 'decode_reads', 'system_prompt_hits', 'common_phrase_hits', 'user_cache_hits', 'multi_turn_hits', 'total_read_bytes', 'total_write_bytes', 'total_read_gb', 'total_write_gb', 'read_write_ratio', 'read_iops', 'write_iops', 'storage_tokens_processed']) assert.ok(k in cs, k);
    for (const t of ['gpu', 'cpu', 'storage']) for (const k of [`tier_${t}_kv_bytes_written_gb`, `tier_${t}_kv_bytes_read_gb`, `tier_${t}_read_bandwidth_gbps`, `tier_${t}_write_bandwidth_gbps`]) assert.ok(k in cs, k);
    for (const k of ['storage_read_p95_ms', 'storage_write_p95_ms', 'storage_read_device_p95_ms', 'storage_write_host_p95_ms']) assert.ok(k in cs, k);

    // Consistency.
    const add = obj(j.kvcache_bench);
    const hist = obj(add.latency_histograms);
    assert.ok((j.requests_completed as number) > 0);
    assert.equal(obj(hist.request_end_to_end).count, j.requests_completed);
    assert.equal(s.total_requests, j.requests_completed);
    const hits = cs.cache_hits as number;
    const misses = cs.cache_misses as number;
    assert.equal(cs.cache_hit_rate, hits / (hits + misses));
    const sum = (f: (t: string) => string): number => ['gpu', 'cpu', 'storage'].reduce((n, t) => n + (cs[f(t)] as number), 0);
    assert.equal(sum((t) => `tier_${t}_placement_write_bytes`), cs.total_write_bytes);
    assert.equal(sum((t) => `tier_${t}_hit_read_bytes`), cs.total_read_bytes);
    // Storage-only: every byte on the storage tier.
    assert.equal(cs.tier_storage_placement_write_bytes, cs.total_write_bytes);
    assert.equal(cs.tier_storage_hit_read_bytes, cs.total_read_bytes);
    assert.equal(cs.tier_cpu_kv_bytes_written_gb, 0);
    assert.equal(cs.gpu_entries, 0);
    assert.equal(add.stop_reason, 'duration');
    assert.ok((add.measured_window_sec as number) >= 3);
    assert.equal(s.elapsed_time, add.measured_window_sec);
    // The cache dir is left as it was found: no entry files remain.
    assert.deepEqual(existsSync(cache) ? (await readdir(cache)).filter((f) => f.endsWith('.bin')) : [], []);
  });
});

test('same seed, generation none and --max-requests: identical requests, reads, writes, hits and bytes', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const run = async (name: string): Promise<Obj> => {
      const out = join(dir, `${name}.json`);
      const r = await runCli([...BASE, '--config', config, '--num-users', '5', '--duration', '60', '--max-requests', '40', '--seed', '11', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--cache-dir', join(dir, name), '--output', out]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(await readFile(out, 'utf8')) as Obj;
    };
    const a = await run('a');
    const b = await run('b');
    const pick = (j: Obj): Obj => {
      const cs = obj(obj(j.summary).cache_stats);
      return {
        requests: j.requests_completed,
        tokens: j.total_tokens_generated,
        mt: [j.multi_turn_cache_hits, j.multi_turn_cache_misses],
        ...Object.fromEntries(['cache_hits', 'cache_misses', 'read_iops', 'write_iops', 'total_read_bytes', 'total_write_bytes', 'prefill_writes', 'decode_reads'].map((k) => [k, cs[k]])),
      };
    };
    assert.equal(a.requests_completed, 40);
    assert.equal(obj(a.kvcache_bench).stop_reason, 'max_requests');
    assert.deepEqual(pick(a), pick(b));
    assert.equal(a.seed, 11);
  });
});

test('SIGINT mid-run stops promptly and leaves a valid results file marked interrupted', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli([...BASE, '--num-users', '4', '--duration', '120', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--cache-dir', join(dir, 'c'), '--output', out], {
      onStart: (kill) => void setTimeout(() => kill('SIGINT'), 2500),
    });
    assert.equal(r.code, 130, r.stderr);
    const j = JSON.parse(await readFile(out, 'utf8')) as Obj;
    const add = obj(j.kvcache_bench);
    assert.equal(add.interrupted, true);
    assert.equal(add.stop_reason, 'interrupted');
    assert.ok((add.measured_window_sec as number) < 60);
    assert.ok('summary' in j);
  });
});
