// The block-granular results (issue 22) as a reader sees them: kvcache_bench.kv_blocks from the
// run's counts (valid against the published schema), the console's KV BLOCKS section, and compare's
// KV blocks table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KvBlocksFacts } from '../../src/metrics/result.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { kvBlocksLines } from '../../src/report/console-blocks.js';
import { formatCompareTable } from '../../src/report/html/compare-table.js';
import { reportHtml } from '../../src/report/html/build-report.js';
import { HEADLINE_FIGURES } from '../../src/report/html/headline.js';
import { formatSummary } from '../../src/report/console.js';
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

test('block mode leads with the token hit rate beside its ideal; the reference cache_hit_rate stays, labelled (issue 35)', () => {
  const blocks = buildResultsJson({ ...runResultFixture(), kvBlocks: facts() });
  const whole = buildResultsJson(runResultFixture());
  const storageSection = (doc: typeof blocks): string[] => {
    const lines = formatSummary(doc, 'throughput').split('\n');
    const at = lines.indexOf('### STORAGE PERFORMANCE ###');
    return lines.slice(at + 1, at + 3);
  };
  const refRate = (blocks.summary.cache_stats.cache_hit_rate * 100).toFixed(1);
  assert.deepEqual(storageSection(blocks), [
    "  Token hit rate: 37.5 %   (ideal 50.0 %: the workload's reuse with unlimited capacity)",
    `  Cache hit rate (reference: per operation, decode re-reads included): ${refRate} %   (hits ${blocks.summary.cache_stats.cache_hits}, misses ${blocks.summary.cache_stats.cache_misses})`,
  ]);
  assert.match(storageSection(whole)[0] ?? '', /^ {2}Cache hit rate: \d+\.\d %/);

  const html = reportHtml([loaded(blocks, 'b.json')], new Date('2026-01-02T03:04:05Z'), '9.9.9');
  const tiles = [
    ...html.matchAll(
      /<div class="figure"[^>]*><span class="value" id="fig-0-([a-z0-9_]+)"[^>]*>([^<]*)<\/span><span class="unit">[^<]*<\/span><span class="label">([^<]*)<\/span>/g,
    ),
  ];
  assert.deepEqual(
    tiles.slice(0, 2).map((t) => [t[1], t[2]]),
    [
      ['token_hit_rate', '37.5'],
      ['ideal_token_hit_rate', '50.0'],
    ],
  );
  const reference = tiles.find((t) => t[1] === 'cache_hit_rate');
  assert.equal(reference?.[3], 'Cache hit rate (reference: per operation, decode re-reads included)');
  assert.equal(
    tiles.findIndex((t) => t[1] === 'cache_hit_rate') - 2,
    HEADLINE_FIGURES.findIndex((f) => f.key === 'cache_hit_rate'),
    'the reference figure keeps its place after the two lead tiles',
  );
  const wholeHtml = reportHtml([loaded(whole, 'a.json')], new Date('2026-01-02T03:04:05Z'), '9.9.9');
  assert.ok(!wholeHtml.includes('fig-0-token_hit_rate'), 'whole-request runs keep the headline as it was');
  assert.ok(wholeHtml.includes('<span class="label">Cache hit rate</span>'));
});
