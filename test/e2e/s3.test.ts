// End-to-end: --storage-backend s3 against a real S3 server, Ceph's radosgw (test/helpers/radosgw.sh;
// .ci/run starts it and exports KVC_S3_ENDPOINT, the AWS_* keys and KVC_RADOSGW_CONF). The server's own
// byte counts (radosgw-admin usage show, per bucket) match the tool's within 5 % for a synthetic and a
// ShareGPT run; the faults each have their test: a bucket missing, refused credentials, an unreachable
// endpoint (exit 2 before the run), throttling (503 SlowDown from a relay in front of radosgw: retried
// and counted, or failing and counted), and the gateway killed mid-run (results saved, failures counted).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { readValidResults } from '../report/validate-results.js';
import { BIN, inTempDir, pacedTrace, shareGptText, smallWorkloadArgs } from './run-cli.js';
import type { CliRun } from './run-cli.js';

const run = promisify(execFile);
const RADOSGW_SH = fileURLToPath(new URL('../../../test/helpers/radosgw.sh', import.meta.url));
const ENDPOINT = process.env.KVC_S3_ENDPOINT;
const CONF = process.env.KVC_RADOSGW_CONF;
const SKIP =
  ENDPOINT === undefined || CONF === undefined || process.env.AWS_ACCESS_KEY_ID === undefined
    ? 'no radosgw: start one with `eval "$(bash test/helpers/radosgw.sh start)"` (.ci/run does) to run the S3 tests'
    : false;
if (SKIP !== false) process.stdout.write(`# s3 e2e tests skipped: ${SKIP}\n`);

let buckets = 0;
/** A fresh bucket name per run, so the server's usage counts are this run's alone. */
const freshBucket = (): string => `kvc-e2e-${process.pid}-${++buckets}`;

/** Runs the command with extra environment variables. */
function runWith(args: readonly string[], env: NodeJS.ProcessEnv = {}, onStdout?: (soFar: string) => void): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function s3Args(bucket: string, endpoint = ENDPOINT ?? ''): string[] {
  return ['--storage-backend', 's3', '--s3-endpoint', endpoint, '--s3-bucket', bucket, '--storage-capacity-gb', '4'];
}

interface ServerBytes {
  readonly received: number;
  readonly sent: number;
}

/** The bucket's bytes as radosgw's usage log counts them (every category: objects, parts, listings). */
async function serverBytes(bucket: string): Promise<ServerBytes> {
  const { stdout } = await run('radosgw-admin', ['-c', CONF ?? '', 'usage', 'show', '--show-log-sum=false']);
  const usage = JSON.parse(stdout) as {
    entries: Array<{ buckets: Array<{ bucket: string; categories: Array<{ bytes_sent: number; bytes_received: number }> }> }>;
  };
  let received = 0;
  let sent = 0;
  for (const e of usage.entries)
    for (const b of e.buckets.filter((x) => x.bucket === bucket))
      for (const c of b.categories) {
        received += c.bytes_received;
        sent += c.bytes_sent;
      }
  return { received, sent };
}

/** The usage log is flushed every second: read it until it holds at least `want` received bytes (a few seconds at most). */
async function settledServerBytes(bucket: string, want: number): Promise<ServerBytes> {
  let last = await serverBytes(bucket);
  for (let i = 0; i < 20 && last.received < want; i++) {
    await new Promise((r) => setTimeout(r, 500));
    last = await serverBytes(bucket);
  }
  return last;
}

async function objectCount(bucket: string): Promise<number> {
  const { stdout } = await run('radosgw-admin', ['-c', CONF ?? '', 'bucket', 'stats', '--bucket', bucket]);
  const stats = JSON.parse(stdout) as { usage: Record<string, { num_objects: number }> };
  return Object.values(stats.usage).reduce((n, u) => n + u.num_objects, 0);
}

