// ShareGPT and BurstGPT replays through the real CLI, on small fixture files made here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inTempDir, runCli, shareGptText, smallWorkloadArgs } from './run-cli.js';

import { readValidReplayResults, readValidResults } from '../report/validate-results.js';

const COMMON = [
  '--model',
  'tiny-1b',
  '--generation-mode',
  'none',
  '--no-progress',
  '--num-users',
  '2',
  '--duration',
  '60',
  '--gpu-mem-gb',
  '0',
  '--cpu-mem-gb',
  '0',
  '--disable-prefix-caching',
  '--tokenizer',
  'chars',
];

test('ShareGPT: one replay cycle completes every turn, and later turns reload earlier ones', async () => {
  await inTempDir(async (dir) => {
    const data = join(dir, 'sg.json');
    await writeFile(data, shareGptText([3, 2, 1]));
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...COMMON,
      '--dataset-path',
      data,
      '--replay-cycles',
      '1',
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const j = await readValidResults(out);
    const add = j.kvcache_bench;
    assert.equal(add.stop_reason, 'workload_complete');
    assert.equal(j.requests_completed, 6);
    const src = add.workload_source;
    assert.ok(src.kind === 'sharegpt');
    assert.equal(src.turns, 6);
    // Turn 2 of 'a' reloads 1, turn 3 reloads 2, turn 2 of 'b' reloads 1: four reloads, all hits.
    assert.equal(j.multi_turn_cache_hits, 4);
    assert.equal(j.multi_turn_cache_misses, 0);
  });
});

test('ShareGPT with --disable-multi-turn runs (the reference killed every worker)', async () => {
  await inTempDir(async (dir) => {
    const data = join(dir, 'sg.json');
    await writeFile(data, shareGptText([3, 2, 1]));
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...COMMON,
      '--dataset-path',
      data,
      '--replay-cycles',
      '1',
      '--disable-multi-turn',
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const j = await readValidResults(out);
    assert.equal(j.requests_completed, 6);
    assert.equal(j.multi_turn_cache_hits, 0);
  });
});

test('a missing or malformed dataset is bad input: exit 2, the file named, nothing written', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const missing = await runCli([...COMMON, '--dataset-path', join(dir, 'nope.json'), '--output', out]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '[{"conversations": [}');
    const malformed = await runCli([...COMMON, '--dataset-path', bad, '--output', out]);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /bad\.json/);
    assert.doesNotMatch(malformed.stderr, /\n\s+at /);
    assert.equal(existsSync(out), false);
  });
});

test('BurstGPT: a directory replays every valid row once, malformed rows are counted', async () => {
  await inTempDir(async (dir) => {
    const traces = join(dir, 'burst');
    await mkdir(traces);
    const header = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';
    await writeFile(
      join(traces, 'BurstGPT_1.csv'),
      [
        header,
        ...[0, 1, 2, 3, 4].map((i) => `${i * 0.01},ChatGPT,${(i + 1) * 100},${(i + 1) * 20},${(i + 1) * 120},Conversation log`),
        '0.05,ChatGPT,abc,20,,Conversation log',
      ].join('\n'),
    );
    await writeFile(
      join(traces, 'BurstGPT_2.csv'),
      [header, ...[5, 6, 7].map((i) => `${i * 0.01},ChatGPT,${(i + 1) * 100},${(i + 1) * 20},${(i + 1) * 120},Conversation log`)].join(
        '\n',
      ),
    );
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...COMMON,
      '--use-burst-trace',
      '--burst-trace-path',
      traces,
      '--trace-speedup',
      '0',
      '--replay-cycles',
      '1',
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const j = await readValidResults(out);
    const add = j.kvcache_bench;
    assert.equal(add.stop_reason, 'workload_complete');
    assert.equal(j.requests_completed, 8);
    const src = add.workload_source;
    assert.ok(src.kind === 'burstgpt');
    assert.equal(src.rows, 8);
    assert.equal(src.skipped_rows, 1);
    const missing = await runCli([
      ...COMMON,
      '--use-burst-trace',
      '--burst-trace-path',
      join(dir, 'none', '*.csv'),
      '--output',
      join(dir, 'x.json'),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /none/);
  });
});

test('a run in trace mode writes a .zst I/O trace that replays with the same reads, writes and bytes', async () => {
  await inTempDir(async (dir) => {
    const common = await smallWorkloadArgs(dir);
    const trace = join(dir, 'io', 'trace.csv.zst');
    const out = join(dir, 'run.json');
    const r = await runCli([
      ...common,
      '--num-users',
      '3',
      '--duration',
      '30',
      '--max-requests',
      '20',
      '--seed',
      '5',
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0',
      '--io-trace-log',
      trace,
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /I\/O trace: \d+ rows written/);
    const run = await readValidResults(out);
    const cs = run.summary.cache_stats;
    assert.equal(run.kvcache_bench.machine.cache_dir, null, 'trace mode has no cache dir');
    assert.equal(run.kvcache_bench.metadata_ops, undefined, 'trace mode: no storage, no metadata calls');
    const replayOut = join(dir, 'replay.json');
    const rp = await runCli([
      'replay',
      trace,
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
      '--concurrency',
      '4',
      '--output',
      replayOut,
    ]);
    assert.equal(rp.code, 0, rp.stderr);
    const replayDoc = await readValidReplayResults(replayOut);
    const replay = replayDoc.replay;
    assert.equal(replayDoc.kvcache_bench.machine.cache_dir?.file_system, replayDoc.kvcache_bench.storage_file_system);
    assert.equal(replay.writes, cs.write_iops);
    assert.equal(replay.reads, cs.read_iops);
    assert.equal(replay.write_bytes, cs.total_write_bytes);
    assert.equal(replay.read_bytes, cs.total_read_bytes);
    assert.equal(replay.missing_keys, 0);
    const meta = replayDoc.kvcache_bench.metadata_ops;
    assert.ok(meta !== undefined, "a replay's storage reports its metadata calls");
    assert.equal(
      meta.total,
      meta.create.count + meta.rename.count + meta.link.count + meta.unlink.count + meta.lookup.count + meta.mkdir.count,
    );
    assert.ok(replay.writes > 0 && replay.reads > 0);
  });
});
