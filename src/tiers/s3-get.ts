// Object downloads (GET) over plain-HTTP keep-alive sockets read into one reused buffer (net's
// `onread`), for the S3 tier's hit reads. Why not node:http: its parser and streams cost ~1.8 CPU s per
// GiB here against curl's ~0.4, and on a loaded host that CPU became bandwidth (a 256 MiB GET at 0.4–0.9×
// curl's MiB/s); this path costs ~0.7 s/GiB and matches curl (bench:s3, docs/s3.md). It speaks only what
// a GET of an object needs: one request, a status line, headers, a Content-Length body. Uploads, TLS
// endpoints and everything else go through node:http (s3-client.ts).
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/** Bytes read per socket read: the buffer every body byte passes through, handed to the sink as a view. */
const READ_BYTES = 1024 * 1024;
/** A response head larger than this is not an S3 answer. */
const MAX_HEAD_BYTES = 64 * 1024;

export interface RawGetResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body of an answer that was not a success, as text (an S3 error document). */
  readonly text: string;
  /** Body bytes handed to the sink. */
  readonly bytes: number;
  /** Request start to the end of the response head. */
  readonly firstByteMs: number;
  /** Time in the sink (not the store's). */
  readonly waitMs: number;
  /** The transfer was stopped (`stopped()` turned true): `bytes` is what arrived before. */
  readonly stopped: boolean;
}

/** A failure of the socket, with an errno code like net's. */
function socketError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** What one socket is doing now; the socket's `onread` callback forwards to it. */
interface Exchange {
  onBytes(view: Uint8Array): void;
  onEnd(e: Error): void;
}

interface PooledSocket {
  readonly socket: net.Socket;
  exchange: Exchange | undefined;
  /** Settles when the sink is done with the view of the socket's buffer it was handed; undefined: not holding one. */
  sinkHolding: Promise<void> | undefined;
}

