// Monotonic time source. Passed in (never a module global) so tests can drive time.
import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Monotonic milliseconds with sub-microsecond resolution; only differences are meaningful. */
  now(): number;
}

export const monotonicClock: Clock = { now: () => performance.now() };

/** A clock tests advance by hand. */
export class ManualClock implements Clock {
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Calls `tick` every `ms` on a timer that does not keep the process alive; returns its stop. */
export function everyInterval(tick: () => void, ms: number): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}
