// The S3 tier's HTTP client: SigV4-signed requests (@smithy/signature-v4, the AWS SDK's own signer)
// over node:http(s) with a keep-alive agent, credentials from the AWS default chain (environment
// variables, then profile files; never a flag). Our own client rather than the SDK's S3Client because a
// payload chunk is valid only until the next one is asked for (data/chunk-source.ts): a body is written
// chunk by chunk, each write awaited until the socket has taken it, which the SDK's piped bodies cannot
// promise without copying every chunk. Also: time to first byte from the response's headers, and the
// attempts of a retried request all inside its latency.
//
// TLS endpoints: the server's certificate is always verified (rejectUnauthorized is set, so not even
// NODE_TLS_REJECT_UNAUTHORIZED=0 turns it off), against Node's CA bundle, NODE_EXTRA_CA_CERTS and the
// CAs of --s3-ca-file; a certificate that cannot be verified fails the request with its OpenSSL code
// (certificateFailure names it), never retried.
//
// Failures carry a `code` the Recorder counts by (FailureClass): HTTP_403, HTTP_404, HTTP_5XX,
// SLOWDOWN (503 SlowDown), ECONNRESET, ECONNREFUSED, ETIMEDOUT, EDQUOT (QuotaExceeded: the bucket is
// full, which ends the run as a full disk does), or another errno.
import { createHash, createHmac, X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { SignatureV4 } from '@smithy/signature-v4';
import { readInputText } from '../util/input-file.js';
import { Semaphore } from '../util/lock.js';
import { RawGetPool } from './s3-get.js';

/** Access key, secret and optional session token; never printed, never in results. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export type CredentialSource = () => Promise<S3Credentials>;

/** Where the bucket is and how requests are made. */
export interface S3ClientOptions {
  /** http(s)://host[:port] of the service. */
  readonly endpoint: URL;
  readonly bucket: string;
  readonly region: string;
  /** Bucket in the path (custom endpoints) rather than in the host name. */
  readonly pathStyle: boolean;
  readonly credentials: CredentialSource;
  /** Requests in flight at most (the agent's sockets). */
  readonly maxConnections: number;
  /** A request whose socket is silent this long fails with ETIMEDOUT. */
  readonly idleTimeoutMs: number;
  /** Tries per request, the first included. */
  readonly maxAttempts: number;
  /** First back-off before a retry; doubled each time. */
  readonly backoffMs: number;
  /** TLS: the CAs to verify the server's certificate against (PEM); absent: Node's own store (its bundle and NODE_EXTRA_CA_CERTS). */
  readonly ca?: readonly string[];
}

/** The classes an S3 failure is counted under (see the header). */
export type S3FailureCode = 'HTTP_403' | 'HTTP_404' | 'HTTP_5XX' | 'SLOWDOWN' | 'ECONNRESET' | 'ECONNREFUSED' | 'ETIMEDOUT' | 'EDQUOT';

/** A failed S3 request: its HTTP status and S3 error code when the server answered. */
export class S3Error extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status?: number,
    readonly s3Code?: string,
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

/** Errno codes of a connection that went wrong; anything else is passed on as it is. */
const CONNECTION_CODES: Readonly<Record<string, S3FailureCode>> = {
  ECONNRESET: 'ECONNRESET',
  EPIPE: 'ECONNRESET',
  ECONNREFUSED: 'ECONNREFUSED',
  ETIMEDOUT: 'ETIMEDOUT',
};

function s3CodeOf(body: string): string | undefined {
  return /<Code>([^<]{1,100})<\/Code>/.exec(body)?.[1];
}

/** The failure class of an answered request that was not a success. */
export function classOfStatus(status: number, s3Code: string | undefined): string {
  if (s3Code === 'SlowDown' || status === 503) return 'SLOWDOWN';
  if (s3Code === 'QuotaExceeded') return 'EDQUOT';
  if (status === 403) return 'HTTP_403';
  if (status === 404) return 'HTTP_404';
  if (status >= 500) return 'HTTP_5XX';
  return `HTTP_${status}`;
}

function errorOfResponse(method: string, key: string, status: number, body: string): S3Error {
  const s3Code = s3CodeOf(body);
  const what = s3Code !== undefined ? `${status} ${s3Code}` : `HTTP ${status}`;
  return new S3Error(`S3 ${method} ${key === '' ? '(bucket)' : key} failed: ${what}`, classOfStatus(status, s3Code), status, s3Code);
}

function errorOfTransport(method: string, key: string, e: unknown): S3Error {
  const errno = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'other';
  const code = CONNECTION_CODES[errno] ?? errno;
  const detail = e instanceof Error ? e.message : String(e);
  return new S3Error(`S3 ${method} ${key === '' ? '(bucket)' : key} failed: ${detail}`, code);
}

/** A CA file holds a few certificates; more than this is not a PEM bundle. */
const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The PEM certificates of a CA file, each checked to parse; or what is wrong with the file. */
function caCertificates(path: string, what: string): { readonly pems: string[] } | { readonly problem: string } {
  const read = readInputText(path, { maxBytes: MAX_CA_FILE_BYTES });
  if (!read.ok) return { problem: `${what} '${path}' cannot be read: ${read.problem}` };
  const pems = read.text.match(PEM_CERTIFICATE) ?? [];
  if (pems.length === 0) return { problem: `${what} '${path}' holds no PEM certificate (-----BEGIN CERTIFICATE----- …)` };
  for (const [i, pem] of pems.entries()) {
    try {
      new X509Certificate(pem);
    } catch (e) {
      return { problem: `${what} '${path}': certificate ${i + 1} does not parse (${e instanceof Error ? e.message : String(e)})` };
    }
  }
  return { pems };
}

/**
 * The CAs a TLS endpoint is verified against when --s3-ca-file is given: Node's bundle, the file of
 * NODE_EXTRA_CA_CERTS (which Node adds only when no CA list is passed) and the file's own, so the file
 * adds trust and takes none away. Or the one problem with either file (exit 2 at start).
 */
export function trustedCas(caFile: string, env: NodeJS.ProcessEnv = process.env): { readonly ca: string[] } | { readonly problem: string } {
  const own = caCertificates(caFile, '--s3-ca-file');
  if ('problem' in own) return own;
  const extraPath = env.NODE_EXTRA_CA_CERTS;
  const extra = extraPath !== undefined && extraPath !== '' ? caCertificates(extraPath, 'NODE_EXTRA_CA_CERTS') : { pems: [] };
  if ('problem' in extra) return extra;
  return { ca: [...rootCertificates, ...extra.pems, ...own.pems] };
}

/** OpenSSL's verification codes (as Node reports them) and Node's own host-name check: the certificate was not trusted. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_REJECTED',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The words of a failure to verify the server's TLS certificate (code: OpenSSL's reason), or undefined for any other failure. */
export function certificateFailure(e: unknown): string | undefined {
  if (!(e instanceof S3Error) || !CERTIFICATE_CODES.has(e.code)) return undefined;
  const reason = e.message.replace(/^S3 \S+ \S+ failed: /, '');
  return `${e.code}: ${reason}`;
}

/** Worth another try: the server or the connection failed, not the request. */
export function isRetryable(e: unknown): boolean {
  if (!(e instanceof S3Error)) return false;
  return ['HTTP_5XX', 'SLOWDOWN', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT'].includes(e.code);
}

/** SHA-256 and HMAC-SHA-256 from node:crypto in the shape the signer asks for. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(d: SourceData): string | Uint8Array {
  if (typeof d === 'string') return d;
  return d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {
    throw new Error('not used by the signer');
  }
}

/** A body written chunk by chunk: each chunk is valid only until the next is asked for. */
export interface RequestBody {
  readonly size: number;
  chunks(): AsyncIterable<Uint8Array>;
}

/** What one request took, in ms: the whole (every attempt and back-off), the signing, the waits for body chunks or the sink. */
export interface RequestTiming {
  totalMs: number;
  signMs: number;
  /** Waiting for the body's next chunk or for the sink: not the store's time. */
  waitMs: number;
  /** Request start to the response's headers, of the last attempt. */
  firstByteMs: number;
  /** Attempts made (1 = no retry). */
  attempts: number;
  /** Waiting for a free connection before the request started (outside totalMs). */
  queuedMs: number;
}

export interface S3Request {
  readonly method: 'GET' | 'PUT' | 'POST' | 'HEAD' | 'DELETE';
  /** Object key ('' = the bucket itself). */
  readonly key: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Extra headers, signed with the rest (a conditional PUT's If-None-Match). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: RequestBody;
  /** Receives the response body of a success in order (GET); absent: the body is collected as text. */
  readonly sink?: (chunk: Uint8Array) => void | Promise<void>;
  /**
   * The end of the run: when it aborts, a request not yet made is not made and one in flight stops at
   * once, its connection closed, even while it waits for a stalled store's first answer or byte
   * (TransferStoppedError with the body bytes moved so far: a read returns what it had, a write throws).
   * A PUT whose body is all sent still gets its answer: its bytes are on the server, and a write cut
   * then would count none of them (a replay's aborted writes count no bytes).
   */
  readonly signal?: AbortSignal;
}

export interface S3Response {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body as text when no sink took it (XML of listings, multipart uploads). */
  readonly text: string;
  /** Body bytes handed to the sink. */
  readonly bytes: number;
  readonly timing: RequestTiming;
}

/** Whether the run's end has stopped `r` (a function: its answer changes across awaits). */
function isStopped(r: S3Request): boolean {
  return r.signal?.aborted === true;
}

/** The transfer stopped at the end of the run. */
export class TransferStoppedError extends Error {
  constructor(readonly bytes: number) {
    super(`transfer stopped after ${bytes} bytes`);
    this.name = 'TransferStoppedError';
  }
}

/** Counts kept by the client for the results (retries, responses by class). */
export interface ClientCounters {
  requests: number;
  retries: number;
}

/** S3 object keys are escaped per RFC 3986 segment by segment; '/' separates them. */
function escapeKey(key: string): string {
  return key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

export class S3Client {
  readonly counters: ClientCounters = { requests: 0, retries: 0 };
  private readonly agent: http.Agent;
  private readonly signer: SignatureV4;
  private readonly secure: boolean;
  private readonly host: string;
  private readonly basePath: string;
  private readonly inFlight: Semaphore;
  /** Object downloads over plain HTTP (s3-get.ts); absent for TLS endpoints, which use node:https. */
  private readonly raw: RawGetPool | undefined;

  constructor(readonly o: S3ClientOptions) {
    this.secure = o.endpoint.protocol === 'https:';
    this.inFlight = new Semaphore(o.maxConnections);
    const agentOptions = { keepAlive: true, maxSockets: o.maxConnections, maxFreeSockets: o.maxConnections };
    this.agent = this.secure
      ? new https.Agent({ ...agentOptions, rejectUnauthorized: true, ...(o.ca !== undefined ? { ca: [...o.ca] } : {}) })
      : new http.Agent(agentOptions);
    this.host = o.pathStyle ? o.endpoint.host : `${o.bucket}.${o.endpoint.host}`;
    this.basePath = o.pathStyle ? `/${encodeURIComponent(o.bucket)}` : '';
    const port = o.endpoint.port === '' ? 80 : Number(o.endpoint.port);
    this.raw = this.secure
      ? undefined
      : new RawGetPool(o.pathStyle ? o.endpoint.hostname : `${o.bucket}.${o.endpoint.hostname}`, port, o.idleTimeoutMs);
    this.signer = new SignatureV4({
      service: 's3',
      region: o.region,
      credentials: o.credentials,
      sha256: NodeSha256,
      uriEscapePath: false, // S3 signs the path as sent, not escaped twice
      applyChecksum: false,
    });
  }

  /** The request, retried while it fails in a retryable way and nothing of a one-pass body was used. */
  async send(r: S3Request): Promise<S3Response> {
    // At most maxConnections requests in flight; waiting for a turn is the harness's limit, not the store's time.
    const q0 = performance.now();
    await this.inFlight.acquire();
    const t0 = performance.now();
    try {
      return await this.sendHolding(r, t0, t0 - q0);
    } finally {
      this.inFlight.release();
    }
  }

  private async sendHolding(r: S3Request, t0: number, queuedMs: number): Promise<S3Response> {
    const timing: RequestTiming = { totalMs: 0, signMs: 0, waitMs: 0, firstByteMs: 0, attempts: 0, queuedMs };
    for (;;) {
      timing.attempts++;
      this.counters.requests++;
      const used = { body: false };
      try {
        const res = await this.attempt(r, timing, used);
        timing.totalMs = performance.now() - t0;
        return { ...res, timing };
      } catch (e) {
        // A body chunk once taken cannot be asked for again (a demotion's source is one pass).
        const again = timing.attempts < this.o.maxAttempts && isRetryable(e) && !used.body;
        if (!again) throw e;
        // The run ended while this request waited to be tried again: cut by the end, not failed.
        if (isStopped(r)) throw new TransferStoppedError(0);
        this.counters.retries++;
        await sleepMs(this.o.backoffMs * 2 ** (timing.attempts - 1) * (0.5 + Math.random()));
        if (isStopped(r)) throw new TransferStoppedError(0);
      }
    }
  }

  private pathOf(key: string, query: Readonly<Record<string, string>> | undefined): string {
    const path = key === '' ? this.basePath || '/' : `${this.basePath}/${escapeKey(key)}`;
    const q = query === undefined ? '' : new URLSearchParams(query).toString().replace(/\+/g, '%20');
    return q === '' ? path : `${path}?${q}`;
  }

  private async sign(r: S3Request, timing: RequestTiming): Promise<Record<string, string>> {
    const s0 = performance.now();
    const headers: Record<string, string> = { ...(r.headers ?? {}), host: this.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
    if (r.body !== undefined) {
      headers['content-length'] = String(r.body.size);
      // The server refuses (503 SlowDown, 403) before any body byte is sent, so such a PUT can be retried.
      if (r.body.size > 0) headers.expect = '100-continue';
    }
    const path = key0(this.basePath, r.key);
    const signed = await this.signer.sign({
      method: r.method,
      protocol: this.o.endpoint.protocol,
      hostname: this.host,
      path,
      query: { ...(r.query ?? {}) },
      headers,
    });
    timing.signMs += performance.now() - s0;
    return signed.headers;
  }

  private async attempt(r: S3Request, timing: RequestTiming, used: { body: boolean }): Promise<Omit<S3Response, 'timing'>> {
    if (isStopped(r)) throw new TransferStoppedError(0);
    if (r.method === 'GET' && r.sink !== undefined && this.raw !== undefined) return this.rawGet(this.raw, r, r.sink, timing);
    const headers = await this.sign(r, timing);
    const a0 = performance.now();
    const transport = this.secure ? https : http;
    const req = transport.request({
      method: r.method,
      host: this.o.endpoint.hostname,
      port: this.o.endpoint.port === '' ? undefined : Number(this.o.endpoint.port),
      path: this.pathOf(r.key, r.query),
      headers,
      agent: this.agent,
      timeout: this.o.idleTimeoutMs,
    });
    // Body bytes sent (PUT) or received (GET) so far: what a stopped transfer moved; `whole`: a body all sent.
    const moved = { bytes: 0, whole: false };
    // A body all sent is on the server: its answer is waited for (the write counts), as before the stop.
    const stop = (): void => {
      if (!moved.whole) req.destroy(new TransferStoppedError(moved.bytes));
    };
    r.signal?.addEventListener('abort', stop, { once: true });
    const failed = new Promise<never>((_, reject) => {
      req.on('error', (e) =>
        reject(e instanceof TransferStoppedError ? new TransferStoppedError(moved.bytes) : errorOfTransport(r.method, r.key, e)),
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${this.o.idleTimeoutMs} ms`), { code: 'ETIMEDOUT' })));
    });
    failed.catch(() => undefined); // observed below through the races
    const response = new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    try {
      if (r.body === undefined || r.body.size === 0) req.end();
      else {
        const go = await Promise.race([
          new Promise<'continue'>((resolve) => req.once('continue', () => resolve('continue'))),
          response.then(() => 'answered' as const),
          failed,
        ]);
        if (go === 'continue') await this.writeBody(req, r, timing, used, failed, moved);
      }
      const res = await Promise.race([response, failed]);
      timing.firstByteMs = performance.now() - a0;
      return await this.readResponse(req, res, r, timing, failed, moved);
    } catch (e) {
      req.destroy();
      throw e;
    } finally {
      r.signal?.removeEventListener('abort', stop);
    }
  }

  /** Streams the body: each chunk written and flushed to the socket before the next is asked for. */
  private async writeBody(
    req: http.ClientRequest,
    r: S3Request,
    timing: RequestTiming,
    used: { body: boolean },
    failed: Promise<never>,
    moved: { bytes: number; whole: boolean },
  ) {
    const body = r.body;
    if (body === undefined) return;
    const it = body.chunks()[Symbol.asyncIterator]();
    for (;;) {
      const w0 = performance.now();
      const next = await it.next();
      timing.waitMs += performance.now() - w0;
      if (next.done === true) break;
      used.body = true;
      if (isStopped(r)) {
        await it.return?.();
        throw new TransferStoppedError(moved.bytes);
      }
      const chunk = next.value;
      try {
        await Promise.race([new Promise<void>((resolve, reject) => req.write(chunk, (e) => (e ? reject(e) : resolve()))), failed]);
      } catch (e) {
        // The source's chunk goes back (a payload slot) only once the socket can no longer read it.
        req.destroy();
        await it.return?.();
        // (a write's own EPIPE, ECONNRESET; a stop is the end of the run's, not a failure)
        throw e instanceof S3Error || e instanceof TransferStoppedError ? e : errorOfTransport(r.method, r.key, e);
      }
      moved.bytes += chunk.length;
    }
    req.end();
    moved.whole = true;
  }

  private async readResponse(
    req: http.ClientRequest,
    res: http.IncomingMessage,
    r: S3Request,
    timing: RequestTiming,
    failed: Promise<never>,
    moved: { bytes: number },
  ): Promise<Omit<S3Response, 'timing'>> {
    const status = res.statusCode ?? 0;
    const ok = status >= 200 && status < 300;
    const sink = ok ? r.sink : undefined;
    let bytes = 0;
    const texts: Buffer[] = [];
    // 'data' events rather than async iteration: a GET of 1 GiB is ~16,000 socket reads, and a promise
    // per read cost ~5× curl's CPU per GiB (bench:s3). The stream pauses only while a sink's promise is pending.
    const reading = new Promise<boolean>((resolve, reject) => {
      res.on('data', (chunk: Buffer) => {
        if (sink === undefined) return void texts.push(chunk);
        if (isStopped(r)) {
          req.destroy();
          return resolve(true);
        }
        bytes += chunk.length;
        moved.bytes = bytes;
        const w0 = performance.now();
        const pending = sink(chunk);
        if (pending === undefined) return void (timing.waitMs += performance.now() - w0);
        res.pause();
        pending.then(
          () => {
            timing.waitMs += performance.now() - w0;
            res.resume();
          },
          (e: unknown) => {
            req.destroy();
            reject(e instanceof Error ? e : new Error(String(e)));
          },
        );
      });
      res.on('end', () => resolve(false));
      res.on('error', (e) => reject(errorOfTransport(r.method, r.key, e)));
    });
    const stopped = await Promise.race([reading, failed]);
    if (stopped) throw new TransferStoppedError(bytes);
    const text = Buffer.concat(texts).toString('utf8');
    if (!ok) throw errorOfResponse(r.method, r.key, status, text);
    return { status, headers: res.headers, text, bytes };
  }

  /** An object download through the raw GET path: same signing, failures and timing as the others. */
  private async rawGet(
    raw: RawGetPool,
    r: S3Request,
    sink: (chunk: Uint8Array) => void | Promise<void>,
    timing: RequestTiming,
  ): Promise<Omit<S3Response, 'timing'>> {
    const headers = await this.sign(r, timing);
    let res;
    try {
      res = await raw.get(this.pathOf(r.key, r.query), headers, sink, r.signal);
    } catch (e) {
      throw errorOfTransport(r.method, r.key, e);
    }
    timing.firstByteMs = res.firstByteMs;
    timing.waitMs += res.waitMs;
    if (res.stopped) throw new TransferStoppedError(res.bytes);
    if (res.status < 200 || res.status >= 300) throw errorOfResponse(r.method, r.key, res.status, res.text);
    return { status: res.status, headers: res.headers, text: '', bytes: res.bytes };
  }

  /** Closes the idle connections. */
  close(): void {
    this.agent.destroy();
    this.raw?.close();
  }
}

/** The canonical path the signer sees: the same escaping as the request line. */
function key0(basePath: string, key: string): string {
  return key === '' ? basePath || '/' : `${basePath}/${escapeKey(key)}`;
}
