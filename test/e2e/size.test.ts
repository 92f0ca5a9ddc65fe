// `kv-cache size` end to end (issue 33): on the committed Mooncake excerpt the one-pass curve equals
// storage-only trace-mode runs (one user, trace order) at capacities spread over the curve, including
// its steep part; the JSON follows its schema; bad input gives the run's messages, exit 2, no file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { sizeJsonSchema } from '../../src/report/size-report.js';
import type { SizeDocument } from '../../src/report/size-report.js';
import { inTempDir, runCli } from './run-cli.js';

const EXCERPT = fileURLToPath(new URL('../../../test/fixtures/mooncake-conversation-300.jsonl', import.meta.url));
const GiB = 2 ** 30;

/** A storage-only trace-mode run of the excerpt with `gib` GiB of storage: its token hit rate. */
async function runHitRate(dir: string, gib: number): Promise<number> {
  const out = join(dir, `run-${gib}.json`);
  const r = await runCli([
    ...['--mooncake-trace', EXCERPT, '--model', 'llama3.1-8b', '--trace-speedup', '0', '--replay-cycles', '1', '--duration', '600'],
    ...['--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--storage-capacity-gb', String(gib), '--generation-mode', 'none', '--num-users', '1'],
    ...['--io-trace-log', join(dir, `trace-${gib}.csv`), '--output', out, '--no-progress', '--seed', '1'],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(readFileSync(out, 'utf8')) as { kvcache_bench: { kv_blocks: { token_hit_rate: { total: number } } } };
  return doc.kvcache_bench.kv_blocks.token_hit_rate.total;
}

test('kv-cache size: the curve equals storage-only trace-mode runs at 4 capacities (excerpt, llama3.1-8b)', async () => {
  await inTempDir(async (dir) => {
    const json = join(dir, 'size.json');
    const r = await runCli([
      'size',
      '--mooncake-trace',
      EXCERPT,
      '--model',
      'llama3.1-8b',
      '--capacities',
      '16G,64G,256G,1T',
      '--json',
      json,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(json, 'utf8')) as SizeDocument;
    const ajv = new Ajv2020({ strict: false });
    assert.ok(ajv.validate(sizeJsonSchema(), doc), JSON.stringify(ajv.errors));
    const d = doc.deployments[0];
    assert.equal(d?.pool, 'single');
    const named = d?.points.filter((p) => p.requested) ?? [];
    assert.deepEqual(
      named.map((p) => p.capacity_bytes / GiB),
      [16, 64, 256, 1024],
    );
    // The excerpt's curve: flat to 64 GiB, steep from there to 1 TiB where it meets the ideal.
    assert.deepEqual(
      named.map((p) => Number(p.token_hit_rate.toFixed(5))),
      [0.03585, 0.03585, 0.05336, 0.08102],
    );
    assert.equal(Number(d?.ideal.token_hit_rate.toFixed(5)), 0.08102);
    assert.equal(d?.exact_from_bytes, 15_811_608_576);
    for (const p of named) {
      const run = await runHitRate(dir, p.capacity_bytes / GiB);
      assert.ok(Math.abs(run - p.token_hit_rate) < 1e-12, `${p.capacity_bytes / GiB} GiB: run ${run}, curve ${p.token_hit_rate}`);
    }
    assert.match(r.stdout, /ideal \(unlimited\): token hit rate 8\.10 %/);
  });
});

test('kv-cache size: bad input exits 2 with one message and writes nothing', async () => {
  await inTempDir(async (dir) => {
    const json = join(dir, 'out.json');
    const missing = join(dir, 'none.jsonl');
    const run = await runCli(['--mooncake-trace', missing, '--io-trace-log', join(dir, 't.csv'), '--output', join(dir, 'r.json')]);
    const size = await runCli(['size', '--mooncake-trace', missing, '--json', json]);
    assert.equal(run.code, 2);
    assert.equal(size.code, 2);
    const message = /Mooncake trace ".*none\.jsonl": file not found/;
    assert.match(run.stderr, message);
    assert.equal(size.stderr, run.stderr.replace('kv-cache: error:', 'kv-cache size: error:'), 'the run\u2019s own message');
    for (const [args, expected] of [
      [['--capacities', '1T,lots,0G'], /--capacities: 'lots' is not a capacity.*\n.*--capacities: '0G' is not a capacity/],
      [['--kv-block-tokens', '0'], /needs a block-granular workload/],
      [['--num-users', 'x'], /--num-users expects an integer/],
      [['--servers', '0'], /--servers expects an integer from 1 to 4096/],
    ] as const) {
      const r = await runCli([
        'size',
        ...((args as readonly string[]).includes('--kv-block-tokens') ? [] : ['--mooncake-trace', EXCERPT]),
        ...args,
        '--json',
        json,
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    assert.equal(existsSync(json), false, 'nothing written');
  });
});

test('kv-cache size: a trace with no reuse is flat at 0, and says so', async () => {
  await inTempDir(async (dir) => {
    const trace = join(dir, 'unique.jsonl');
    const lines = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify({ timestamp: i * 1000, input_length: 1000, output_length: 1, hash_ids: [2 * i, 2 * i + 1] }),
    );
    await writeFile(trace, lines.join('\n') + '\n');
    const json = join(dir, 'size.json');
    const r = await runCli(['size', '--mooncake-trace', trace, '--model', 'tiny-1b', '--json', json, '--csv', join(dir, 's.csv')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /no reuse: no block was asked twice, so the hit rate is 0 at every capacity/);
    const doc = JSON.parse(readFileSync(json, 'utf8')) as SizeDocument;
    assert.equal(doc.deployments[0]?.no_reuse, true);
    assert.ok(doc.deployments[0]?.points.every((p) => p.token_hit_rate === 0));
    assert.equal(doc.workload.requests, 5);
    assert.equal(doc.workload.span_seconds, 4);
    assert.match(readFileSync(join(dir, 's.csv'), 'utf8'), /^pool,servers,route,capacity_bytes,token_hit_rate/);
  });
});

test('kv-cache size: --servers 2 gives a shared and a private curve; synthetic users in block mode work', async () => {
  await inTempDir(async (dir) => {
    const json = join(dir, 'size.json');
    const r = await runCli([
      ...['size', '--kv-block-tokens', '256', '--model', 'tiny-1b', '--seed', '7', '--max-requests', '300', '--num-users', '6'],
      ...['--servers', '2', '--route', 'round-robin', '--json', json, '--html', join(dir, 'size.html')],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(json, 'utf8')) as SizeDocument;
    assert.deepEqual(
      doc.deployments.map((d) => [d.pool, d.servers, d.route]),
      [
        ['shared', 2, null],
        ['private', 2, 'round-robin'],
      ],
    );
    assert.equal(doc.workload.requests, 300);
    const [shared, priv] = doc.deployments;
    assert.ok((shared?.ideal.token_hit_rate ?? 0) > 0);
    // Round-robin splits conversations over two pools: a private pool cannot hit what the other wrote.
    assert.ok((priv?.ideal.token_hit_rate ?? 1) < (shared?.ideal.token_hit_rate ?? 0));
    assert.match(readFileSync(join(dir, 'size.html'), 'utf8'), /How much KV storage does this traffic need\?/);
  });
});