/** The tool's storage bytes and the server's agree within 5 %; the run left no object behind. */
async function assertServerAgrees(doc: ResultsDocument, bucket: string): Promise<void> {
  const tool = doc.kvcache_bench.storage_bytes;
  assert.ok(tool.written_bytes > 0 && tool.read_bytes > 0, `the run wrote and read (${tool.written_bytes}, ${tool.read_bytes})`);
  const server = await settledServerBytes(bucket, tool.written_bytes * 0.95);
  const within = (a: number, b: number): boolean => Math.abs(a - b) <= 0.05 * b;
  assert.ok(within(server.received, tool.written_bytes), `server received ${server.received}, tool wrote ${tool.written_bytes}`);
  assert.ok(within(server.sent, tool.read_bytes), `server sent ${server.sent}, tool read ${tool.read_bytes}`);
  assert.equal(await objectCount(bucket), 0, 'every object of the run deleted at its end');
}

/** Checks shared by the runs that went through: the object_store block names the endpoint host, the client, no credential. */
function assertObjectStoreBlock(doc: ResultsDocument, host: string): void {
  const o = doc.kvcache_bench.object_store;
  assert.ok(o !== undefined, 'kvcache_bench.object_store');
  assert.equal(o.endpoint_host, host);
  assert.equal(o.addressing, 'path');
  assert.ok(o.puts > 0 && o.gets > 0 && o.get_first_byte_ms.count === o.gets);
  assert.ok(!JSON.stringify(doc).includes(process.env.AWS_SECRET_ACCESS_KEY ?? '\u0000'), 'the secret appears nowhere');
  assert.ok(doc.kvcache_bench.validity.warnings.some((w) => w.code === 'object_store_no_device'));
}

