// A tiny in-process S3 server for the S3 tier's unit tests (no radosgw needed): objects in a Map,
// path-style addressing, PUT / GET / DELETE / ListObjectsV2 / multipart, 100-continue answered, and
// injectable faults (an answer instead of the real one, per request). It checks no signature; the
// tests against radosgw (test/e2e/s3.test.ts) do.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  readonly method: string;
  readonly bucket: string;
  readonly key: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
}

/** A fault: status and S3 error code to answer with instead of serving the request; undefined serves it. */
export type Fault = (r: FakeRequest) => { readonly status: number; readonly code: string } | undefined;

export class FakeS3 {
  readonly objects = new Map<string, Buffer>();
  readonly buckets = new Set<string>();
  readonly log: FakeRequest[] = [];
  fault: Fault = () => undefined;
  /** Body bytes after which the server drops the connection (a request cut mid-body); undefined: never. */
  cut: (r: FakeRequest) => number | undefined = () => undefined;
  /** A stalled store: takes the request's head and never answers (no 100-continue for a body); false: serves it. */
  stall: (r: FakeRequest) => boolean = () => false;
  /** Requests left unanswered (stall). */
  readonly stalled: FakeRequest[] = [];
  /** Milliseconds to wait, once a request is whole, before serving it (a slow answer). */
  answerDelayMs: (r: FakeRequest) => number = () => 0;
  /** Requests received whole (their body too), before any answer. */
  readonly received: FakeRequest[] = [];
  private readonly uploads = new Map<string, Map<number, Buffer>>();
  private uploadSeq = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(buckets: readonly string[] = ['b']): Promise<FakeS3> {
    const server = http.createServer();
    const fake = new FakeS3(server);
    for (const b of buckets) fake.buckets.add(b);
    server.on('checkContinue', (req, res) => fake.handle(req, res, true));
    server.on('request', (req, res) => fake.handle(req, res, false));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const r: FakeRequest = {
      method: req.method ?? '',
      bucket,
      key: decodeURIComponent(rest.join('/')),
      query: url.searchParams,
      headers: req.headers,
    };
    this.log.push(r);
    const fault = this.fault(r);
    if (fault !== undefined) {
      answer(res, fault.status, fault.code);
      return;
    }
    if (this.stall(r)) {
      this.stalled.push(r);
      return;
    }
    if (expectsContinue) res.writeContinue();
    const parts: Buffer[] = [];
    const cutAt = this.cut(r);
    let received = 0;
    req.on('data', (d: Buffer) => {
      parts.push(d);
      received += d.length;
      if (cutAt !== undefined && received >= cutAt) req.socket.destroy();
    });
    req.on('end', () => {
      this.received.push(r);
      const delay = this.answerDelayMs(r);
      if (delay > 0) setTimeout(() => this.serve(r, Buffer.concat(parts), res), delay);
      else this.serve(r, Buffer.concat(parts), res);
    });
  }

  private serve(r: FakeRequest, body: Buffer, res: http.ServerResponse): void {
    if (r.key === '' && r.method === 'PUT') {
      this.buckets.add(r.bucket);
      {
        res.end();
        return;
      }
    }
    if (!this.buckets.has(r.bucket)) {
      answer(res, 404, 'NoSuchBucket');
      return;
    }
    const name = `${r.bucket}/${r.key}`;
    if (r.key === '' && r.method === 'GET') {
      this.list(r, res);
      return;
    }
    if (r.method === 'POST' && r.query.has('uploads')) {
      const id = `u${++this.uploadSeq}`;
      this.uploads.set(id, new Map());
      {
        res.end(`<InitiateMultipartUploadResult><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
        return;
      }
    }
    const uploadId = r.query.get('uploadId');
    if (uploadId !== null) {
      this.multipart(r, uploadId, name, body, res);
      return;
    }
    if (r.method === 'PUT') {
      this.objects.set(name, body);
      res.setHeader('etag', `"e${body.length}"`);
      {
        res.end();
        return;
      }
    }
    if (r.method === 'DELETE') {
      this.objects.delete(name);
      res.statusCode = 204;
      {
        res.end();
        return;
      }
    }
    const obj = this.objects.get(name);
    if (obj === undefined) {
      answer(res, 404, 'NoSuchKey');
      return;
    }
    res.end(obj);
  }

  private multipart(r: FakeRequest, id: string, name: string, body: Buffer, res: http.ServerResponse): void {
    const parts = this.uploads.get(id);
    if (parts === undefined) {
      answer(res, 404, 'NoSuchUpload');
      return;
    }
    if (r.method === 'PUT') {
      parts.set(Number(r.query.get('partNumber')), body);
      res.setHeader('etag', `"p${r.query.get('partNumber') ?? ''}"`);
      {
        res.end();
        return;
      }
    }
    if (r.method === 'DELETE') {
      this.uploads.delete(id);
      res.statusCode = 204;
      {
        res.end();
        return;
      }
    }
    const order = [...parts.keys()].sort((a, b) => a - b);
    this.objects.set(name, Buffer.concat(order.map((n) => parts.get(n) ?? Buffer.alloc(0))));
    this.uploads.delete(id);
    res.end('<CompleteMultipartUploadResult></CompleteMultipartUploadResult>');
  }

  private list(r: FakeRequest, res: http.ServerResponse): void {
    const prefix = r.query.get('prefix') ?? '';
    const keys = [...this.objects.keys()]
      .filter((k) => k.startsWith(`${r.bucket}/${prefix}`))
      .map((k) => k.slice(r.bucket.length + 1))
      .sort();
    const contents = keys.map(
      (k) => `<Contents><Key>${k}</Key><Size>${this.objects.get(`${r.bucket}/${k}`)?.length ?? 0}</Size></Contents>`,
    );
    res.end(`<ListBucketResult><IsTruncated>false</IsTruncated>${contents.join('')}</ListBucketResult>`);
  }
}

function answer(res: http.ServerResponse, status: number, code: string): void {
  res.statusCode = status;
  res.setHeader('connection', 'close'); // the request's body was not read
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
}
