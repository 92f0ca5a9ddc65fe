// The `s3` storage backend: the storage tier's entries as objects in an S3 bucket (s3.ts), for OPEN
// runs and for users who want to know what their object store does for KV offload without a POSIX
// gateway in the way (issue 25). What the registry needs around the S3Backend: the flags' checks, the
// bucket checked (or created with --create-bucket) when it is opened, so that a wrong key, a missing
// bucket or an unreachable endpoint is one clear error before the run (exit 2); earlier runs' objects
// under the prefix; QuotaExceeded as "full"; the description saying no device counters stand behind it.
//
// Addressing: path style (the bucket in the path) whenever --s3-endpoint is given, since custom
// endpoints (radosgw, MinIO, …) rarely resolve bucket host names; virtual-host style for the
// provider's own endpoint unless --s3-path-style.
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { GiB } from '../util/units.js';
import { entryRunIdOf, newRunId } from './file-names.js';
import { certificateFailure, S3Client, S3Error, trustedCas } from './s3-client.js';
import type { CredentialSource, S3ClientOptions } from './s3-client.js';
import { MULTIPART_ABOVE, PART_BYTES, S3Backend } from './s3.js';
import { StorageSetupError } from './storage-kind.js';
import type { LeftoverEntries, ObjectStoreOptions, OpenedStorage, PoolAtStart, StorageKind, StorageOpenOptions } from './storage-kind.js';
import { POOL_BLOCK_FILE, poolNamespace } from './pool-names.js';

const NO_CAPACITY = '--storage-backend s3 needs --storage-capacity-gb > 0: an object store has no free space to take a share of';
/** What the results name as the client. */
export const S3_CLIENT_NAME =
  'kvcache-bench S3 client (SigV4 by @smithy/signature-v4; PUT over node:http, GET over raw keep-alive sockets)';
/** A socket silent this long fails the request (ETIMEDOUT). */
const IDLE_TIMEOUT_MS = 30_000;
/** Tries per request (retries of 5xx, SlowDown and connection failures, with doubling back-off). */
const MAX_ATTEMPTS = 4;
const BACKOFF_MS = 100;
/** S3 keys are at most 1,024 bytes: room for the prefix. */
const MAX_OBJECT_NAME = 900;

/** The --s3-* flags' problems found before anything is made (bucket name, endpoint URL). */
export function s3FlagProblems(o: ObjectStoreOptions | undefined): string[] {
  const problems: string[] = [];
  if (o?.bucket === undefined || o.bucket === '') problems.push('--storage-backend s3 needs --s3-bucket NAME');
  else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(o.bucket))
    problems.push(`--s3-bucket '${o.bucket}' is not a bucket name (3–63 lowercase letters, digits, '.' and '-')`);
  if (o?.endpoint !== undefined) {
    const url = URL.canParse(o.endpoint) ? new URL(o.endpoint) : undefined;
    if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.username !== '' || url.password !== '')
      problems.push(`--s3-endpoint must be an http:// or https:// URL without credentials (got '${url?.protocol ?? 'not a URL'}')`);
    else if (url.pathname !== '/' || url.search !== '')
      problems.push('--s3-endpoint takes the scheme, host and port only (no path or query)');
  }
  if (o?.caFile !== undefined && o.endpoint !== undefined && !o.endpoint.startsWith('https://'))
    problems.push('--s3-ca-file verifies an https:// --s3-endpoint; this one is not https://');
  if (o !== undefined && o.prefix !== '' && (o.prefix.startsWith('/') || o.prefix.length > 200))
    problems.push('--s3-prefix must not start with / and is at most 200 characters');
  return problems;
}

/** The region: --s3-region, else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1. */
function regionOf(o: ObjectStoreOptions, env: NodeJS.ProcessEnv): string {
  return o.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
}

