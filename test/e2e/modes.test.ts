// Disaggregated modes and preconditioning through the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { inTempDir, runCli, smallWorkloadArgs } from './run-cli.js';

import { readValidResults } from '../report/validate-results.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';

async function run(args: string[]): Promise<{ json: ResultsDocument; stdout: string }> {
  return inTempDir(async (dir) => {
    const common = await smallWorkloadArgs(dir);
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...common,
      '--num-users',
      '3',
      '--duration',
      '2',
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0',
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
      '--output',
      out,
      ...args,
    ]);
    assert.equal(r.code, 0, r.stderr);
    return { json: await readValidResults(out), stdout: r.stdout };
  });
}

const cacheStats = (j: ResultsDocument): ResultsDocument['summary']['cache_stats'] => j.summary.cache_stats;

test('decode-only: pre-populated entries are read, nothing is written while measured', async () => {
  const { json, stdout } = await run(['--decode-only']);
  assert.match(stdout, /Pre-populated 30 entries/);
  const cs = cacheStats(json);
  assert.equal(cs.write_iops, 0);
  assert.equal(cs.total_write_bytes, 0);
  assert.ok(cs.read_iops > 0);
  assert.ok(cs.cache_hits > 0);
});

test('decode-only in block mode (issue 34): pre-populated block chains are looked up and read whole, no block is written', async () => {
  const { json, stdout } = await run(['--decode-only', '--kv-block-tokens', '256']);
  assert.match(stdout, /Pre-populated 30 entries/);
  assert.equal(cacheStats(json).total_write_bytes, 0);
  const k = json.kvcache_bench.kv_blocks;
  assert.ok(k !== undefined);
  assert.equal(k.blocks_written, 0);
  assert.equal(k.blocks_not_written, 0);
  assert.ok(k.requests > 0);
  assert.equal(k.token_hit_rate.total, 1, 'every chain was pre-populated whole');
  // 2048-token entries in 256-token blocks: 8 blocks a chain.
  assert.equal(k.blocks_asked, 8 * k.requests);
  assert.equal(k.decode_block_misses, 0);
});

test('prefill-only without multi-turn and prefix caching: writes only, no read at all', async () => {
  const { json } = await run(['--prefill-only', '--disable-multi-turn', '--disable-prefix-caching']);
  const cs = cacheStats(json);
  assert.equal(cs.read_iops, 0);
  assert.equal(cs.total_read_bytes, 0);
  assert.ok(cs.write_iops > 0);
});

test('preconditioning writes before the measured phase and is not counted in it', async () => {
  const { json, stdout } = await run([
    '--precondition',
    '--precondition-size-gb',
    '0.2',
    '--precondition-threads',
    '2',
    '--prefill-only',
    '--disable-multi-turn',
    '--disable-prefix-caching',
  ]);
  assert.match(stdout, /Preconditioning done: 0\.2\d GiB/);
  const cs = cacheStats(json);
  // Only the measured phase's writes are counted: each is a request's own entry.
  assert.equal(cs.write_iops, cs.prefill_writes);
  assert.ok(cs.write_iops <= json.requests_completed + json.kvcache_bench.requests_aborted_at_stop);
  assert.ok(cs.storage_entries > cs.write_iops, 'preconditioning entries occupy the tier');
});

test('autoscaling records its events, summary and throughput timeline', async () => {
  const { json } = await run(['--enable-autoscaling', '--autoscaler-mode', 'capacity', '--autoscale-interval', '0.5']);
  const s = json.summary;
  const events = s.autoscaling_stats;
  assert.ok(events.length >= 2, `${events.length} events`);
  assert.equal(events[0]?.mode, 'capacity');
  // The first user count is measured over consecutive_samples_required (2) samples before a decision.
  assert.deepEqual(
    events.slice(0, 2).map((e) => [e.action, e.users_during, e.users_after]),
    [
      ['hold', 3, 3],
      ['scale_up', 3, 8],
    ],
  );
  // The decision log and the timeline agree on the users at every sample.
  assert.deepEqual(
    json.throughput_timeline.map((t) => [t.timestamp, t.users, t.users_during, t.users_after]),
    events.map((e) => [e.timestamp, e.users_during, e.users_during, e.users_after]),
  );
  const summary = s.autoscaling_summary;
  assert.ok(summary !== null);
  assert.equal(summary.initial_users, 3);
  assert.ok(summary.peak_user_count !== undefined && summary.peak_throughput_tokens_per_sec !== undefined);
  assert.ok(json.throughput_timeline.length >= 2);
  assert.ok(summary.final_users > 3, 'capacity mode added users');
});
