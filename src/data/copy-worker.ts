// Copy thread of the CopyPool: copies byte ranges between SharedArrayBuffers (CPU-tier pages, payload
// slots, scratch pages) so that multi-MiB memory copies never run on the main event loop.
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { messageOf } from '../util/errors.js';

/** One range to copy: `length` bytes from src at srcOffset to dst at dstOffset. */
export interface CopyRange {
  readonly dst: SharedArrayBuffer;
  readonly dstOffset: number;
  readonly src: SharedArrayBuffer;
  readonly srcOffset: number;
  readonly length: number;
}

export interface CopyJob {
  /** -1: the pool's warm-up job (no ranges). */
  readonly id: number;
  readonly ranges: readonly CopyRange[];
}

export type CopyReply = { readonly id: number; readonly ms: number } | { readonly id: number; readonly error: string };

if (parentPort === null) throw new Error('copy-worker.js must be started as a worker thread');
const port = parentPort;
port.on('message', (job: CopyJob) => {
  try {
    const t0 = performance.now();
    for (const r of job.ranges) new Uint8Array(r.dst, r.dstOffset, r.length).set(new Uint8Array(r.src, r.srcOffset, r.length));
    const reply: CopyReply = { id: job.id, ms: performance.now() - t0 };
    port.postMessage(reply);
  } catch (e) {
    const reply: CopyReply = { id: job.id, error: messageOf(e) };
    port.postMessage(reply);
  }
});
