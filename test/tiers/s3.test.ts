// The S3 backend and its client against an in-process fake S3 server (s3-fake-server.ts): entries
// round-trip byte for byte as one object each under the run's prefix, multipart above the threshold,
// a missing key, retries counted (503 SlowDown answered before the body), failures named by class,
// stopped transfers, clean-up of only our objects at close, and the metadata calls it reports (a pool's
// HEADs as lookups, DELETEs as unlinks; a PUT is the write, no metadata call).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { EntryNotFoundError, IoAbortedError } from '../../src/tiers/backend.js';
import { classOfStatus, isRetryable, S3Client, S3Error } from '../../src/tiers/s3-client.js';
import type { S3ClientOptions } from '../../src/tiers/s3-client.js';
import { MULTIPART_ABOVE, PART_BYTES, partsOf, S3Backend } from '../../src/tiers/s3.js';
import { MetadataStats } from '../../src/metrics/metadata-stats.js';
import { LatencySketch } from '../../src/tiers/s3-sketch.js';
import { MiB } from '../../src/util/units.js';
import { FakeS3 } from './s3-fake-server.js';
import { leftBehindLine } from '../../src/engine/failure-warnings.js';

let fake: FakeS3;
before(async () => (fake = await FakeS3.start(['b'])));
after(() => fake.stop());

function clientOptions(overrides: Partial<S3ClientOptions> = {}): S3ClientOptions {
  return {
    endpoint: new URL(fake.endpoint),
    bucket: 'b',
    region: 'us-east-1',
    pathStyle: true,
    credentials: () => Promise.resolve({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
    maxConnections: 4,
    idleTimeoutMs: 5000,
    maxAttempts: 3,
    backoffMs: 1,
    ...overrides,
  };
}

/** `size` bytes (byte i = i mod 251) in chunks of `chunk`, each chunk a fresh view that is then overwritten (as payload slots are reused). */
function sourceOf(size: number, chunk = MiB): ChunkSource {
  return {
    size,
    async *chunks() {
      const slot = new Uint8Array(chunk);
      for (let off = 0; off < size; off += chunk) {
        const n = Math.min(chunk, size - off);
        for (let i = 0; i < n; i++) slot[i] = (off + i) % 251;
        yield slot.subarray(0, n);
        slot.fill(0); // the chunk is valid only until the next is asked for
      }
    },
  };
}

function expected(size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => i % 251));
}

async function collect(backend: S3Backend, key: string): Promise<{ bytes: Buffer; read: number }> {
  const parts: Buffer[] = [];
  const r = await backend.read(key, (c) => void parts.push(Buffer.from(c)));
  return { bytes: Buffer.concat(parts), read: r.bytes };
}

test('an entry round-trips as one object <prefix>kvc-<run id>-<key>.bin, with an honest timing split', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), 'pre/', 'abcd0123');
  const size = 3 * MiB + 17;
  const t = await backend.write('user 1/turn', sourceOf(size));
  assert.deepEqual([...fake.objects.keys()], ['b/pre/kvc-abcd0123-user%00201%002Fturn.bin']);
  assert.ok(expected(size).equals(fake.objects.get('b/pre/kvc-abcd0123-user%00201%002Fturn.bin') ?? Buffer.alloc(0)), 'bytes as sent');
  assert.equal(t.totalMs, t.hostMs + t.deviceMs);
  assert.equal(backend.sizeOf('user 1/turn'), size);
  const got = await collect(backend, 'user 1/turn');
  assert.equal(got.read, size);
  assert.ok(got.bytes.equals(expected(size)));
  const s = backend.stats();
  assert.deepEqual([s.puts, s.gets, s.multipartUploads, s.retries, s.getFirstByteMs.count], [1, 1, 0, 0, 1]);
  await backend.close();
  assert.equal(fake.objects.size, 0, 'close deletes what the backend wrote');
});

test('above the threshold an entry goes up as a multipart upload of consecutive parts', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123', 2 * MiB, MiB + 5);
  const size = 3 * MiB;
  await backend.write('big', sourceOf(size, 700_000));
  const partPuts = fake.log.filter((r) => r.method === 'PUT' && r.query.has('partNumber'));
  assert.deepEqual(
    partPuts.map((r) => r.query.get('partNumber')),
    ['1', '2', '3'],
  );
  assert.ok(expected(size).equals(fake.objects.get('b/kvc-abcd0123-big.bin') ?? Buffer.alloc(0)));
  assert.equal(backend.stats().multipartUploads, 1);
  await backend.close();
});

