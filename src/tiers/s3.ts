// The S3 storage backend: one object per entry, `<prefix>kvc-<run id>-<key>.bin` (the file tier's
// entry names, file-names.ts), so a killed run's objects are found by the next run under the same
// prefix and removed only on request. It deletes only objects it wrote, all of them at close.
//
// An entry larger than MULTIPART_ABOVE goes up as a multipart upload of PART_BYTES parts, one after
// the other (the bytes come from one sequential ChunkSource); smaller ones in one PUT. Downloads stream
// to the sink as the socket delivers them. Nothing holds a whole entry in memory.
//
// Timing (IOTiming, ms): device = the wall time of the HTTP requests themselves (connect, send,
// the server's work, receive; every attempt of a retried request and the back-off between them);
// host = request signing (SigV4) and credentials. Waits for payload bytes (writes) and for the sink
// (reads) are in neither, as in the file tier. Time to first byte (request start to the response's
// headers, of a GET) is kept beside it in the backend's own histogram (ObjectStoreStats).
//
// Metadata calls (metadata-ops.ts): a pool's HEAD is a lookup, a DELETE (an eviction, a failed
// upload's parts) an unlink. A PUT is not one: it makes the object and writes it in one request, and
// is timed as the write it is; an object store has no rename, link or directory.
import { AlreadyPublishedError, IoAbortedError, EntryNotFoundError, timing } from './backend.js';
import type { ChunkSink, IOTiming, LeftBehind, PoolAccess, PoolProbe, ReadResult } from './backend.js';
import { poolBlockName } from './pool-names.js';
import { nextNonEmpty } from '../data/chunk-source.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { entryFileName } from './file-names.js';
import { S3Error, TransferStoppedError } from './s3-client.js';
import type { RequestTiming, S3Client, S3Request, S3Response } from './s3-client.js';
import { IGNORE_METADATA } from './metadata-ops.js';
import type { MetadataOp, MetadataOpSink } from './metadata-ops.js';
import { LatencySketch } from './s3-sketch.js';
import type { ObjectStoreStats, StorageBackend } from './storage-kind.js';
import { MiB } from '../util/units.js';
import { performance } from 'node:perf_hooks';

/** Entries above this size go up as multipart uploads (measured: docs/s3.md). */
export const MULTIPART_ABOVE = 256 * MiB;
/** Part size of a multipart upload (S3: at least 5 MiB, at most 10,000 parts). */
export const PART_BYTES = 64 * MiB;

export class S3Backend implements StorageBackend {
  readonly tier = 'storage' as const;
  private readonly sizes = new Map<string, number>();
  /** Objects whose write was cut or whose delete failed: deleted (again) at close. */
  private readonly abandoned = new Set<string>();
  private stopping = false;
  /** Aborted at the end of the run: every request in flight stops at once (S3Request.signal). */
  private readonly stop = new AbortController();
  private closed = false;
  private readonly firstByte = new LatencySketch();
  private readonly putTimes = new LatencySketch();
  private readonly failures = new Map<string, number>();
  private puts = 0;
  private multipartUploads = 0;
  private gets = 0;
  private deletes = 0;
  /** What the last close() or clear() could not delete. */
  private left: LeftBehind | undefined;

  constructor(
    private readonly client: S3Client,
    /** Key prefix of this backend's objects, '' or ending in '/'. */
    readonly prefix: string,
    readonly runId: string,
    /** Entries above this size go up as multipart uploads of `partBytes` parts. */
    readonly multipartAbove = MULTIPART_ABOVE,
    readonly partBytes = PART_BYTES,
    /** A shared pool's blocks (--kv-pool shared): pool names under the prefix, conditional PUTs, HEAD lookups. */
    private readonly poolOptions?: S3PoolOptions,
    /** Hears of each HEAD (lookup) and DELETE (unlink). */
    private readonly metadata: MetadataOpSink = IGNORE_METADATA,
  ) {
    if (poolOptions !== undefined) this.pool = this.poolAccess(poolOptions.openedAtMs);
  }

  /** Present in a shared pool. */
  readonly pool?: PoolAccess;

  /** The object that holds (or would hold) `key`. */
  objectKey(key: string): string {
    if (this.poolOptions !== undefined) return `${this.prefix}${poolBlockName(this.poolOptions.namespace, key)}`;
    return `${this.prefix}${entryFileName(this.runId, key)}`;
  }

