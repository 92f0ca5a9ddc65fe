// Generator thread of the PayloadPool's ThreadFiller (fillers.ts), used when the native payload-fill
// helper is not built (or the pool is asked for threads). Filling a chunk is a memory copy from the
// shared random source plus stamps (payload.ts), a millisecond or so per 4 MiB, or, in a slot that
// already holds a base the entry may use, the stamps alone (a tenth of that); either way it runs here
// rather than on the main event loop; it writes straight into the shared slab, so a filled slot needs
// no copy before a tier writes it. The slab and the source arrive once; each job then names only a byte range of the slab.
import { parentPort } from 'node:worker_threads';
import { fillChunk, stampChunk, stampWordsOf } from './payload.js';
import { messageOf } from '../util/errors.js';

/** Sent once, right after the worker starts. */
export interface InitMessage {
  readonly type: 'init';
  readonly slab: SharedArrayBuffer;
  /** payloadSource(seed) of the run, shared. */
  readonly source: SharedArrayBuffer;
}

/** Fill `length` bytes at `byteOffset` of the slab with entry bytes starting at `entryOffset`. */
export interface FillMessage {
  readonly type: 'fill';
  readonly id: number;
  readonly byteOffset: number;
  readonly length: number;
  /** The entry's key material (entryKeyMaterial); a copy, 32 bytes per message. */
  readonly material: Uint8Array;
  /** A multiple of the payload block (512 bytes). */
  readonly entryOffset: number;
  /** Where in the source the chunk's bytes come from (the base the pool chose). */
  readonly sourceFrom: number;
  /** The slot already holds the source bytes from sourceFrom on (the same base, as long): rewrite the stamps only. */
  readonly stampOnly: boolean;
}

export type ToWorker = InitMessage | FillMessage;

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

function serve(port: NonNullable<typeof parentPort>): void {
  let slab: SharedArrayBuffer | undefined;
  let source: Uint8Array | undefined;
  let stampWords: Uint32Array | undefined;
  const reply = (msg: FromWorker): void => port.postMessage(msg);

  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'init') {
      slab = msg.slab;
      source = new Uint8Array(msg.source);
      stampWords = stampWordsOf(source); // this thread's packed stamp source (1 MiB)
      reply({ type: 'ready' });
      return;
    }
    try {
      if (slab === undefined || source === undefined) throw new Error('fill request before init');
      const target = new Uint8Array(slab, msg.byteOffset, msg.length);
      (msg.stampOnly ? stampChunk : fillChunk)(source, msg.material, msg.entryOffset, msg.sourceFrom, target, stampWords);
      reply({ type: 'done', id: msg.id });
    } catch (e) {
      // A bad job fails alone; the thread stays up for the others.
      reply({ type: 'failed', id: msg.id, error: messageOf(e) });
    }
  });
}

if (parentPort === null) throw new Error('payload-worker.js must be started as a worker thread');
serve(parentPort);