test('partsOf cuts one source into parts whose sizes and bytes add up to it', async () => {
  const parts: number[] = [];
  const all: Buffer[] = [];
  for await (const [n, part] of partsOf(sourceOf(10, 4), 3)) {
    parts.push(n, part.size);
    for await (const c of part.chunks()) all.push(Buffer.from(c));
  }
  assert.deepEqual(parts, [1, 3, 2, 3, 3, 3, 4, 1]);
  assert.ok(Buffer.concat(all).equals(expected(10)));
});

test('a key not written is EntryNotFoundError; a deleted object read back is a 404 failure, counted', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123');
  await assert.rejects(backend.read('nope'), EntryNotFoundError);
  await backend.write('k', sourceOf(100));
  fake.objects.clear(); // lost on the server's side
  await assert.rejects(backend.read('k'), (e: unknown) => e instanceof S3Error && e.code === 'HTTP_404' && e.status === 404);
  assert.deepEqual(backend.stats().failures, { HTTP_404: 1 });
  await backend.close();
});

test('503 SlowDown before the body is retried: the retry is counted and the entry stored once', async () => {
  fake.objects.clear();
  const seen = new Set<string>();
  fake.fault = (r) => {
    if (r.method !== 'PUT' || seen.has(r.key)) return undefined;
    seen.add(r.key);
    return { status: 503, code: 'SlowDown' };
  };
  try {
    const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123');
    await backend.write('a', sourceOf(2 * MiB));
    await backend.write('b', sourceOf(10));
    const s = backend.stats();
    assert.deepEqual([s.puts, s.retries, s.requests], [2, 2, 4]);
    assert.deepEqual(s.failures, {});
    assert.equal(fake.objects.size, 2);
    await backend.close();
  } finally {
    fake.fault = () => undefined;
  }
});

test('throttled on every try: the write fails as SLOWDOWN after maxAttempts, counted, nothing stored', async () => {
  fake.objects.clear();
  fake.fault = (r) => (r.method === 'PUT' ? { status: 503, code: 'SlowDown' } : undefined);
  try {
    const backend = new S3Backend(new S3Client(clientOptions({ maxAttempts: 3 })), '', 'abcd0123');
    await assert.rejects(backend.write('a', sourceOf(1000)), (e: unknown) => e instanceof S3Error && e.code === 'SLOWDOWN');
    const s = backend.stats();
    assert.deepEqual([s.puts, s.retries, s.requests, s.failures.SLOWDOWN], [0, 2, 3, 1]);
    assert.equal(backend.sizeOf('a'), undefined);
    await backend.close();
  } finally {
    fake.fault = () => undefined;
  }
});

test('403 is not retried; an unreachable endpoint fails as ECONNREFUSED after its retries', async () => {
  fake.fault = () => ({ status: 403, code: 'AccessDenied' });
  try {
    const client = new S3Client(clientOptions());
    await assert.rejects(
      client.send({ method: 'GET', key: 'x' }),
      (e: unknown) => e instanceof S3Error && e.code === 'HTTP_403' && e.s3Code === 'AccessDenied',
    );
    assert.deepEqual(client.counters, { requests: 1, retries: 0 });
    client.close();
  } finally {
    fake.fault = () => undefined;
  }
  const dead = new S3Client(clientOptions({ endpoint: new URL('http://127.0.0.1:1') }));
  await assert.rejects(dead.send({ method: 'GET', key: 'x' }), (e: unknown) => e instanceof S3Error && e.code === 'ECONNREFUSED');
  assert.deepEqual(dead.counters, { requests: 3, retries: 2 });
  dead.close();
});

test('stopInFlight: a write stops at its next chunk (IoAbortedError) and its object is removed at close; a read returns what it had', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123');
  await backend.write('r', sourceOf(4 * MiB));
  const got: number[] = [];
  let reads = 0;
  const read = await backend.read('r', (c) => {
    got.push(c.length);
    if (++reads === 1) backend.stopInFlight();
  });
  assert.ok(read.bytes > 0 && read.bytes < 4 * MiB, `partial read: ${read.bytes}`);
  const source: ChunkSource = { size: 2 * MiB, chunks: () => sourceOf(2 * MiB).chunks() };
  await assert.rejects(backend.write('w', source), IoAbortedError);
  await backend.close();
  assert.equal(fake.objects.size, 0);
});

