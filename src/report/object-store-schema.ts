// The S3 storage tier's own account, `kvcache_bench.object_store` (issue 25), kept apart from
// results-schema.ts, which includes it in the run's and the replay's `kvcache_bench` block.
import * as z from 'zod';
import { count, ms } from './schema-units.js';

/** One operation's times of an object store (kvcache_bench.object_store). */
const ObjectStoreLatencySchema = z.strictObject({
  count: count('operations'),
  mean_ms: ms('mean'),
  p50_ms: ms('median'),
  p95_ms: ms('95th percentile'),
  p99_ms: ms('99th percentile'),
  max_ms: ms('largest'),
});

/** The S3 storage tier's own account (issue 25); absent for the other kinds. */
export const ObjectStoreSchema = z
  .strictObject({
    endpoint_host: z.string().describe('host[:port] of the endpoint only (no path, no credentials)'),
    bucket: z.string(),
    prefix: z.string().describe("key prefix of the run's objects (kvc-<run id>-*.bin under it)"),
    region: z.string().describe('signing region'),
    addressing: z.enum(['path', 'virtual-host']),
    client: z.string().describe('the HTTP client and signer'),
    max_connections: count('requests in flight at most (keep-alive sockets)'),
    idle_timeout_ms: ms('a request whose socket is silent this long fails (ETIMEDOUT)'),
    max_attempts: count('tries per request, the first included (5xx, 503 SlowDown and connection failures are retried)'),
    multipart_above_bytes: count('entries above this size are multipart uploads'),
    part_bytes: count('multipart part size'),
    requests: count('HTTP requests sent, retries included'),
    retries: count('of them retries (their time is inside the operation that retried)'),
    puts: count('entries uploaded'),
    multipart_uploads: count('of them as multipart uploads'),
    gets: count('entries downloaded whole'),
    deletes: count('objects deleted'),
    failures: z
      .record(z.string(), count('failed operations'))
      .describe('failed operations by class (HTTP_403, HTTP_404, HTTP_5XX, SLOWDOWN, ECONNRESET, ECONNREFUSED, ETIMEDOUT, EDQUOT, …)'),
    get_first_byte_ms: ObjectStoreLatencySchema.describe('GET: request start to the response headers (time to first byte)'),
    put_ms: ObjectStoreLatencySchema.describe('PUT: request start to the answer, payload waits excluded'),
  })
  .describe(
    "The object store's view from the client: requests, retries, failures by class and time to first byte. Storage latencies split host = request signing, device = the HTTP requests (every attempt and back-off)",
  );
export type ObjectStoreJson = z.output<typeof ObjectStoreSchema>;