  /**
   * A shared pool on an object store: a lookup is a HEAD (404: not there), a block another server
   * published is read by GET (404: gone meanwhile, a miss), and a PUT is conditional (If-None-Match: *):
   * a block published first by another writer answers 412 and is not rewritten. Objects appear whole,
   * so a reader never sees half of one.
   */
  private poolAccess(openedAtMs: number): PoolAccess {
    return {
      openedAtMs,
      lookup: async (key: string): Promise<PoolProbe> => {
        this.assertOpen();
        const t0 = performance.now();
        try {
          const res = await this.metadataRequest('lookup', { method: 'HEAD', key: this.objectKey(key) }, notFound);
          const t = res.timing;
          const size = Number(res.headers['content-length'] ?? '0');
          const modified = Date.parse(res.headers['last-modified'] ?? '');
          return {
            found: true,
            size,
            publishedAtMs: Number.isFinite(modified) ? modified : 0,
            timing: timing(t.signMs, t.totalMs - t.signMs - t.waitMs),
          };
        } catch (e) {
          // The answer "not there" is the lookup's result: its wall time is the store's (signing included, a few µs).
          if (notFound(e)) return { found: false, size: 0, publishedAtMs: 0, timing: timing(0, performance.now() - t0) };
          return this.counted(e);
        }
      },
      readPublished: (key: string, _size: number, sink?: ChunkSink) => this.readObject(key, sink), // the object says its size
      forget: (key: string) => {
        this.sizes.delete(key);
      },
    };
  }

  keys(): Iterable<string> {
    return this.sizes.keys();
  }

  sizeOf(key: string): number | undefined {
    return this.sizes.get(key);
  }

  /** See Backend.stopInFlight: a transfer waiting for a stalled store's answer stops too (its connection closed). */
  stopInFlight(): void {
    this.stopping = true;
    this.stop.abort();
  }

  stats(): ObjectStoreStats {
    return {
      requests: this.client.counters.requests,
      retries: this.client.counters.retries,
      puts: this.puts,
      multipartUploads: this.multipartUploads,
      gets: this.gets,
      deletes: this.deletes,
      failures: Object.fromEntries(this.failures),
      getFirstByteMs: this.firstByte.summary(),
      putMs: this.putTimes.summary(),
    };
  }

  /**
   * Sends a HEAD or DELETE and tells the metadata sink its time: signing and the HTTP exchange, every
   * attempt (the time a lookup's IOTiming gives), not the wait for a free connection. `answered`: a
   * rejection that is the store's answer (a HEAD's 404), timed from the call as the lookup is.
   */
  private async metadataRequest(op: MetadataOp, r: S3Request, answered: (e: unknown) => boolean = () => false): Promise<S3Response> {
    const t0 = performance.now();
    try {
      const res = await this.client.send(r);
      this.metadata(op, res.timing.totalMs - res.timing.waitMs, true);
      return res;
    } catch (e) {
      this.metadata(op, performance.now() - t0, answered(e));
      throw e;
    }
  }

  /** Counts a failure by its class and throws it on. */
  private counted(e: unknown): never {
    this.countFailure(e);
    throw e;
  }

  /** Counts a failure by its class (an S3Error's; others are not the store's). */
  private countFailure(e: unknown): void {
    if (e instanceof S3Error) this.failures.set(e.code, (this.failures.get(e.code) ?? 0) + 1);
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    this.assertOpen();
    if (this.stopping) throw new IoAbortedError(0);
    const object = this.objectKey(key);
    this.sizes.delete(key);
    const acc = { host: 0, device: 0 };
    const add = (t: RequestTiming): void => {
      acc.host += t.signMs;
      acc.device += t.totalMs - t.signMs - t.waitMs;
    };
    try {
      if (source.size > this.multipartAbove) await this.multipart(object, source, add);
      else {
        // In a shared pool, only if no one published it first (412 otherwise).
        const headers = this.poolOptions !== undefined ? { 'if-none-match': '*' } : undefined;
        const res = await this.client.send({
          method: 'PUT',
          key: object,
          body: source,
          signal: this.stop.signal,
          ...(headers !== undefined ? { headers } : {}),
        });
        add(res.timing);
        this.putTimes.add(res.timing.totalMs - res.timing.waitMs);
      }
      this.puts++;
    } catch (e) {
      if (this.poolOptions !== undefined && e instanceof S3Error && e.status === 412) {
        // Refused before the body (Expect: 100-continue): no bytes moved, and the object is the other writer's.
        throw new AlreadyPublishedError(0, timing(acc.host, acc.device));
      }
      this.abandoned.add(object); // a stopped or failed upload may have left an object: close() deletes it
      if (e instanceof TransferStoppedError) throw new IoAbortedError(e.bytes);
      return this.counted(e);
    }
    this.abandoned.delete(object);
    this.sizes.set(key, source.size);
    return timing(acc.host, acc.device);
  }