test('stopInFlight against a stalled store: a PUT waiting to send its body and a GET waiting for its first byte stop at once, not at the idle timeout', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client({ ...clientOptions(), idleTimeoutMs: 60_000 }), '', 'abcd0123');
  await backend.write('r', sourceOf(64 * 1024));
  fake.stalled.length = 0;
  fake.stall = (r) => r.method === 'PUT' || r.method === 'GET';
  try {
    const put = backend.write('w', sourceOf(256 * 1024)).then(
      () => assert.fail('a stalled PUT cannot succeed'),
      (e: unknown) => e,
    );
    const get = backend.read('r');
    while (fake.stalled.length < 2) await new Promise((resolve) => setTimeout(resolve, 10)); // both at the store, neither answered
    assert.deepEqual(fake.stalled.map((r) => r.method).sort(), ['GET', 'PUT']);
    backend.stopInFlight();
    const stopped = await put;
    assert.ok(stopped instanceof IoAbortedError, String(stopped));
    assert.equal(stopped.bytes, 0, 'no body byte was sent (the store never said 100-continue)');
    assert.equal((await get).bytes, 0, 'a stopped read returns what it had: nothing');
  } finally {
    fake.stall = () => false;
  }
  await backend.close(); // deletes what the stopped PUT may have left
  assert.equal(fake.objects.size, 0);
});

test('stopInFlight after a PUT has sent its whole body: its answer is waited for and the write counts (its bytes are on the server)', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123');
  fake.received.length = 0;
  fake.answerDelayMs = (r) => (r.method === 'PUT' ? 200 : 0);
  try {
    const put = backend.write('w', sourceOf(256 * 1024));
    while (!fake.received.some((r) => r.method === 'PUT')) await new Promise((resolve) => setTimeout(resolve, 5));
    backend.stopInFlight();
    await put; // not IoAbortedError
    assert.equal(backend.sizeOf('w'), 256 * 1024);
    assert.equal(fake.objects.get('b/kvc-abcd0123-w.bin')?.length, 256 * 1024);
  } finally {
    fake.answerDelayMs = () => 0;
  }
  await backend.close();
  assert.equal(fake.objects.size, 0);
});

/**
 * sourceOf's bytes; `open` counts iterations not yet over. A payload source's iteration holds a slot
 * until it ends or is given back: one left open is a slot lost, and a run that loses them all hangs.
 */
function trackedSource(size: number, chunk: number): { readonly source: ChunkSource; readonly open: () => number } {
  let open = 0;
  return {
    open: () => open,
    source: {
      size,
      async *chunks() {
        open++;
        try {
          yield* sourceOf(size, chunk).chunks();
        } finally {
          open--;
        }
      },
    },
  };
}

test('every write gives its source back (a payload slot): a PUT or a multipart upload, done, stopped, or cut off mid-body', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions({ maxAttempts: 1 })), '', 'abcd0123', 2 * MiB, MiB + 5);
  const put = trackedSource(MiB + 3, 300_000);
  await backend.write('put', put.source);
  assert.equal(put.open(), 0, 'a PUT');
  const multi = trackedSource(3 * MiB, 700_000);
  await backend.write('multi', multi.source);
  assert.equal(multi.open(), 0, 'a multipart upload: the last part ends the source');
  assert.equal(backend.stats().multipartUploads, 1);
  // Cut off mid-body by the server: the failure is an S3Error, counted, and the source is given back.
  // A PUT larger than the sockets' buffers fails in a write (EPIPE, ECONNRESET), a part at its answer.
  const onePut = new S3Backend(new S3Client(clientOptions({ maxAttempts: 1 })), '', 'abcd0124', 64 * MiB);
  fake.cut = (r) => (r.method === 'PUT' ? 400_000 : undefined);
  try {
    for (const [b, key, size] of [
      [onePut, 'cut-put', 24 * MiB],
      [backend, 'cut-multi', 3 * MiB],
    ] as const) {
      const t = trackedSource(size, 256 * 1024);
      await assert.rejects(b.write(key, t.source), (e: unknown) => e instanceof S3Error);
      assert.equal(t.open(), 0, key);
      assert.equal(
        Object.values(b.stats().failures).reduce((x, y) => x + y, 0),
        1,
        `${key}: ${JSON.stringify(b.stats().failures)}`,
      );
    }
  } finally {
    fake.cut = () => undefined;
  }
  await onePut.close();
  // Stopped in the middle of a multipart upload.
  const stopped = trackedSource(3 * MiB, 100_000);
  const source: ChunkSource = {
    size: stopped.source.size,
    async *chunks() {
      let n = 0;
      for await (const c of stopped.source.chunks()) {
        if (++n === 15) backend.stopInFlight(); // in the second part
        yield c;
      }
    },
  };
  await assert.rejects(backend.write('stopped', source), IoAbortedError);
  assert.equal(stopped.open(), 0, 'a stopped multipart upload');
  await backend.close();
});