/** The prefix as a folder: '' or ending in '/'. */
function folderOf(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

/** Credentials from the AWS default chain, resolved once; a chain that finds none is a user error. */
async function credentialsOnce(): Promise<CredentialSource> {
  const chain = defaultProvider({ timeout: 1000, maxRetries: 0 });
  try {
    const c = await chain();
    const creds = {
      accessKeyId: c.accessKeyId,
      secretAccessKey: c.secretAccessKey,
      ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}),
    };
    return () => Promise.resolve(creds);
  } catch {
    throw new StorageSetupError(
      '--storage-backend s3: no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile (AWS_PROFILE) in ~/.aws/credentials',
    );
  }
}

/** The bucket answers a listing with these credentials; missing → created with --create-bucket, else a user error. */
async function checkBucket(client: S3Client, o: S3ClientOptions, create: boolean, prefix: string): Promise<void> {
  const where = `bucket '${o.bucket}' at ${o.endpoint.host}`;
  try {
    await client.send({ method: 'GET', key: '', query: { 'list-type': '2', 'max-keys': '1', prefix } });
  } catch (e) {
    if (!(e instanceof S3Error)) throw e;
    if (e.s3Code === 'NoSuchBucket' || (e.status === 404 && e.s3Code === undefined)) {
      if (!create) throw new StorageSetupError(`--storage-backend s3: ${where} does not exist: create it, or pass --create-bucket`);
      await createBucket(client, o, where);
      return;
    }
    if (e.status === 403)
      throw new StorageSetupError(
        `--storage-backend s3: ${where} refused the credentials (403 ${e.s3Code ?? 'Forbidden'}): check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the profile in use`,
      );
    const untrusted = certificateFailure(e);
    if (untrusted !== undefined)
      throw new StorageSetupError(
        `--storage-backend s3: the TLS certificate of ${o.endpoint.host} cannot be verified (${untrusted}): give the CA that signed it with --s3-ca-file FILE.pem or NODE_EXTRA_CA_CERTS (verification is never turned off)`,
      );
    if (e.status === undefined)
      throw new StorageSetupError(`--storage-backend s3: cannot reach the endpoint ${o.endpoint.host}: ${e.code}`);
    throw new StorageSetupError(`--storage-backend s3: ${where} cannot be listed: ${e.message}`);
  }
}