/** A relay in front of radosgw that answers 503 SlowDown to the object PUTs `throttle` picks, before their body. */
async function throttlingRelay(throttle: (attempt: number) => boolean): Promise<{ endpoint: string; close(): Promise<void> }> {
  const upstream = new URL(ENDPOINT ?? 'http://127.0.0.1');
  const tries = new Map<string, number>();
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean): void => {
    const objectPut = req.method === 'PUT' && (req.url ?? '').split('?')[0].split('/').length > 2;
    if (objectPut) {
      const n = (tries.get(req.url ?? '') ?? 0) + 1;
      tries.set(req.url ?? '', n);
      if (throttle(n)) {
        res.writeHead(503, { connection: 'close' });
        res.end('<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
        return;
      }
    }
    if (expectsContinue) res.writeContinue();
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  const server = http.createServer();
  server.on('checkContinue', (req, res) => handle(req, res, true));
  server.on('request', (req, res) => handle(req, res, false));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('--storage-backend s3 against radosgw', { skip: SKIP }, () => {
  const host = ENDPOINT === undefined ? '' : new URL(ENDPOINT).host;

  test('a synthetic storage-only run: results with the object_store block, the server counts the same bytes (±5 %)', async () => {
    await inTempDir(async (dir) => {
      const out = join(dir, 'r.json');
      const bucket = freshBucket();
      const args = ['--num-users', '4', '--duration', '6', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--seed', '5', '--output', out];
      const r = await runWith([...(await smallWorkloadArgs(dir)), ...args, ...s3Args(bucket), '--create-bucket']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`Storage under test: S3 bucket ${bucket} at ${host.replaceAll('.', '\\.')}`));
      const doc = await readValidResults(out);
      assert.equal(doc.kvcache_bench.storage_dir, `s3://${bucket}/kvcache-bench/ at ${host}`);
      assert.deepEqual(doc.kvcache_bench.failed_operations, []);
      assert.equal(doc.kvcache_bench.stale_entries?.count, 0);
      assertObjectStoreBlock(doc, host);
      const o = doc.kvcache_bench.object_store;
      assert.match(
        r.stdout,
        new RegExp(`### OBJECT STORE \\(S3\\) ###\n  ${host.replaceAll('.', '\\.')} bucket ${bucket} prefix kvcache-bench/`),
      );
      assert.ok(r.stdout.includes(`requests ${o?.requests}   retries 0   puts ${o?.puts} (multipart 0)   gets ${o?.gets}   failures none`));
      await assertServerAgrees(doc, bucket);
    });
  });

  test('a ShareGPT run on the S3 tier: the server counts the same bytes (±5 %)', async () => {
    await inTempDir(async (dir) => {
      const out = join(dir, 'r.json');
      const dataset = join(dir, 'sharegpt.json');
      await writeFile(dataset, shareGptText([4, 3, 5, 2, 3, 4]));
      const bucket = freshBucket();
      const args = ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--num-users', '3', '--duration', '6'];
      const r = await runWith([
        ...args,
        ...['--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--dataset-path', dataset, '--seed', '9', '--output', out],
        ...s3Args(bucket),
        '--create-bucket',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const doc = await readValidResults(out);
      assert.equal((doc.kvcache_bench.workload_source as { kind?: string }).kind, 'sharegpt');
      assertObjectStoreBlock(doc, host);
      await assertServerAgrees(doc, bucket);
    });
  });

  test('kv-cache replay onto the S3 tier: every row replayed, the server received the bytes written (±5 %)', async () => {
    await inTempDir(async (dir) => {
      const trace = join(dir, 'trace.csv');
      await writeFile(trace, pacedTrace());
      const out = join(dir, 'replay.json');
      const bucket = freshBucket();
      const r = await runWith(['replay', trace, '--duration', '2', '-o', out, ...s3Args(bucket).slice(0, -2), '--create-bucket']);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(await readFile(out, 'utf8')) as {
        replay: { writes: number; write_bytes: number };
        kvcache_bench: { storage_dir: string };
      };
      assert.equal(doc.kvcache_bench.storage_dir, `s3://${bucket}/kvcache-bench/ at ${host}`);
      assert.ok(doc.replay.writes > 0);
      const server = await settledServerBytes(bucket, doc.replay.write_bytes * 0.95);
      assert.ok(
        Math.abs(server.received - doc.replay.write_bytes) <= 0.05 * doc.replay.write_bytes,
        `server ${server.received}, tool ${doc.replay.write_bytes}`,
      );
      assert.equal(await objectCount(bucket), 0);
    });
  });

  test('a missing bucket: one clear error before the run, exit 2, nothing written; --create-bucket creates it', async () => {
    await inTempDir(async (dir) => {
      const out = join(dir, 'r.json');
      const bucket = freshBucket();
      const r = await runWith([...(await smallWorkloadArgs(dir)), '--duration', '2', '--output', out, ...s3Args(bucket)]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `kv-cache: error: --storage-backend s3: bucket '${bucket}' at ${host} does not exist: create it, or pass --create-bucket\n`,
      );
      assert.equal(existsSync(out), false);
    });
  });

  test('wrong credentials: one clear error before the run (403 SignatureDoesNotMatch), exit 2, the secret not echoed', async () => {
    await inTempDir(async (dir) => {
      const out = join(dir, 'r.json');
      const wrong = 'not-the-secret-0123456789';
      const r = await runWith([...(await smallWorkloadArgs(dir)), '--duration', '2', '--output', out, ...s3Args(freshBucket())], {
        AWS_SECRET_ACCESS_KEY: wrong,
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^kv-cache: error: --storage-backend s3: bucket '[^']+' at \S+ refused the credentials \(403 SignatureDoesNotMatch\)/,
      );
      assert.equal(r.stderr.split('\n').length, 2, 'one line');
      assert.ok(!r.stderr.includes(wrong) && !r.stdout.includes(wrong));
      assert.equal(existsSync(out), false);
    });
  });

  test('an unreachable endpoint: one clear error before the run, exit 2', async () => {
    await inTempDir(async (dir) => {
      const out = join(dir, 'r.json');
      const r = await runWith([
        ...(await smallWorkloadArgs(dir)),
        '--duration',
        '2',
        '--output',
        out,
        ...s3Args('kvc-any', 'http://127.0.0.1:1'),
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, 'kv-cache: error: --storage-backend s3: cannot reach the endpoint 127.0.0.1:1: ECONNREFUSED\n');
      assert.equal(existsSync(out), false);
    });
  });

  test('throttling: 503 SlowDown on the first try of every object PUT is retried, each retry counted, no failure', async () => {
    const relay = await throttlingRelay((attempt) => attempt === 1);
    try {
      await inTempDir(async (dir) => {
        const out = join(dir, 'r.json');
        const bucket = freshBucket();
        const args = ['--num-users', '2', '--duration', '4', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--output', out];
        const r = await runWith([...(await smallWorkloadArgs(dir)), ...args, ...s3Args(bucket, relay.endpoint), '--create-bucket']);
        assert.equal(r.code, 0, r.stderr);
        const doc = await readValidResults(out);
        const o = doc.kvcache_bench.object_store;
        assert.ok(o !== undefined && o.puts > 0);
        assert.deepEqual(doc.kvcache_bench.failed_operations, []);
        assert.equal(doc.summary.cache_stats.tier_storage_failed_ops, 0);
        // Every PUT that went up was throttled once first; a PUT cut by the end of the run may add one more.
        assert.ok(o.retries >= o.puts && o.retries <= o.puts + 2, `retries ${o.retries}, puts ${o.puts}`);
        assert.deepEqual(o.failures, {});
      });
    } finally {
      await relay.close();
    }
  });

  test('throttling on every try: the writes fail as SLOWDOWN, counted and named, the run marked', async () => {
    const relay = await throttlingRelay(() => true);
    try {
      await inTempDir(async (dir) => {
        const out = join(dir, 'r.json');
        const args = ['--num-users', '2', '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--output', out];
        const r = await runWith([...(await smallWorkloadArgs(dir)), ...args, ...s3Args(freshBucket(), relay.endpoint), '--create-bucket']);
        assert.equal(r.code, 0, r.stderr);
        const doc = await readValidResults(out);
        const k = doc.kvcache_bench;
        const slow = k.failed_operations.filter((f) => f.tier === 'storage' && f.operation === 'placement_write' && f.error === 'SLOWDOWN');
        assert.equal(slow.length, 1);
        const failed = slow[0]?.count ?? 0;
        assert.ok(failed > 0);
        assert.equal(k.object_store?.failures.SLOWDOWN, failed);
        // maxAttempts 4: three retries per failed write, and at most three more per write cut by the end (one per user).
        const retries = k.object_store?.retries ?? 0;
        assert.ok(retries >= 3 * failed && retries <= 3 * failed + 3 * 2, `retries ${retries}, failed writes ${failed}`);
        assert.ok(k.warnings.some((w) => w.startsWith(`${failed} storage write`) && w.includes('failed with SLOWDOWN')));
        assert.ok(k.validity.reasons.some((f) => f.code === 'failed_operations'));
      });
    } finally {
      await relay.close();
    }
  });

  test('the gateway killed mid-run: results saved, failures counted (ECONNREFUSED), the run marked as failing', async () => {
    const dir = process.env.KVC_RADOSGW_DIR ?? '';
    const port = 7400 + (process.pid % 50);
    const { stdout } = await run('bash', [RADOSGW_SH, 'gateway', dir, String(port)]);
    const pid = Number(stdout.trim());
    await inTempDir(async (tmp) => {
      const out = join(tmp, 'r.json');
      const bucket = freshBucket();
      const args = ['--num-users', '4', '--duration', '8', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--output', out];
      let killed = false;
      const r = await runWith(
        [...(await smallWorkloadArgs(tmp)), ...args, ...s3Args(bucket, `http://127.0.0.1:${port}`), '--create-bucket'],
        {},
        (soFar) => {
          if (killed || !soFar.includes('Storage under test')) return;
          killed = true;
          setTimeout(() => process.kill(pid, 'SIGKILL'), 1500); // some requests served first, then the server is gone
        },
      );
      assert.ok(killed);
      assert.equal(r.code, 0, r.stderr);
      const doc = await readValidResults(out);
      const k = doc.kvcache_bench;
      const refused = k.failed_operations.filter((f) => f.tier === 'storage' && (f.error === 'ECONNREFUSED' || f.error === 'ECONNRESET'));
      assert.ok(refused.length > 0, JSON.stringify(k.failed_operations));
      assert.ok(k.validity.reasons.some((f) => f.code === 'failed_operations'));
      assert.ok((k.object_store?.failures.ECONNREFUSED ?? 0) + (k.object_store?.failures.ECONNRESET ?? 0) > 0);
    });
  });
});
