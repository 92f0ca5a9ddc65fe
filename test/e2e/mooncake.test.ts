// Mooncake trace replay end to end (issue 22): the trace's own ideal hit rate, computed here
// independently of the tool, equals the achieved one with unlimited capacity, and falls
// monotonically as the tiers shrink; .zst replays the same; bad input exits 2 with nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inTempDir, runCli } from './run-cli.js';

const SHARED_TRACE = fileURLToPath(new URL('../../../../shared/traces/mooncake_conversation_trace.jsonl', import.meta.url));
const EXCERPT = fileURLToPath(new URL('../../../test/fixtures/mooncake-conversation-300.jsonl', import.meta.url));
/** The public trace beside the project (CI's clean clone has it), else the committed excerpt. */
const TRACE = existsSync(SHARED_TRACE) ? SHARED_TRACE : EXCERPT;
if (TRACE === EXCERPT) console.log(`# ${SHARED_TRACE} not found: the committed 300-line excerpt stands in for the whole trace`);

interface Ideal {
  blockHitRate: number;
  tokenHitRate: number;
  blocks: number;
  tokens: number;
}

/** Every repeated hash id is a hit (unlimited capacity), tokens weighted by what each block holds. */
function idealOf(lines: readonly string[]): Ideal {
  const seen = new Set<number>();
  let blocks = 0;
  let hits = 0;
  let tokens = 0;
  let hitTokens = 0;
  for (const line of lines) {
    const r = JSON.parse(line) as { input_length: number; hash_ids: number[] };
    r.hash_ids.forEach((id, i) => {
      const t = i < r.hash_ids.length - 1 ? 512 : r.input_length - 512 * i;
      blocks++;
      tokens += t;
      if (seen.has(id)) {
        hits++;
        hitTokens += t;
      }
    });
    for (const id of r.hash_ids) seen.add(id);
  }
  return { blockHitRate: hits / blocks, tokenHitRate: hitTokens / tokens, blocks, tokens };
}

