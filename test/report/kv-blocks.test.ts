// The block-granular results (issue 22) as a reader sees them: kvcache_bench.kv_blocks from the
// run's counts (valid against the published schema), the console's KV BLOCKS section, and compare's
// KV blocks table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KvBlocksFacts } from '../../src/metrics/result.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { kvBlocksLines } from '../../src/report/console-blocks.js';
import { formatCompareTable } from '../../src/report/html/compare-table.js';
import { runResultFixture } from './fixtures.js';
import { loaded } from './html/docs.js';
import { assertValidResults } from './validate-results.js';

const MiB = 2 ** 20;

/** 10 requests asking 1,000 tokens in 8 blocks: 250 tokens (2 blocks) from the CPU tier, 125 (1) from storage. */
function facts(over: Partial<KvBlocksFacts['stats']> = {}): KvBlocksFacts {
  return {
    blockTokens: 128,
    blockBytes: 128 * 24_576,
    keys: 'prefix_hash',
    stats: {
      requests: 10,
      tokensAsked: 1000,
      blocksAsked: 8,
      hitTokens: { gpu: 0, cpu: 250, storage: 125 },
      hitBlocks: { gpu: 0, cpu: 2, storage: 1 },
      blocksWritten: 5,
      tokensWritten: 625,
      blocksFoundWritten: 0,
      blocksNotWritten: 0,
      decodeBlockReads: 4,
      decodeBlockMisses: 1,
      sizes: { count: 12, minBytes: MiB, maxBytes: 3 * MiB, totalBytes: 24 * MiB, buckets: [{ uptoBytes: 4 * MiB, blocks: 12 }] },
      ideal: { tracked: true, hitTokens: 500, hitBlocks: 4 },
      ...over,
    },
  };
}

test('kv_blocks: hit rates are tokens (blocks) served ÷ asked, per tier and in total; rates per second of the window', () => {
  const r = { ...runResultFixture(), kvBlocks: facts() };
  const doc = buildResultsJson(r);
  assertValidResults(doc);
  const k = doc.kvcache_bench.kv_blocks;
  assert.ok(k !== undefined);
  assert.deepEqual(k.token_hit_rate, { gpu: 0, cpu: 0.25, storage: 0.125, total: 0.375 });
  assert.deepEqual(k.block_hit_rate, { gpu: 0, cpu: 0.25, storage: 0.125, total: 0.375 });
  assert.deepEqual(k.ideal, { tracked: true, token_hit_rate: 0.5, block_hit_rate: 0.5 });
  // Reads: 3 prefix hits + 4 decode re-reads − 1 missed; writes: 5; over the fixture's window.
  assert.equal(k.block_reads_per_sec, 6 / r.elapsedSec);
  assert.equal(k.block_writes_per_sec, 5 / r.elapsedSec);
  assert.deepEqual(k.sizes, {
    count: 12,
    min_bytes: MiB,
    mean_bytes: 2 * MiB,
    max_bytes: 3 * MiB,
    buckets: [{ upto_bytes: 4 * MiB, blocks: 12 }],
  });
  assert.equal(buildResultsJson(runResultFixture()).kvcache_bench.kv_blocks, undefined, 'whole-request runs have no block');
});

test('an ideal not tracked is null, never a rate', () => {
  const doc = buildResultsJson({ ...runResultFixture(), kvBlocks: facts({ ideal: { tracked: false, hitTokens: 0, hitBlocks: 0 } }) });
  assertValidResults(doc);
  assert.deepEqual(doc.kvcache_bench.kv_blocks?.ideal, { tracked: false, token_hit_rate: null, block_hit_rate: null });
});

test('console: a rate under the ideal is said to be the cache, not the workload', () => {
  const k = buildResultsJson({ ...runResultFixture(), kvBlocks: facts() }).kvcache_bench.kv_blocks;
  assert.ok(k !== undefined);
  const lines = kvBlocksLines(k);
  assert.match(lines[1] ?? '', /^### KV BLOCKS \(128 tokens = 3\.00 MiB per block; keys: prefix hashes of prompts and conversations/);
  assert.ok(lines.includes('  token hit rate: 37.5 % (gpu 0.0 %, cpu 25.0 %, storage 12.5 %)   block hit rate: 37.5 %'));
  assert.ok(lines.some((l) => l.startsWith('  achieved 37.5 % of an ideal 50.0 %: the cache is too small')));
  const atIdeal = kvBlocksLines({ ...k, ideal: { ...k.ideal, token_hit_rate: 0.375 } });
  assert.ok(!atIdeal.some((l) => l.includes('too small')));
});

test('compare: a KV blocks table after the headline figures when a run has blocks, n/a for one that has none', () => {
  const blocks = buildResultsJson({ ...runResultFixture(), kvBlocks: facts() });
  const whole = buildResultsJson(runResultFixture());
  const text = formatCompareTable([loaded(whole, 'a.json'), loaded(blocks, 'b.json')]);
  assert.match(text, /^KV blocks \(block-granular runs; n\/a: one entry per request\):$/m);
  assert.match(text, /^Token hit rate +% +n\/a +37\.5 *$/m);
  assert.match(text, /^Ideal token hit rate +% +n\/a +50\.0 *$/m);
  assert.ok(!formatCompareTable([loaded(whole, 'a.json'), loaded(whole, 'b.json')]).includes('KV blocks'));
});
