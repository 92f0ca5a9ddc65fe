// A shared KV pool end to end (issue 32, docs/shared-pool.md): four ranks under mpirun replay the
// public Mooncake conversation trace round-robin: with one shared pool the cluster's token hit rate is
// the whole trace's own reuse (computed here from the hash ids, independently of the tool); with a
// private pool per rank it is each rank's own share's reuse. Two "hosts" (UTS and mount namespaces)
// share one pool directory and read each other's blocks. A kept pool makes the next run start warm.
// The same semantics on an object store (radosgw). Bad input exits 2 with nothing written.
// mpirun and namespaces need root and Open MPI (CI has both); skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { onPath } from '../../src/cli/mlperf.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import type { RunSummary } from '../../src/mlperf/merge.js';
import { assertValidResults } from '../report/validate-results.js';
import { BIN, inTempDir, runCli } from './run-cli.js';

const SHARED_TRACE = fileURLToPath(new URL('../../../../shared/traces/mooncake_conversation_trace.jsonl', import.meta.url));
const EXCERPT = fileURLToPath(new URL('../../../test/fixtures/mooncake-conversation-300.jsonl', import.meta.url));
const TRACE = existsSync(SHARED_TRACE) ? SHARED_TRACE : EXCERPT;
if (TRACE === EXCERPT) process.stdout.write(`# ${SHARED_TRACE} not found: the committed 300-line excerpt stands in for the whole trace\n`);

const MPI_SKIP =
  process.getuid?.() !== 0
    ? 'not root: mpirun as root and namespaces are what CI has'
    : !onPath('mpirun', process.env.PATH ?? '')
      ? 'mpirun is not installed (Open MPI: apt-get install openmpi-bin)'
      : false;
if (MPI_SKIP !== false) process.stdout.write(`# shared-pool mpirun tests skipped: ${MPI_SKIP}\n`);

/** A model of 4 bytes per token: a 512-token block is 2 KiB, so the whole trace is a few seconds of I/O. */
const TINY_MODEL = `model_configs:
  kv4:
    num_layers: 1
    hidden_dim: 2
    num_heads: 1
    kv_heads: 1
    dtype: int8
`;

/** Storage only, unpaced, one pass, prefill only: the prefix lookups and the writes of what missed. */
const replay = (config: string, trace = TRACE): string[] => [
  ...['--config', config, '--model', 'kv4', '--mooncake-trace', trace, '--trace-speedup', '0', '--replay-cycles', '1'],
  ...['--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none', '--prefill-only', '--duration', '600', '--no-progress'],
];

interface TraceRecord {
  readonly input_length: number;
  readonly hash_ids: readonly number[];
}

const records = (path: string): TraceRecord[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TraceRecord);

/** Token hit rate with unlimited capacity: a hash id seen before (in `seen`) is a hit; 512 tokens per id, the last the rest. */
function reuse(recs: readonly TraceRecord[]): { hit: number; asked: number } {
  const seen = new Set<number>();
  let hit = 0;
  let asked = 0;
  for (const r of recs) {
    r.hash_ids.forEach((id, i) => {
      const t = i < r.hash_ids.length - 1 ? 512 : r.input_length - 512 * i;
      asked += t;
      if (seen.has(id)) hit += t;
    });
    for (const id of r.hash_ids) seen.add(id);
  }
  return { hit, asked };
}

/**
 * `fn` with a fresh tmpfs mounted at `dir/pool` (these tests run as root): the whole trace's blocks
 * are ~180,000 small files, and the device is not what these tests measure.
 */
async function withTmpfs<T>(dir: string, fn: (pool: string) => Promise<T>): Promise<T> {
  const pool = join(dir, 'pool');
  await mkdir(pool);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2g', 'tmpfs', pool]);
  try {
    return await fn(pool);
  } finally {
    execFileSync('umount', [pool]);
  }
}

