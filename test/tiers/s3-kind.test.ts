// The `s3` storage kind without a real server: its flag and capacity checks, and, against the fake
// S3 server, what opening it does (bucket checked or created, one clear StorageSetupError each for a
// missing bucket, refused credentials, an unreachable endpoint), its description, leftovers under the
// prefix (ours only, removed only on request) and its account for the results.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DirectSlabs } from '../../src/data/aligned.js';
import { storageBackendChecks } from '../../src/tiers/registry.js';
import { S3_CLIENT_NAME, S3_STORAGE, s3ClientOptions, s3FlagProblems } from '../../src/tiers/s3-kind.js';
import { objectStoreOptionsOf, StorageSetupError } from '../../src/tiers/storage-kind.js';
import type { ObjectStoreOptions } from '../../src/tiers/storage-kind.js';
import { MiB } from '../../src/util/units.js';
import { FakeS3 } from './s3-fake-server.js';

let fake: FakeS3;
before(async () => {
  fake = await FakeS3.start(['kvc']);
  process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'secret-not-shown';
});
after(() => fake.stop());

const store = (o: Partial<ObjectStoreOptions> = {}): ObjectStoreOptions => ({
  endpoint: fake.endpoint,
  bucket: 'kvc',
  createBucket: false,
  prefix: 'runs',
  pathStyle: false,
  ...o,
});
const open = (o: Partial<ObjectStoreOptions> = {}) =>
  S3_STORAGE.open({ ioMode: 'direct', chunkBytes: 4 * MiB, stagingSlots: 6, directSlabs: new DirectSlabs(), objectStore: store(o) });

test('start-up checks: capacity required, bucket named, endpoint a bare http(s) URL without credentials', () => {
  assert.deepEqual(
    storageBackendChecks('s3', 0, undefined, objectStoreOptionsOf({ createBucket: false, s3Prefix: '', s3PathStyle: false })).problems,
    [
      '--storage-backend s3 needs --storage-capacity-gb > 0: an object store has no free space to take a share of',
      '--storage-backend s3 needs --s3-bucket NAME',
    ],
  );
  assert.deepEqual(storageBackendChecks('s3', 1, '/tmp/x', store()).warnings, [
    '--cache-dir /tmp/x is not used: --storage-backend s3 keeps no files',
  ]);
  assert.deepEqual(s3FlagProblems(store()), []);
  assert.deepEqual(s3FlagProblems(store({ bucket: 'Bad_Bucket' })), [
    "--s3-bucket 'Bad_Bucket' is not a bucket name (3–63 lowercase letters, digits, '.' and '-')",
  ]);
  assert.deepEqual(s3FlagProblems(store({ endpoint: 'http://key:secret@host:9000' })), [
    "--s3-endpoint must be an http:// or https:// URL without credentials (got 'http:')",
  ]);
  assert.deepEqual(s3FlagProblems(store({ endpoint: 'ftp://host' })), [
    "--s3-endpoint must be an http:// or https:// URL without credentials (got 'ftp:')",
  ]);
  assert.deepEqual(s3FlagProblems(store({ endpoint: 'http://host:9000/bucket' })), [
    '--s3-endpoint takes the scheme, host and port only (no path or query)',
  ]);
  // The file kind asks nothing of the --s3-* flags.
  assert.deepEqual(storageBackendChecks('file', 0, undefined, store({ bucket: 'Bad_Bucket' })).problems, []);
});

test('addressing: path style with a custom endpoint, virtual host for the provider unless --s3-path-style; region from the environment', () => {
  const creds = () => Promise.resolve({ accessKeyId: 'a', secretAccessKey: 'b' });
  const custom = s3ClientOptions(store(), 8, creds, {});
  assert.deepEqual([custom.pathStyle, custom.region, custom.endpoint.href], [true, 'us-east-1', `${fake.endpoint}/`]);
  const aws = s3ClientOptions(store({ endpoint: undefined }), 8, creds, { AWS_REGION: 'eu-west-3' });
  assert.deepEqual([aws.pathStyle, aws.region, aws.endpoint.href], [false, 'eu-west-3', 'https://s3.eu-west-3.amazonaws.com/']);
  const forced = s3ClientOptions(store({ endpoint: undefined, pathStyle: true, region: 'us-west-2' }), 8, creds, { AWS_REGION: 'x' });
  assert.deepEqual([forced.pathStyle, forced.region], [true, 'us-west-2']);
});