test("a GET's sink keeps its view of the socket's buffer while it works, even when the socket times out meanwhile", async () => {
  fake.objects.clear();
  fake.objects.set('b/a', Buffer.alloc(3 * MiB, 0xaa));
  fake.objects.set('b/b', Buffer.alloc(3 * MiB, 0xbb));
  const client = new S3Client(clientOptions({ idleTimeoutMs: 100, maxAttempts: 1 }));
  let view: Uint8Array | undefined;
  let otherRead = false;
  let chunks = 0;
  const first = client.send({
    method: 'GET',
    key: 'a',
    sink: async (chunk) => {
      if (++chunks !== 2) return; // the first comes with the response head, copied out of the buffer
      view = chunk;
      await new Promise((r) => setTimeout(r, 300)); // a slow sink: the paused socket times out
      await client.send({ method: 'GET', key: 'b', sink: () => undefined }); // another socket reads meanwhile
      otherRead = true;
    },
  });
  await assert.rejects(first, (e: unknown) => e instanceof S3Error && e.code === 'ETIMEDOUT');
  while (!otherRead) await new Promise((r) => setTimeout(r, 20));
  assert.ok(view !== undefined && view.length > 0);
  assert.ok(
    view.every((b) => b === 0xaa),
    'the first sink’s bytes were not overwritten by the other GET',
  );
  client.close();
});

test('failure classes of answers and which are retried', () => {
  assert.deepEqual(
    [
      classOfStatus(503, 'SlowDown'),
      classOfStatus(503, undefined),
      classOfStatus(500, 'InternalError'),
      classOfStatus(403, 'QuotaExceeded'),
      classOfStatus(403, 'SignatureDoesNotMatch'),
      classOfStatus(404, 'NoSuchKey'),
      classOfStatus(400, 'InvalidArgument'),
    ],
    ['SLOWDOWN', 'SLOWDOWN', 'HTTP_5XX', 'EDQUOT', 'HTTP_403', 'HTTP_404', 'HTTP_400'],
  );
  const retried = ['HTTP_5XX', 'SLOWDOWN', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'HTTP_403', 'HTTP_404', 'EDQUOT'].map((c) =>
    isRetryable(new S3Error('x', c)),
  );
  assert.deepEqual(retried, [true, true, true, true, true, false, false, false]);
});

test('LatencySketch: percentiles within its 2 % buckets, capped at the largest value', () => {
  const s = new LatencySketch();
  for (let i = 1; i <= 100; i++) s.add(i);
  const x = s.summary();
  assert.equal(x.count, 100);
  assert.equal(x.meanMs, 50.5);
  assert.equal(x.maxMs, 100);
  assert.ok(x.p50Ms >= 50 && x.p50Ms <= 51, `p50 ${x.p50Ms}`);
  assert.ok(x.p95Ms >= 95 && x.p95Ms <= 96.9, `p95 ${x.p95Ms}`);
  assert.equal(x.p99Ms, Math.min(100, x.p99Ms));
  assert.deepEqual(new LatencySketch().summary(), { count: 0, meanMs: 0, p50Ms: 0, p95Ms: 0, p99Ms: 0, maxMs: 0 });
});

test('metadata calls: a DELETE is an unlink (a refused one counted as failed), a PUT or GET is none', async () => {
  fake.objects.clear();
  const stats = new MetadataStats();
  const backend = new S3Backend(new S3Client(clientOptions()), '', 'abcd0123', MULTIPART_ABOVE, PART_BYTES, undefined, (op, ms, ok) =>
    stats.record(op, ms, ok),
  );
  await backend.write('a', sourceOf(1000));
  await backend.write('b', sourceOf(1000));
  await collect(backend, 'a');
  await backend.delete('a');
  fake.fault = (r) => (r.method === 'DELETE' ? { status: 403, code: 'AccessDenied' } : undefined);
  try {
    await assert.rejects(backend.delete('b'), (e: unknown) => e instanceof S3Error && e.code === 'HTTP_403');
  } finally {
    fake.fault = () => undefined;
  }
  const s = stats.snapshot();
  assert.deepEqual([s.unlink.count, s.unlink.failed, s.unlink.latency.count], [1, 1, 1]);
  assert.ok(s.unlink.latency.max > 0);
  for (const op of ['create', 'rename', 'link', 'lookup', 'mkdir'] as const) assert.deepEqual([s[op].count, s[op].failed], [0, 0], op);
  await backend.close();
});