function mpirun(np: number, args: readonly string[], wrapper?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const cmd = [
      '--allow-run-as-root',
      '--oversubscribe',
      '-np',
      String(np),
      ...(wrapper !== undefined ? [wrapper] : []),
      process.execPath,
      BIN,
      ...args,
    ];
    const child = spawn('mpirun', cmd, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function rankDocs(base: string): Promise<ResultsDocument[]> {
  const docs: ResultsDocument[] = [];
  for (const d of (await readdir(base)).filter((n) => n.startsWith('rank_')).sort()) {
    const [file] = await readdir(join(base, d));
    const doc = JSON.parse(await readFile(join(base, d, file ?? ''), 'utf8')) as ResultsDocument;
    assertValidResults(doc);
    docs.push(doc);
  }
  return docs;
}

/** The merged summary of `base` (kv-cache merge), its one trial's pool figures. */
async function merged(
  dir: string,
  base: string,
): Promise<NonNullable<RunSummary['options'][string]['kvcache_bench']['trials'][number]['kv_pool']>> {
  const out = join(dir, `summary-${Date.now()}.json`);
  const r = await runCli(['merge', base, '--output', out]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const s = JSON.parse(await readFile(out, 'utf8')) as RunSummary;
  const option = Object.values(s.options)[0];
  const pool = option?.kvcache_bench.trials[0]?.kv_pool;
  assert.ok(pool != null, 'the merged summary has the pool figures');
  return pool;
}

describe('four ranks under mpirun, the conversation trace round-robin', { skip: MPI_SKIP }, () => {
  const recs = records(TRACE);
  const whole = reuse(recs);
  // Each rank's share: request i goes to rank i mod 4; its private pool sees only those.
  const perRank = [0, 1, 2, 3].map((r) => reuse(recs.filter((_, i) => i % 4 === r)));
  const privateIdeal = perRank.reduce((n, p) => n + p.hit, 0) / perRank.reduce((n, p) => n + p.asked, 0);

  /** Four ranks replaying the trace round-robin with the pool flags `poolArgs(pool)`, on a tmpfs of their own; their files and merged pool figures. */
  const fourRanks = (poolArgs: (pool: string) => string[], check: (dir: string, docs: ResultsDocument[], pool: string) => Promise<void>) =>
    inTempDir(async (dir) => {
      await writeFile(join(dir, 'm.yaml'), TINY_MODEL);
      await withTmpfs(dir, async (pool) => {
        const out = join(dir, 'out');
        const args = [...replay(join(dir, 'm.yaml')), ...poolArgs(pool), '--route', 'round-robin', '--num-users', '4'];
        const r = await mpirun(4, [...args, '--rank-output-base', out]);
        assert.equal(r.code, 0, r.out.slice(-3000));
        await check(dir, await rankDocs(out), pool);
      });
    });

  test('shared: the cluster reaches the whole trace’s reuse, most of it from blocks another rank published', async () => {
    await fourRanks(
      (pool) => ['--cache-dir', pool, '--kv-pool', 'shared'],
      async (dir, docs, pool) => {
        assert.equal(docs.length, 4);
        for (const d of docs) {
          const k = d.kvcache_bench.kv_pool;
          assert.ok(k?.shared != null);
          assert.equal(k.route, 'round-robin');
          assert.equal(k.requests_passed, recs.length, 'every rank passed the whole trace');
          assert.ok(Math.abs(k.requests_served - recs.length / 4) <= 1, 'and served a quarter of it');
          assert.ok(
            Math.abs((k.trace_ideal.token_hit_rate ?? -1) - whole.hit / whole.asked) < 1e-9,
            "each rank saw the whole trace's reuse",
          );
          assert.ok(k.shared.hits_by_origin.other_rank.tokens > 0);
          assert.ok(k.shared.lookups.count > 0 && k.shared.lookups.latency_ms.p95 > 0);
        }
        const m = await merged(dir, join(dir, 'out'));
        const ideal = whole.hit / whole.asked;
        assert.ok(Math.abs(m.token_hit_rate - ideal) <= 0.02, `merged ${m.token_hit_rate} vs the trace's ${ideal}`);
        assert.ok(Math.abs((m.trace_ideal_token_hit_rate ?? -1) - ideal) < 1e-9);
        assert.ok((m.cross_rank_hit_share ?? 0) > 0.5, `most pool hits are another rank's blocks (${m.cross_rank_hit_share})`);
        const left = execFileSync('find', [pool, '-type', 'f'], { encoding: 'utf8' });
        assert.equal(left, '', 'each rank removed what it published');
      },
    );
  });

  test("private: each rank reaches only its own share's reuse", async () => {
    await fourRanks(
      (base) => ['--rank-cache-base', base],
      async (dir, docs) => {
        for (const d of docs) assert.equal(d.kvcache_bench.kv_pool?.shared, null);
        const m = await merged(dir, join(dir, 'out'));
        assert.ok(Math.abs(m.token_hit_rate - privateIdeal) <= 0.02, `merged ${m.token_hit_rate} vs the per-rank ideal ${privateIdeal}`);
        assert.ok(privateIdeal < whole.hit / whole.asked - 0.1, 'private pools lose the cross-rank reuse');
      },
    );
  });
});

/** One rank as on its own host: its own host name (UTS namespace) and mount namespace; the pool directory is the one both see. */
const RANK_HOST = `#!/bin/sh
exec unshare -u -m sh -c 'hostname "pool-host-$OMPI_COMM_WORLD_RANK" && exec "$@"' sh "$@"
`;
const NS_SKIP =
  MPI_SKIP !== false ? MPI_SKIP : !onPath('unshare', `${process.env.PATH ?? ''}${delimiter}/usr/bin`) ? 'unshare is not installed' : false;

test('two hosts sharing one pool directory read each other’s blocks', { skip: NS_SKIP }, async () => {
  await inTempDir(async (dir) => {
    await writeFile(join(dir, 'm.yaml'), TINY_MODEL);
    const wrapper = join(dir, 'rank-host.sh');
    await writeFile(wrapper, RANK_HOST);
    await chmod(wrapper, 0o755);
    const pool = join(dir, 'pool');
    await mkdir(pool);
    const r = await mpirun(
      2,
      [
        ...replay(join(dir, 'm.yaml'), EXCERPT),
        '--cache-dir',
        pool,
        '--kv-pool',
        'shared',
        '--num-users',
        '2',
        '--rank-output-base',
        join(dir, 'out'),
      ],
      wrapper,
    );
    assert.equal(r.code, 0, r.out.slice(-3000));
    const docs = await rankDocs(join(dir, 'out'));
    assert.deepEqual(
      docs.map((d) => d.kvcache_bench.ranks?.host),
      ['pool-host-0', 'pool-host-1'],
    );
    for (const d of docs)
      assert.ok((d.kvcache_bench.kv_pool?.shared?.hits_by_origin.other_rank.blocks ?? 0) > 0, 'blocks written on the other host were read');
  });
});

test('a kept pool: the next run (another replica) starts warm; a cold one does not; another block size shares nothing', async () => {
  await inTempDir(async (dir) => {
    await writeFile(join(dir, 'm.yaml'), TINY_MODEL);
    const pool = join(dir, 'pool');
    await mkdir(pool);
    const run = async (name: string, extra: readonly string[]): Promise<ResultsDocument> => {
      const out = join(dir, `${name}.json`);
      const r = await runCli([
        ...replay(join(dir, 'm.yaml'), EXCERPT),
        '--cache-dir',
        pool,
        '--kv-pool',
        'shared',
        '--num-users',
        '2',
        '--output',
        out,
        ...extra,
      ]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      const doc = JSON.parse(await readFile(out, 'utf8')) as ResultsDocument;
      assertValidResults(doc);
      return doc;
    };
    const cold = await run('cold', ['--keep-pool']); // the whole excerpt: none of its requests cut short
    const coldPool = cold.kvcache_bench.kv_pool?.shared;
    assert.ok(coldPool != null);
    assert.equal(coldPool.at_start.blocks, 0);
    assert.equal(coldPool.hits_by_origin.earlier_run.tokens, 0);
    assert.ok(coldPool.published_blocks > 0);
    const warm = await run('warm', ['--max-requests', '5']);
    const warmPool = warm.kvcache_bench.kv_pool?.shared;
    assert.ok(warmPool != null);
    assert.equal(warmPool.at_start.blocks, coldPool.published_blocks, 'the pool held what the first run published');
    assert.equal(
      warmPool.hits_by_origin.earlier_run.token_hit_rate,
      1,
      `the same five requests: every block was the earlier run's (${JSON.stringify({ origins: warmPool.hits_by_origin, blocks: warm.kvcache_bench.kv_blocks })})`,
    );
    assert.equal(warmPool.published_blocks, 0);
    // Another block size: another namespace, nothing shared.
    const other = await run('other', ['--kv-block-tokens', '256', '--max-requests', '5']);
    assert.equal(other.kvcache_bench.kv_pool?.shared?.at_start.blocks, 0);
    assert.equal(other.kvcache_bench.kv_pool?.shared?.hits_by_origin.earlier_run.tokens, 0);
  });
});

test('a kept pool holds honest bytes: no 512-byte block repeats across its block files, 8 users writing at once', async () => {
  await inTempDir(async (dir) => {
    await writeFile(join(dir, 'm.yaml'), TINY_MODEL);
    const pool = join(dir, 'pool');
    await mkdir(pool);
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...replay(join(dir, 'm.yaml'), EXCERPT),
      ...['--cache-dir', pool, '--kv-pool', 'shared', '--keep-pool', '--num-users', '8', '--output', out],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const doc = JSON.parse(await readFile(out, 'utf8')) as ResultsDocument;
    const files = (await readdir(pool, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
    assert.equal(files.length, doc.kvcache_bench.kv_pool?.shared?.published_blocks, 'one file per published block');
    // A payload slot handed to the next entry before this one's write was done gave two files the same bytes.
    const seen = new Map<string, string>();
    for (const f of files) {
      const path = join(f.parentPath, f.name);
      const bytes = await readFile(path);
      for (let at = 0; at < bytes.length; at += 512) {
        const digest = createHash('sha1')
          .update(bytes.subarray(at, at + 512))
          .digest('hex');
        const before = seen.get(digest);
        assert.equal(
          before,
          undefined,
          `the 512 bytes at ${at} of ${path} are also in ${before} (${doc.kvcache_bench.storage_file_calls})`,
        );
        seen.set(digest, `${path}@${at}`);
      }
    }
    assert.ok(seen.size > 1000, `${seen.size} blocks checked`);
  });
});

const S3_SKIP =
  process.env.KVC_S3_ENDPOINT === undefined || process.env.AWS_ACCESS_KEY_ID === undefined
    ? 'no radosgw: start one with `eval "$(bash test/helpers/radosgw.sh start)"` (.ci/run does)'
    : MPI_SKIP;
if (S3_SKIP !== false) process.stdout.write(`# shared-pool S3 test skipped: ${S3_SKIP}\n`);

test('on an object store: two ranks read each other’s blocks, a kept pool starts the next run warm', { skip: S3_SKIP }, async () => {
  await inTempDir(async (dir) => {
    await writeFile(join(dir, 'm.yaml'), TINY_MODEL);
    const s3 = ['--storage-backend', 's3', '--s3-endpoint', process.env.KVC_S3_ENDPOINT ?? '', '--s3-bucket', `kvc-pool-${process.pid}`];
    const common = [...replay(join(dir, 'm.yaml'), EXCERPT), ...s3, '--create-bucket', '--storage-capacity-gb', '1', '--kv-pool', 'shared'];
    const r = await mpirun(2, [...common, '--num-users', '2', '--keep-pool', '--rank-output-base', join(dir, 'out')]);
    assert.equal(r.code, 0, r.out.slice(-3000));
    const docs = await rankDocs(join(dir, 'out'));
    let published = 0;
    for (const d of docs) {
      const p = d.kvcache_bench.kv_pool?.shared;
      assert.ok(p != null);
      assert.match(p.location, /^s3:\/\/kvc-pool-\d+\/(?:[^/]+\/)*kvpool-[0-9a-f]{16}\//);
      assert.ok(p.hits_by_origin.other_rank.blocks > 0, 'each rank read blocks the other published');
      assert.ok(p.lookups.count > 0);
      published += p.published_blocks;
    }
    const out = join(dir, 'warm.json');
    const warm = await runCli([...common, '--num-users', '2', '--max-requests', '5', '--output', out]);
    assert.equal(warm.code, 0, warm.stderr + warm.stdout);
    const doc = JSON.parse(await readFile(out, 'utf8')) as ResultsDocument;
    const p = doc.kvcache_bench.kv_pool?.shared;
    assert.equal(p?.at_start.blocks, published, 'the bucket held every block the two ranks published');
    assert.equal(p?.hits_by_origin.earlier_run.token_hit_rate, 1);
  });
});

describe('bad input: one message, exit 2, nothing written', () => {
  const cases: ReadonlyArray<readonly [string, (dir: string) => string[], RegExp]> = [
    [
      'a shared pool without blocks',
      (d) => ['--model', 'tiny-1b', '--kv-pool', 'shared', '--cache-dir', d],
      /--kv-pool shared shares KV blocks: it needs block mode/,
    ],
    [
      '--keep-pool without a shared pool',
      (d) => ['--model', 'tiny-1b', '--keep-pool', '--cache-dir', d],
      /--keep-pool keeps a shared pool: it needs --kv-pool shared/,
    ],
    [
      'a shared pool in trace mode',
      (d) => ['--kv-block-tokens', '16', '--kv-pool', 'shared', '--io-trace-log', join(d, 't.csv')],
      /trace mode \(--io-trace-log\) has none/,
    ],
    [
      'a shared pool in memory',
      (d) => ['--kv-block-tokens', '16', '--kv-pool', 'shared', '--storage-backend', 'memory', '--cache-dir', d],
      /not 'memory'/,
    ],
    [
      'a pool path that is a file',
      (d) => ['--kv-block-tokens', '16', '--kv-pool', 'shared', '--cache-dir', join(d, 'file')],
      /not a directory/,
    ],
    [
      'a shared pool with --decode-only',
      (d) => ['--kv-block-tokens', '16', '--kv-pool', 'shared', '--decode-only', '--cache-dir', d],
      /--kv-pool shared with --decode-only/,
    ],
    [
      'a shared pool on a slab layout',
      (d) => ['--kv-block-tokens', '16', '--kv-pool', 'shared', '--kv-layout', 'slab', '--cache-dir', d],
      /--kv-pool shared with --kv-layout slab/,
    ],
    ['an unknown route', (d) => ['--kv-block-tokens', '16', '--route', 'random', '--cache-dir', d], /--route/],
  ];
  for (const [name, args, message] of cases) {
    test(name, async () => {
      await inTempDir(async (dir) => {
        await writeFile(join(dir, 'file'), 'x');
        const out = join(dir, 'out.json');
        const r = await runCli([...args(dir), '--output', out, '--no-progress', '--duration', '1']);
        assert.equal(r.code, 2, r.stderr + r.stdout);
        assert.match(r.stderr, message);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
        assert.deepEqual((await readdir(dir)).sort(), ['file'], 'nothing written');
      });
    });
  }

  test('kv-cache mlperf refuses a shared pool in CLOSED by name', async () => {
    await inTempDir(async (dir) => {
      const r = await runCli(['mlperf', '--results-dir', dir, '--cache-dir', dir, '--kv-pool', 'shared', '--dry-run']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--kv-pool shared is not allowed in CLOSED/);
    });
  });
});
