// Generator thread of the PayloadPool. AES keystream generation is CPU-bound, so it runs here rather
// than on the main event loop; it writes straight into the shared slab, so a filled slot needs no copy
// before a tier writes it. The slab arrives once; each job then names only a byte range of it.
import { parentPort } from 'node:worker_threads';
import { fillPayload } from './payload.js';

/**
 * Bytes per fillPayload call. Each call's cipher output is a fresh buffer of up to this size; above
 * glibc's 128 KiB mmap threshold that is a fresh mapping per call, and the page faults cost as much
 * system time as the AES itself (measured: 1 GiB in 1 MiB calls ≈ 0.55 s sys, in 64 KiB calls
 * ≈ 0.04 s), and serialise threads on the address-space lock. The extra cipher set-ups are cheap.
 */
const FILL_PIECE = 64 * 1024;

/** Sent once, right after the worker starts. */
export interface InitMessage {
  readonly type: 'init';
  readonly slab: SharedArrayBuffer;
}

/** Fill `length` bytes at `byteOffset` of the slab with entry bytes starting at `entryOffset`. */
export interface FillMessage {
  readonly type: 'fill';
  readonly id: number;
  readonly byteOffset: number;
  readonly length: number;
  /** The entry's 32-byte AES key (entryKeyMaterial); a copy, 32 bytes per message. */
  readonly material: Uint8Array;
  readonly entryOffset: number;
}

export type ToWorker = InitMessage | FillMessage;

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

function serve(port: NonNullable<typeof parentPort>): void {
  let slab: SharedArrayBuffer | undefined;
  const reply = (msg: FromWorker): void => port.postMessage(msg);

  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'init') {
      slab = msg.slab;
      reply({ type: 'ready' });
      return;
    }
    try {
      if (slab === undefined) throw new Error('fill request before init');
      const material = Buffer.from(msg.material.buffer, msg.material.byteOffset, msg.material.byteLength);
      const target = new Uint8Array(slab, msg.byteOffset, msg.length);
      for (let done = 0; done < target.length; done += FILL_PIECE) {
        fillPayload(material, msg.entryOffset + done, target.subarray(done, done + FILL_PIECE));
      }
      reply({ type: 'done', id: msg.id });
    } catch (e) {
      // A bad job fails alone; the thread stays up for the others.
      reply({ type: 'failed', id: msg.id, error: e instanceof Error ? e.message : String(e) });
    }
  });
}

if (parentPort === null) throw new Error('payload-worker.js must be started as a worker thread');
serve(parentPort);