test("metadata calls: a shared pool's HEADs are lookups, found or not (404 is the answer), a refused one failed", async () => {
  fake.objects.clear();
  const stats = new MetadataStats();
  const pool = { namespace: 'kvpool-0123456789abcdef', keep: false, openedAtMs: 0 };
  const backend = new S3Backend(new S3Client(clientOptions()), 'p/', 'abcd0123', MULTIPART_ABOVE, PART_BYTES, pool, (op, ms, ok) =>
    stats.record(op, ms, ok),
  );
  const access = backend.pool;
  assert.ok(access !== undefined);
  const logged = fake.log.length;
  await backend.write('blk', sourceOf(4096));
  const found = await access.lookup('blk');
  const missing = await access.lookup('none');
  assert.deepEqual([found.found, missing.found], [true, false]);
  fake.fault = (r) => (r.method === 'HEAD' ? { status: 403, code: 'AccessDenied' } : undefined);
  try {
    await assert.rejects(access.lookup('blk'), (e: unknown) => e instanceof S3Error && e.code === 'HTTP_403');
  } finally {
    fake.fault = () => undefined;
  }
  await backend.delete('blk'); // an eviction of a block it published
  const s = stats.snapshot();
  assert.deepEqual([s.lookup.count, s.lookup.failed, s.lookup.latency.count], [2, 1, 2]);
  assert.deepEqual([s.unlink.count, s.unlink.failed], [1, 0]);
  assert.equal(s.create.count, 0, 'the PUT that published the block is its write');
  assert.equal(fake.log.slice(logged).filter((r) => r.method === 'HEAD').length, 3, 'one sink call per HEAD sent');
  await backend.close();
});

test('close: every object is tried though some DELETEs are refused; what it left is said (count, where, why, remedy), not thrown', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions()), 'run/', 'abcd0123');
  for (let i = 0; i < 10; i++) await backend.write(`k${i}`, sourceOf(1000));
  const refused = new Set([backend.objectKey('k2'), backend.objectKey('k5'), backend.objectKey('k9')]);
  let deletes = 0;
  fake.fault = (r) => {
    if (r.method !== 'DELETE') return undefined;
    deletes++;
    return refused.has(r.key) ? { status: 403, code: 'AccessDenied' } : undefined;
  };
  try {
    await backend.close();
  } finally {
    fake.fault = () => undefined;
  }
  assert.equal(deletes, 10, 'a refused DELETE (answered, not retried) does not stop the others');
  assert.deepEqual([...fake.objects.keys()].map((k) => k.replace(/^b\//, '')).sort(), [...refused].sort());
  const left = backend.leftBehind();
  assert.ok(left !== undefined);
  assert.equal(left.count, 3);
  assert.equal(left.where, 's3://b/run/');
  assert.match(left.why, /^3 DELETE\(s\) failed, the first: .*AccessDenied/);
  assert.doesNotMatch(left.why, /not sent/);
  assert.match(left.remedy, /--remove-stale-entries/);
});

test('close against a store that stops coping: after a DELETE fails its retries no more are sent, and all not deleted are counted', async () => {
  fake.objects.clear();
  const backend = new S3Backend(new S3Client(clientOptions({ maxConnections: 2 })), '', 'abcd0123');
  for (let i = 0; i < 20; i++) await backend.write(`k${i}`, sourceOf(1000));
  let deletes = 0;
  fake.fault = (r) => (r.method === 'DELETE' ? (deletes++, { status: 503, code: 'SlowDown' }) : undefined);
  try {
    await backend.close();
  } finally {
    fake.fault = () => undefined;
  }
  // Two at once, each tried maxAttempts (3) times, then nothing more: not 20 × 3.
  assert.equal(deletes, 2 * 3);
  assert.equal(fake.objects.size, 20);
  const left = backend.leftBehind();
  assert.equal(left?.count, 20);
  assert.match(left?.why ?? '', /^2 DELETE\(s\) failed, the first: .*SlowDown.*; 18 not sent, the store not answering$/);
});

test("the clean-up's line shows the store's answer and the prefix inert: a control character in either cannot act on the console", () => {
  const line = leftBehindLine({
    count: 2,
    where: 's3://b/p\u001b[2K/',
    why: '2 DELETE(s) failed, the first: S3 DELETE x failed: 500 Bad\nthing',
    remedy: 'give the next run on this prefix --remove-stale-entries to remove those still there',
  });
  assert.equal(
    line,
    'WARNING: the clean-up may have left 2 object(s) of this run in s3://b/p\\e[2K/ (2 DELETE(s) failed, the first: S3 DELETE x failed: 500 Bad\\nthing); give the next run on this prefix --remove-stale-entries to remove those still there',
  );
});
