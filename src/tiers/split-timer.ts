// Host and device time of one file operation, measured around our own awaited fs calls (so each part
// includes the libuv threadpool hand-off and the callback's return to the event loop). file.ts says
// which calls count as which.
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
    return this.timed(op, (ms) => (this.deviceMs += ms));
  }

  host<T>(op: () => Promise<T>): Promise<T> {
    return this.timed(op, (ms) => (this.hostMs += ms));
  }

  /** Device time of operations that may overlap: the wall time during which at least one is in flight. */
  async deviceOverlapped<T>(op: () => Promise<T>): Promise<T> {
    if (this.overlapping++ === 0) this.busySince = performance.now();
    try {
      return await this.call(op);
    } finally {
      if (--this.overlapping === 0) this.deviceMs += performance.now() - this.busySince;
    }
  }

  hostSync(op: () => void): void {
    const t0 = performance.now();
    op();
    this.hostMs += performance.now() - t0;
  }

  result(): IOTiming {
    return timing(this.hostMs, this.deviceMs);
  }

  private call<T>(op: () => Promise<T>): Promise<T> {
    return this.gauge === undefined ? op() : this.gauge.track(op);
  }

  private async timed<T>(op: () => Promise<T>, add: (ms: number) => void): Promise<T> {
    const t0 = performance.now();
    try {
      return await this.call(op);
    } finally {
      add(performance.now() - t0);
    }
  }
}