async function createBucket(client: S3Client, o: S3ClientOptions, where: string): Promise<void> {
  const location =
    o.region === 'us-east-1'
      ? ''
      : `<CreateBucketConfiguration><LocationConstraint>${o.region}</LocationConstraint></CreateBucketConfiguration>`;
  const bytes = Buffer.from(location);
  try {
    await client.send({
      method: 'PUT',
      key: '',
      body: {
        size: bytes.length,
        chunks: async function* () {
          yield bytes;
        },
      },
    });
  } catch (e) {
    throw new StorageSetupError(
      `--storage-backend s3: ${where} could not be created (--create-bucket): ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** Every object whose key starts with `under`, with its size, page by page. */
async function* listObjects(client: S3Client, under: string): AsyncGenerator<{ key: string; size: number }> {
  let token: string | undefined;
  do {
    const query: Record<string, string> = { 'list-type': '2', prefix: under, 'max-keys': '1000' };
    if (token !== undefined) query['continuation-token'] = token;
    const res = await client.send({ method: 'GET', key: '', query });
    for (const m of res.text.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      const key = xmlText(/<Key>([\s\S]*?)<\/Key>/.exec(m[1])?.[1] ?? '');
      yield { key, size: Number(/<Size>(\d+)<\/Size>/.exec(m[1])?.[1] ?? '0') };
    }
    const truncated = res.text.includes('<IsTruncated>true</IsTruncated>');
    token = truncated ? xmlText(/<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(res.text)?.[1] ?? '') : undefined;
  } while (token !== undefined && token !== '');
}

/** Our entry objects under `prefix` of runs other than `runId`, with their sizes. */
async function listStale(client: S3Client, prefix: string, runId: string): Promise<Array<{ key: string; size: number }>> {
  const found: Array<{ key: string; size: number }> = [];
  for await (const o of listObjects(client, `${prefix}kvc-`)) {
    const name = o.key.slice(prefix.length);
    if (name.includes('/')) continue; // deeper "folders" are not ours
    const id = entryRunIdOf(name);
    if (id !== undefined && id !== runId) found.push(o);
  }
  return found;
}

/**
 * A shared pool's blocks at start (earlier runs', --keep-pool). An object store has no temporary
 * names: a PUT makes its object appear whole or not at all, so nothing half-written is ever listed.
 */
async function s3PoolAtStart(client: S3Client, where: string, under: string, namespace: string): Promise<PoolAtStart> {
  let blocks = 0;
  let blockBytes = 0;
  for await (const o of listObjects(client, under)) {
    if (!POOL_BLOCK_FILE.test(o.key.slice(o.key.lastIndexOf('/') + 1))) continue;
    blocks++;
    blockBytes += o.size;
  }
  return { location: where, namespace, blocks, blockBytes, staleTemps: 0, staleTempBytes: 0, staleTempsRemoved: 0 };
}

/** The store's clock now: a probe object's Last-Modified (whole seconds), the object then removed. */
async function poolClockOf(client: S3Client, probeKey: string): Promise<number> {
  const empty = {
    size: 0,
    chunks: async function* (): AsyncGenerator<Uint8Array> {
      // an empty object: no chunk
    },
  };
  await client.send({ method: 'PUT', key: probeKey, body: empty });
  try {
    const res = await client.send({ method: 'HEAD', key: probeKey });
    const t = Date.parse(res.headers['last-modified'] ?? '');
    if (!Number.isFinite(t)) throw new StorageSetupError(`--kv-pool shared: the object store gave no Last-Modified time for ${probeKey}`);
    return t;
  } finally {
    await client.send({ method: 'DELETE', key: probeKey }).catch(() => undefined);
  }
}

function xmlText(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

async function s3Leftovers(client: S3Client, where: string, prefix: string, runId: string, remove: boolean) {
  const stale = await listStale(client, prefix, runId);
  let removed = 0;
  if (remove) {
    for (const s of stale) {
      await client.send({ method: 'DELETE', key: s.key });
      removed++;
    }
  }
  const bytes = stale.reduce((n, s) => n + s.size, 0);
  const found: LeftoverEntries = { count: stale.length, bytes, allocatedBytes: bytes, removed };
  if (found.count === 0) return { found, warnings: [] };
  const what = `${where} held ${found.count} entry object(s) of earlier runs (kvc-<run id>-*.bin, ${(bytes / GiB).toFixed(3)} GiB), e.g. from a killed run`;
  const action = remove
    ? `; ${removed} removed (--remove-stale-entries)`
    : '; left in place (they take space in the bucket): remove them with --remove-stale-entries';
  return { found, warnings: [what + action] };
}

/** The client's options from the flags and the environment (the endpoint is checked by s3FlagProblems first). */
export function s3ClientOptions(
  o: ObjectStoreOptions,
  maxConnections: number,
  credentials: CredentialSource,
  env = process.env,
): S3ClientOptions {
  const region = regionOf(o, env);
  const endpoint = new URL(o.endpoint ?? `https://s3.${region}.amazonaws.com`);
  return {
    endpoint,
    bucket: o.bucket ?? '',
    region,
    pathStyle: o.endpoint !== undefined || o.pathStyle,
    credentials,
    maxConnections,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    maxAttempts: MAX_ATTEMPTS,
    backoffMs: BACKOFF_MS,
  };
}

async function openS3(so: StorageOpenOptions): Promise<OpenedStorage> {
  const o = so.objectStore;
  const problems = s3FlagProblems(o);
  if (o === undefined || problems.length > 0) throw new StorageSetupError(problems.join('; '));
  const prefix = folderOf(o.prefix);
  const trust = o.caFile !== undefined ? trustedCas(o.caFile) : undefined;
  if (trust !== undefined && 'problem' in trust) throw new StorageSetupError(trust.problem);
  // One connection per operation that may be in flight, as the file tier has one staging slot each.
  const co = { ...s3ClientOptions(o, so.stagingSlots, await credentialsOnce()), ...(trust !== undefined ? { ca: trust.ca } : {}) };
  const client = new S3Client(co);
  try {
    await checkBucket(client, co, o.createBucket, prefix);
  } catch (e) {
    client.close();
    throw e;
  }
  const runId = newRunId();
  const host = co.endpoint.host;
  const namespace = so.pool !== undefined ? poolNamespace(so.pool.identity) : undefined;
  let poolOptions: ConstructorParameters<typeof S3Backend>[5];
  if (so.pool !== undefined && namespace !== undefined) {
    try {
      poolOptions = { namespace, keep: so.pool.keep, openedAtMs: await poolClockOf(client, `${prefix}${namespace}/.kvc-open-${runId}`) };
    } catch (e) {
      client.close();
      throw e instanceof S3Error ? new StorageSetupError(`--kv-pool shared: cannot write to the pool in ${co.bucket}: ${e.message}`) : e;
    }
  }
  const backend = new S3Backend(client, prefix, runId, MULTIPART_ABOVE, PART_BYTES, poolOptions, so.metadataOps);
  const where = `s3://${co.bucket}/${prefix} at ${host}`;
  return {
    objectsAt:
      poolOptions !== undefined
        ? `s3://${co.bucket}/${prefix}${poolOptions.namespace}/ (the blocks it published stay as the pool's, read by later runs)`
        : `s3://${co.bucket}/${prefix} (kvc-${runId}-*.bin: give the next run on this prefix --remove-stale-entries)`,
    backend,
    description: {
      kind: 's3',
      location: where,
      noDevice: `an object store (${host}) has no block device whose counters this host can read: the device-bytes checks do not apply`,
      headline: `S3 bucket ${co.bucket} at ${host} (object store: no device counters; ${S3_CLIENT_NAME})`,
      ioMode: `S3 over ${co.endpoint.protocol.replace(':', '')}`,
      fileSystem: 'none (object store)',
    },
    warnings: [],
    leftovers: async (remove) => {
      const left = await s3Leftovers(client, where, prefix, runId, remove);
      if (namespace === undefined) return left;
      const under = `${prefix}${namespace}/`;
      return { ...left, pool: await s3PoolAtStart(client, `s3://${co.bucket}/${under} at ${host}`, under, namespace) };
    },
    // capacityProblem refuses a missing capacity at start; this is the guard behind it.
    limitBytes: (capacityBytes) => (capacityBytes > 0 ? Promise.resolve(capacityBytes) : Promise.reject(new RangeError(NO_CAPACITY))),
    // A bucket over its quota answers 403 QuotaExceeded (class EDQUOT): the run stops as on a full disk.
    fullness: { where, isFullError: (c) => c === 'EDQUOT', space: () => Promise.resolve(undefined) },
    keyFits: (key) => backend.objectKey(key).length <= MAX_OBJECT_NAME,
    objectStore: () => ({
      endpointHost: host,
      bucket: co.bucket,
      prefix,
      region: co.region,
      addressing: co.pathStyle ? 'path' : 'virtual-host',
      client: S3_CLIENT_NAME,
      maxConnections: co.maxConnections,
      idleTimeoutMs: co.idleTimeoutMs,
      maxAttempts: co.maxAttempts,
      multipartAboveBytes: backend.multipartAbove,
      partBytes: backend.partBytes,
      ...backend.stats(),
    }),
  };
}

export const S3_STORAGE: StorageKind = {
  help: 'one object per entry in an S3 bucket (--s3-endpoint, --s3-bucket; needs --storage-capacity-gb; OPEN runs only)',
  usesCacheDir: false,
  capacityProblem: (capacityGiB) => (capacityGiB > 0 ? undefined : NO_CAPACITY),
  objectStoreProblems: s3FlagProblems,
  open: openS3,
};