test('opening: description without a device, the client named, no credential anywhere in what it reports', async () => {
  const s = await open();
  try {
    const host = new URL(fake.endpoint).host;
    assert.equal(s.description.kind, 's3');
    assert.equal(s.description.location, `s3://kvc/runs/ at ${host}`);
    assert.equal(s.description.dir, undefined);
    assert.match(s.description.noDevice ?? '', /has no block device whose counters this host can read/);
    assert.equal(s.entryFiles, undefined);
    assert.equal(await s.limitBytes(3 * MiB), 3 * MiB);
    await assert.rejects(s.limitBytes(0), RangeError);
    assert.equal(s.fullness.isFullError('EDQUOT'), true);
    assert.equal(s.fullness.isFullError('SLOWDOWN'), false);
    const report = s.objectStore?.();
    assert.ok(report !== undefined);
    assert.equal(report.endpointHost, host);
    assert.equal(report.client, S3_CLIENT_NAME);
    assert.deepEqual([report.maxConnections, report.addressing, report.prefix], [6, 'path', 'runs/']);
    const text = JSON.stringify({ report, d: s.description, w: s.warnings });
    assert.ok(!text.includes('AKIDTEST') && !text.includes('secret-not-shown'), 'no credential in the results or the log');
  } finally {
    await s.backend.close();
  }
});

test('a missing bucket is one StorageSetupError unless --create-bucket, which creates it', async () => {
  await assert.rejects(open({ bucket: 'absent' }), (e: unknown) => {
    assert.ok(e instanceof StorageSetupError);
    assert.equal(
      e.message,
      `--storage-backend s3: bucket 'absent' at ${new URL(fake.endpoint).host} does not exist: create it, or pass --create-bucket`,
    );
    return true;
  });
  assert.equal(fake.buckets.has('absent'), false);
  const s = await open({ bucket: 'absent', createBucket: true });
  await s.backend.close();
  assert.equal(fake.buckets.has('absent'), true);
});

test('refused credentials and an unreachable endpoint are StorageSetupErrors naming the cause', async () => {
  fake.fault = () => ({ status: 403, code: 'InvalidAccessKeyId' });
  try {
    await assert.rejects(open(), /refused the credentials \(403 InvalidAccessKeyId\): check AWS_ACCESS_KEY_ID/);
  } finally {
    fake.fault = () => undefined;
  }
  await assert.rejects(open({ endpoint: 'http://127.0.0.1:1' }), (e: unknown) => {
    assert.ok(e instanceof StorageSetupError);
    assert.equal(e.message, '--storage-backend s3: cannot reach the endpoint 127.0.0.1:1: ECONNREFUSED');
    return true;
  });
});

test("leftovers: earlier runs' entry objects under the prefix are found, removed only on request; other objects never touched", async () => {
  fake.objects.clear();
  const mine = ['runs/kvc-0badf00d-a.bin', 'runs/kvc-0badf00d-b.bin'];
  const others = ['runs/notes.txt', 'runs/deeper/kvc-0badf00d-c.bin', 'elsewhere/kvc-0badf00d-d.bin', 'runs/kvc-XYZ-e.bin'];
  for (const k of [...mine, ...others]) fake.objects.set(`kvc/${k}`, Buffer.alloc(10));
  const s = await open();
  try {
    const kept = await s.leftovers(false);
    assert.deepEqual(kept.found, { count: 2, bytes: 20, allocatedBytes: 20, removed: 0 });
    assert.match(kept.warnings[0] ?? '', /held 2 entry object\(s\) of earlier runs .*remove them with --remove-stale-entries/);
    const removed = await s.leftovers(true);
    assert.deepEqual(removed.found, { count: 2, bytes: 20, allocatedBytes: 20, removed: 2 });
    assert.deepEqual([...fake.objects.keys()].sort(), others.map((k) => `kvc/${k}`).sort());
  } finally {
    await s.backend.close();
  }
});