const traceLines = (path: string): string[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

/** A trace-mode replay, unpaced, one pass, prefill only: only the prefix lookups and writes. */
function replayArgs(dir: string, trace: string, extra: readonly string[]): string[] {
  return [
    '--mooncake-trace',
    trace,
    '--trace-speedup',
    '0',
    '--replay-cycles',
    '1',
    '--prefill-only',
    '--generation-mode',
    'none',
    '--no-progress',
    '--duration',
    '3600',
    '--gpu-mem-gb',
    '0',
    '--io-trace-log',
    join(dir, 'io.csv'),
    ...extra,
  ];
}

interface KvBlocks {
  token_hit_rate: { total: number };
  block_hit_rate: { total: number };
  ideal: { token_hit_rate: number; block_hit_rate: number };
  blocks_asked: number;
  tokens_asked: number;
  keys: string;
  block_tokens: number;
  block_reads_per_sec: number;
  block_writes_per_sec: number;
}

async function replay(dir: string, trace: string, extra: readonly string[], name: string): Promise<KvBlocks> {
  const out = join(dir, `${name}.json`);
  const r = await runCli([...replayArgs(dir, trace, extra), '--output', out]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(readFileSync(out, 'utf8')) as { kvcache_bench: { kv_blocks: KvBlocks; stop_reason: string } };
  assert.equal(doc.kvcache_bench.stop_reason, 'workload_complete');
  return doc.kvcache_bench.kv_blocks;
}

test("with unlimited capacity the achieved hit rates are the trace's own ideal ones", async () => {
  await inTempDir(async (dir) => {
    const ideal = idealOf(traceLines(TRACE));
    const k = await replay(dir, TRACE, ['--cpu-mem-gb', '0'], 'unlimited');
    assert.equal(k.keys, 'trace_hash_ids');
    assert.equal(k.block_tokens, 512);
    assert.equal(k.blocks_asked, ideal.blocks);
    assert.equal(k.tokens_asked, ideal.tokens);
    assert.ok(Math.abs(k.block_hit_rate.total - ideal.blockHitRate) < 1e-12, `${k.block_hit_rate.total} vs ${ideal.blockHitRate}`);
    assert.ok(Math.abs(k.token_hit_rate.total - ideal.tokenHitRate) < 1e-12, `${k.token_hit_rate.total} vs ${ideal.tokenHitRate}`);
    assert.ok(Math.abs(k.ideal.token_hit_rate - ideal.tokenHitRate) < 1e-12);
    assert.ok(ideal.blockHitRate > 0.05, 'the trace does reuse prefixes');
  });
});

test('the achieved token hit rate falls monotonically as the CPU and storage tiers shrink', async () => {
  await inTempDir(async (dir) => {
    const lines = traceLines(TRACE).slice(0, 3000);
    const trace = join(dir, 'head.jsonl');
    await writeFile(trace, lines.join('\n') + '\n');
    const ideal = idealOf(lines);
    // (CPU GiB, storage GiB): total room shrinking step by step.
    const steps: ReadonlyArray<readonly [number, number]> = [
      [0, 0], // 0 storage = unlimited in trace mode
      [16, 48],
      [4, 12],
      [0, 4],
    ];
    const rates: number[] = [];
    for (const [cpu, storage] of steps) {
      const extra = ['--cpu-mem-gb', String(cpu), ...(storage > 0 ? ['--storage-capacity-gb', String(storage)] : [])];
      rates.push((await replay(dir, trace, extra, `c${cpu}-s${storage}`)).token_hit_rate.total);
    }
    assert.ok(Math.abs((rates[0] ?? 0) - ideal.tokenHitRate) < 1e-12, 'unlimited: the ideal');
    for (let i = 1; i < rates.length; i++) assert.ok((rates[i] ?? 1) < (rates[i - 1] ?? 0), `rates fall step by step: ${rates.join(', ')}`);
  });
});

test('a .zst trace replays as the plain one does', async () => {
  await inTempDir(async (dir) => {
    const zst = join(dir, 'trace.jsonl.zst');
    execFileSync('zstd', ['-q', '-f', EXCERPT, '-o', zst]);
    const plain = await replay(dir, EXCERPT, ['--cpu-mem-gb', '0'], 'plain');
    const packed = await replay(dir, zst, ['--cpu-mem-gb', '0'], 'packed');
    // Everything but the rates per second of wall time.
    const counts = (k: KvBlocks): Omit<KvBlocks, 'block_reads_per_sec' | 'block_writes_per_sec'> => {
      const { block_reads_per_sec: _reads, block_writes_per_sec: _writes, ...rest } = k;
      return rest;
    };
    assert.deepEqual(counts(packed), counts(plain));
  });
});

test('bad traces and flags: one message naming the problem, exit 2, nothing written', async () => {
  await inTempDir(async (dir) => {
    const bad = join(dir, 'bad.jsonl');
    await writeFile(bad, 'garbage\n{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [1]}\n');
    const cut = join(dir, 'cut.jsonl.zst');
    await writeFile(cut, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]));
    const forged = join(dir, 'evil\nkv-cache: VALID.jsonl'); // a name that would forge a console line
    await writeFile(forged, 'x\n');
    const cases: ReadonlyArray<readonly [readonly string[], RegExp]> = [
      [['--mooncake-trace', bad], /line 1: not a JSON object; line 2: "hash_ids" has 1 ids for input_length 600/],
      [['--mooncake-trace', join(dir, 'none.jsonl')], /Mooncake trace ".*none\.jsonl": file not found/],
      [['--mooncake-trace', dir], /Mooncake trace ".*": .*directory/],
      [['--mooncake-trace', cut], /cannot be decompressed/],
      [['--mooncake-trace', forged], /evil\\nkv-cache: VALID\.jsonl" has no usable record/],
      [['--mooncake-trace', EXCERPT, '--use-burst-trace'], /mutually exclusive/],
      // Block-granular decode-only runs since issue 34; with a shared pool it is refused.
      [['--kv-block-tokens', '16', '--kv-pool', 'shared', '--decode-only'], /--kv-pool shared with --decode-only/],
      [['--kv-block-tokens', '-1'], /kv-block-tokens/],
    ];
    for (const [args, message] of cases) {
      const out = join(dir, 'out.json');
      const r = await runCli([...args, '--duration', '1', '--no-progress', '--output', out]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(existsSync(out), false, 'nothing written');
    }
    assert.deepEqual((await readdir(dir)).sort(), ['bad.jsonl', 'cut.jsonl.zst', 'evil\nkv-cache: VALID.jsonl']);
  });
});