  /** Initiate, parts in order from the one source, complete; aborted on failure. */
  private async multipart(object: string, source: ChunkSource, add: (t: RequestTiming) => void): Promise<void> {
    const init = await this.client.send({ method: 'POST', key: object, query: { uploads: '' }, signal: this.stop.signal });
    add(init.timing);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
    if (uploadId === undefined) throw new S3Error(`S3 multipart upload of ${object}: no UploadId in the answer`, 'HTTP_5XX');
    this.multipartUploads++;
    const etags: string[] = [];
    try {
      for await (const [n, part] of partsOf(source, this.partBytes)) {
        const res = await this.client.send({
          method: 'PUT',
          key: object,
          query: { partNumber: String(n), uploadId },
          body: part,
          signal: this.stop.signal,
        });
        add(res.timing);
        etags.push(etagOf(res));
      }
      const xml = etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`).join('');
      const body = Buffer.from(`<CompleteMultipartUpload>${xml}</CompleteMultipartUpload>`);
      const done = await this.client.send({ method: 'POST', key: object, query: { uploadId }, body: bufferBody(body) });
      add(done.timing);
    } catch (e) {
      await this.metadataRequest('unlink', { method: 'DELETE', key: object, query: { uploadId } }).catch(() => undefined);
      throw e;
    }
  }

  async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    this.assertOpen();
    const size = this.sizes.get(key);
    if (size === undefined) throw new EntryNotFoundError(this.tier, key);
    return this.readObject(key, sink);
  }

  /** GETs `key`'s object; in a shared pool a missing one (removed by its publisher) is EntryNotFoundError. */
  private async readObject(key: string, sink?: ChunkSink): Promise<ReadResult> {
    this.assertOpen();
    const object = this.objectKey(key);
    let res: S3Response;
    try {
      res = await this.client.send({ method: 'GET', key: object, sink: sink ?? discard, signal: this.stop.signal });
    } catch (e) {
      if (e instanceof TransferStoppedError) return { timing: timing(0, 0), bytes: e.bytes };
      if (this.poolOptions !== undefined && e instanceof S3Error && e.status === 404) throw new EntryNotFoundError(this.tier, key);
      return this.counted(e);
    }
    this.gets++;
    this.firstByte.add(res.timing.firstByteMs);
    const t = res.timing;
    return { timing: timing(t.signMs, t.totalMs - t.signMs - t.waitMs), bytes: res.bytes };
  }

  async delete(key: string): Promise<void> {
    if (!this.sizes.delete(key)) return; // not ours: never touch it
    const object = this.objectKey(key);
    try {
      await this.metadataRequest('unlink', { method: 'DELETE', key: object });
      this.deletes++;
    } catch (e) {
      this.abandoned.add(object);
      this.counted(e);
    }
  }

  /** Deletes every object this backend wrote; what it could not delete is leftBehind() and the first failure is thrown. */
  async clear(): Promise<void> {
    const left = await this.deleteEverything();
    if (left !== undefined) throw new Error(`S3: ${left.count} object(s) not deleted from ${left.where}: ${left.why}`);
  }

  /**
   * Deletes every object this backend wrote (a KV cache does not outlive its run), then closes the
   * connections. What it could not delete is said by leftBehind(), not thrown: the run's results stand.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.poolOptions?.keep === true) this.sizes.clear(); // --keep-pool: published blocks stay for the next run
    try {
      await this.deleteEverything();
    } finally {
      this.client.close();
    }
  }

  /** After close() or clear(): the objects of this backend still in the bucket, where, and why; undefined: none. */
  leftBehind(): LeftBehind | undefined {
    return this.left;
  }

  /**
   * DELETEs the entries' objects and the abandoned ones (cut or failed writes), as many at once as the
   * client has connections; one refused DELETE does not stop the others. A failure the client already
   * retried (no answer, a reset, 5xx, SlowDown) means the store is not answering: nothing more is sent
   * (each DELETE would wait out the same retries, minutes on a stalled store), and what was not
   * deleted is left, counted (also as leftBehind()).
   */
  private async deleteEverything(): Promise<LeftBehind | undefined> {
    const entries = [...this.sizes.keys()].map((key) => this.objectKey(key));
    this.sizes.clear();
    const objects = [...new Set([...entries, ...this.abandoned])];
    this.abandoned.clear();
    let next = 0;
    let firstFailure: unknown;
    let storeDown = false;
    const failed: string[] = [];
    const worker = async (): Promise<void> => {
      while (!storeDown && next < objects.length) {
        const object = objects[next++] ?? '';
        try {
          await this.metadataRequest('unlink', { method: 'DELETE', key: object });
          this.deletes++;
        } catch (e) {
          if (notFound(e)) continue; // gone already (a cut upload left nothing; some stores answer 404): the aim
          failed.push(object);
          firstFailure ??= e;
          if (!(e instanceof S3Error) || STORE_NOT_ANSWERING.has(e.code)) storeDown = true;
          this.countFailure(e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.client.o.maxConnections, objects.length) }, worker));
    const notSent = objects.length - next;
    const count = failed.length + notSent;
    this.left = undefined;
    if (count === 0) return undefined;
    // A shared pool's blocks stay as published blocks (a later run reads them); a run's own objects are stale entries.
    const remedy =
      this.poolOptions !== undefined
        ? 'they stay in the pool as published blocks, read by later runs'
        : 'give the next run on this prefix --remove-stale-entries to remove those still there';
    const cause = firstFailure instanceof Error ? firstFailure.message : String(firstFailure);
    const why = `${failed.length} DELETE(s) failed, the first: ${cause}${notSent > 0 ? `; ${notSent} not sent, the store not answering` : ''}`;
    this.left = { count, where: `s3://${this.client.o.bucket}/${this.prefix}`, why, remedy };
    // The failed ones may still be there: a later clear() tries them again.
    for (const object of failed) this.abandoned.add(object);
    for (const object of objects.slice(next)) this.abandoned.add(object);
    return this.left;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('S3 tier is closed');
  }
}

/** Failure classes after which the store is taken as not answering (the client retried each already). */
const STORE_NOT_ANSWERING: ReadonlySet<string> = new Set(['ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'HTTP_5XX', 'SLOWDOWN']);

/** A shared pool's objects: their namespace, whether they outlive the run, and the pool's clock at open. */
export interface S3PoolOptions {
  readonly namespace: string;
  readonly keep: boolean;
  /** The store's clock when this backend opened the pool (ms, whole seconds: Last-Modified's resolution). */
  readonly openedAtMs: number;
}

/** A HEAD's 404: the object is not there, which is a lookup's answer, not a failure. */
function notFound(e: unknown): boolean {
  return e instanceof S3Error && e.status === 404;
}

function discard(): void {
  // a hit read moves the bytes and drops them, as the file tier's read without a sink
}

function etagOf(res: S3Response): string {
  const e = res.headers.etag;
  if (typeof e !== 'string') throw new S3Error('S3 upload part: no ETag in the answer', 'HTTP_5XX');
  return e;
}

function bufferBody(b: Buffer): { size: number; chunks(): AsyncIterable<Uint8Array> } {
  return {
    size: b.length,
    chunks: async function* () {
      yield b;
    },
  };
}

/**
 * Splits one sequential source into consecutive parts of `partBytes` (the last shorter): each part's
 * chunks are the source's, cut where a part ends. Parts must be consumed in order, each to its end;
 * the last part's end ends the source (a payload source then gives its slot back), and so does
 * leaving the parts early (a failed or stopped upload).
 */
export async function* partsOf(source: ChunkSource, partBytes: number): AsyncGenerator<[number, ChunkSource]> {
  const it = source.chunks()[Symbol.asyncIterator]();
  let rest: Uint8Array | undefined;
  let ended = false;
  const count = Math.max(1, Math.ceil(source.size / partBytes));
  try {
    for (let n = 1; n <= count; n++) {
      const size = Math.min(partBytes, source.size - (n - 1) * partBytes);
      const last = n === count;
      const part: ChunkSource = {
        size,
        chunks: async function* () {
          let left = size;
          while (left > 0) {
            let chunk = rest;
            rest = undefined;
            if (chunk === undefined) {
              const next = await it.next();
              if (next.done === true) {
                ended = true;
                throw new RangeError(`the entry's source ended ${left} bytes before its size`);
              }
              chunk = next.value;
            }
            if (chunk.length > left) {
              rest = chunk.subarray(left);
              chunk = chunk.subarray(0, left);
            }
            left -= chunk.length;
            yield chunk;
          }
          // Asked for more after the last part's last chunk was sent: the source must be over.
          if (last && rest === undefined) ended = (await nextNonEmpty(it)) === undefined;
          if (last && !ended) throw new RangeError(`the entry's source has more than its ${source.size} bytes`);
        },
      };
      yield [n, part];
    }
  } finally {
    if (!ended) await it.return?.();
  }
}
