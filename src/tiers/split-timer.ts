// Host and device time of one file operation, measured around our own awaited fs calls (so each part
// includes the libuv threadpool hand-off and the callback's return to the event loop) and around
// calls made on the event loop itself (hostSync). file.ts says which calls count as which.
import { performance } from 'node:perf_hooks';
import { timing } from './backend.js';
import type { IOTiming } from './backend.js';
import type { FileIoGauge } from './file-io-gauge.js';

/**
 * Accumulates one operation's host and device time around the awaited calls it wraps (each one fs
 * call on libuv's threadpool, counted by `gauge` when given).
 */
export class SplitTimer {
  hostMs = 0;
  deviceMs = 0;
  private overlapping = 0;
  private busySince = 0;

  constructor(private readonly gauge?: FileIoGauge) {}

  device<T>(op: () => Promise<T>): Promise<T> {
    return this.timed(op, true);
  }

  host<T>(op: () => Promise<T>): Promise<T> {
    return this.timed(op, false);
  }

  /** Device time of operations that may overlap: the wall time during which at least one is in flight. */
  deviceOverlapped<T>(op: () => Promise<T>): Promise<T> {
    if (this.overlapping++ === 0) this.busySince = performance.now();
    return this.call(op, () => {
      if (--this.overlapping === 0) this.deviceMs += performance.now() - this.busySince;
    });
  }

  hostSync(op: () => void): void {
    const t0 = performance.now();
    op();
    this.hostMs += performance.now() - t0;
  }

  /** Time measured elsewhere (a native job's, timed on its worker thread). */
  add(hostMs: number, deviceMs: number): void {
    this.hostMs += hostMs;
    this.deviceMs += deviceMs;
  }

  result(): IOTiming {
    return timing(this.hostMs, this.deviceMs);
  }

  private timed<T>(op: () => Promise<T>, device: boolean): Promise<T> {
    const t0 = performance.now();
    return this.call(op, () => {
      const ms = performance.now() - t0;
      if (device) this.deviceMs += ms;
      else this.hostMs += ms;
    });
  }

  /**
   * `op`'s promise, with `ended` run once it settles (after the gauge counts it settled). One `then`, not
   * an async function per layer: with one small file per KV block these wrappers ran per fs call.
   */
  private call<T>(op: () => Promise<T>, ended: () => void): Promise<T> {
    const gauge = this.gauge;
    gauge?.callStarted();
    const settled = (): void => {
      gauge?.callEnded();
      ended();
    };
    let running: Promise<T>;
    try {
      running = op();
    } catch (e) {
      settled();
      return Promise.reject(e);
    }
    return running.then(
      (value) => {
        settled();
        return value;
      },
      (e: unknown) => {
        settled();
        throw e;
      },
    );
  }
}