/** Keep-alive sockets to one host for GETs; at most `max` open, idle ones reused. */
export class RawGetPool {
  private readonly idle: PooledSocket[] = [];
  private readonly buffers: Buffer[] = [];
  private closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly idleTimeoutMs: number,
  ) {}

  /**
   * GET `path` with `headers` (signed); body bytes to `sink`, which may make the socket wait by returning
   * a promise. When `signal` aborts (the end of the run), the GET stops at once with what it had.
   */
  async get(
    path: string,
    headers: Readonly<Record<string, string>>,
    sink: (chunk: Uint8Array) => void | Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<RawGetResult> {
    const pooled = this.idle.pop() ?? this.connect();
    const head = [`GET ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    const t0 = performance.now();
    try {
      const result = await this.exchange(pooled, head, sink, signal, t0);
      if (!result.stopped && result.headers.connection !== 'close' && !this.closed) this.idle.push(pooled);
      else pooled.socket.destroy();
      return result;
    } catch (e) {
      pooled.socket.destroy();
      throw e;
    }
  }

  private connect(): PooledSocket {
    const buffer = this.buffers.pop() ?? Buffer.allocUnsafe(READ_BYTES);
    const pooled: PooledSocket = {
      socket: net.connect({
        host: this.host,
        port: this.port,
        onread: {
          buffer,
          callback: (n: number, buf: Uint8Array) => {
            pooled.exchange?.onBytes(buf.subarray(0, n));
            return true; // keep reading; a sink that must be waited for pauses the socket itself
          },
        },
      }),
      exchange: undefined,
      sinkHolding: undefined,
    };
    const s = pooled.socket;
    s.setNoDelay(true);
    s.setTimeout(this.idleTimeoutMs, () => s.destroy(socketError(`no answer within ${this.idleTimeoutMs} ms`, 'ETIMEDOUT')));
    s.on('error', (e) => pooled.exchange?.onEnd(e));
    s.on('close', () => {
      pooled.exchange?.onEnd(socketError('the server closed the connection', 'ECONNRESET'));
      const at = this.idle.indexOf(pooled);
      if (at >= 0) this.idle.splice(at, 1);
      // A sink still working on a view of the buffer (the socket timed out or failed meanwhile) keeps it:
      // another socket reading into it now would change the bytes under the sink.
      const giveBack = (): void => void this.buffers.push(buffer);
      if (pooled.sinkHolding === undefined) giveBack();
      else void pooled.sinkHolding.then(giveBack);
    });
    return pooled;
  }

  private exchange(
    pooled: PooledSocket,
    head: string,
    sink: (chunk: Uint8Array) => void | Promise<void>,
    signal: AbortSignal | undefined,
    t0: number,
  ): Promise<RawGetResult> {
    const s = pooled.socket;
    let stopNow = (): void => undefined;
    const exchanged = new Promise<RawGetResult>((resolve, reject) => {
      let headBytes: Buffer[] = [];
      let headLength = 0;
      let status = 0;
      let headers: Record<string, string> = {};
      let want = -1; // body bytes to come; -1 while the head is read
      let bytes = 0;
      let waitMs = 0;
      let firstByteMs = 0;
      const errorText: Buffer[] = [];
      let settled = false;
      const finish = (r: Omit<RawGetResult, 'headers' | 'status' | 'firstByteMs' | 'waitMs'>): void => {
        settled = true;
        pooled.exchange = undefined;
        resolve({ status, headers, firstByteMs, waitMs, ...r });
      };
      const body = (view: Uint8Array): void => {
        const piece = view.subarray(0, Math.min(view.length, want - bytes - errorText.reduce((n, b) => n + b.length, 0)));
        if (status < 200 || status >= 300) {
          errorText.push(Buffer.from(piece));
          if (errorText.reduce((n, b) => n + b.length, 0) >= want)
            finish({ text: Buffer.concat(errorText).toString('utf8'), bytes: 0, stopped: false });
          return;
        }
        if (signal?.aborted === true) return finish({ text: '', bytes, stopped: true });
        bytes += piece.length;
        const w0 = performance.now();
        const pending = sink(piece);
        const done = (): void => {
          waitMs += performance.now() - w0;
          if (bytes >= want) finish({ text: '', bytes, stopped: false });
        };
        if (pending === undefined) return done();
        s.pause();
        const holding = pending.then(
          () => undefined,
          () => undefined,
        );
        pooled.sinkHolding = holding;
        void holding.then(() => {
          if (pooled.sinkHolding === holding) pooled.sinkHolding = undefined;
        });
        pending.then(
          () => {
            done();
            if (!settled) s.resume();
          },
          (e: unknown) => {
            settled = true;
            reject(e instanceof Error ? e : new Error(String(e)));
          },
        );
      };
      pooled.exchange = {
        onBytes: (view) => {
          if (settled) return;
          if (want >= 0) return body(view);
          headBytes.push(Buffer.from(view));
          headLength += view.length;
          const all = Buffer.concat(headBytes);
          const end = all.indexOf('\r\n\r\n');
          if (end < 0) {
            if (headLength > MAX_HEAD_BYTES) reject(socketError('response head too large', 'EPROTO'));
            headBytes = [all];
            return;
          }
          firstByteMs = performance.now() - t0;
          const lines = all.subarray(0, end).toString('latin1').split('\r\n');
          status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? '0');
          headers = Object.fromEntries(
            lines.slice(1).map((l) => {
              const i = l.indexOf(':');
              return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()];
            }),
          );
          want = Number(headers['content-length'] ?? 'NaN');
          if (status === 0 || !Number.isSafeInteger(want)) {
            settled = true;
            reject(socketError('the answer to a GET has no status or Content-Length', 'EPROTO'));
            return;
          }
          if (want === 0) return finish({ text: '', bytes: 0, stopped: false });
          const rest = all.subarray(end + 4);
          if (rest.length > 0) body(rest);
        },
        onEnd: (e) => {
          if (settled) return;
          settled = true;
          pooled.exchange = undefined;
          reject(e);
        },
      };
      // A stop settles the exchange with what arrived; get() then closes the socket (a sink still
      // holding a view keeps its buffer: the close handler waits for it).
      stopNow = () => {
        if (!settled) finish({ text: '', bytes, stopped: true });
      };
      s.write(head);
    });
    if (signal === undefined) return exchanged;
    signal.addEventListener('abort', stopNow, { once: true });
    const forget = (): void => signal.removeEventListener('abort', stopNow);
    exchanged.then(forget, forget);
    return exchanged;
  }

  close(): void {
    this.closed = true;
    for (const p of this.idle.splice(0)) p.socket.destroy();
  }
}
