import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRunArgs } from '../../src/cli/run-args.js';
import { ConfigError } from '../../src/cli/errors.js';

const NOW = new Date(2026, 0, 2, 3, 4, 5);
const OMPI = { OMPI_COMM_WORLD_RANK: '2', OMPI_COMM_WORLD_SIZE: '3' };

function problemsOf(argv: string[], env: Record<string, string>): readonly string[] {
  try {
    parseRunArgs(argv, NOW, () => 0.5, undefined, env);
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
}

test('under a launcher each rank gets DIR/rank_<N>/ results and cache, seed = base + rank, and the barrier in the output base', () => {
  const base = mkdtempSync(join(tmpdir(), 'kvcache-rank-'));
  try {
    const { config } = parseRunArgs(
      ['--rank-output-base', join(base, 'out'), '--rank-cache-base', base, '--seed-base', '42'],
      NOW,
      () => 0.5,
      undefined,
      OMPI,
    );
    assert.equal(config.output, join(base, 'out', 'rank_2', 'kvcache_results_20260102_030405.json'));
    assert.equal(config.cacheDir, join(base, 'rank_2'));
    assert.equal(config.createCacheDir, true);
    assert.equal(config.seed, 44);
    assert.equal(config.seedGiven, true);
    assert.equal(config.barrierDir, join(base, 'out', 'barrier'));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('rank flags that contradict the plain ones, a world without a meeting place, and --world-size without a launcher are refused', () => {
  assert.deepEqual(problemsOf(['--rank-output-base', '/tmp/x', '--output', 'r.json', '--seed-base', '1', '--seed', '2'], OMPI), [
    '--output and --rank-output-base exclude each other (each rank writes DIR/rank_<N>/kvcache_results_<time>.json)',
    '--seed and --seed-base exclude each other (each rank’s seed is the base + its rank)',
  ]);
  assert.deepEqual(problemsOf([], OMPI), [
    'this run is rank 2 of 3: the ranks meet in a directory every host shares; give --barrier-dir DIR or --rank-output-base DIR',
  ]);
  assert.deepEqual(problemsOf(['--world-size', '4'], {}), [
    "--world-size 4 needs a launcher's rank variable (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, JOB_COMPLETION_INDEX); none is set",
  ]);
  assert.deepEqual(problemsOf(['--barrier-dir', '/tmp', '--trials', '2'], OMPI), [
    '--trials 2 with 3 ranks: launch each trial on its own (kv-cache mlperf does)',
  ]);
  assert.deepEqual(problemsOf(['--rank-cache-base', '/nonexistent/kv'], { JOB_COMPLETION_INDEX: '0' }), [
    'JOB_COMPLETION_INDEX is set but the world size is unknown: pass --world-size N (the number of ranks, the job’s completions)',
  ]);
});

test('under a launcher each rank of an S3 run keeps its objects under <prefix>rank_<N>/; without one the prefix stays', () => {
  const s3 = ['--storage-backend', 's3', '--s3-bucket', 'kvc', '--storage-capacity-gb', '1', '--barrier-dir', tmpdir()];
  const ranked = (argv: string[], env: Record<string, string>) => parseRunArgs([...s3, ...argv], NOW, () => 0.5, undefined, env).config;
  assert.equal(ranked([], OMPI).s3Prefix, 'kvcache-bench/rank_2/');
  assert.equal(ranked(['--s3-prefix', 'team/a'], OMPI).s3Prefix, 'team/a/rank_2/');
  assert.equal(ranked([], {}).s3Prefix, 'kvcache-bench/');
  // The file tier's runs keep their prefix flag as given (it is unused there).
  assert.equal(parseRunArgs(['--barrier-dir', tmpdir()], NOW, () => 0.5, undefined, OMPI).config.s3Prefix, 'kvcache-bench/');
});
