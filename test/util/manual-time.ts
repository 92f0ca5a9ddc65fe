// Time that moves only when a test says so: a clock, a sleep and timers on it, fired in time order.
// Tests then assert order and logic, never how long the machine took.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../src/util/clock.js';

interface Timer {
  at: number;
  readonly seq: number;
  readonly fire: () => void;
  /** Re-armed this many ms later after each firing; undefined for a one-shot timer. */
  readonly periodMs: number | undefined;
}

/**
 * Lets promise continuations and `setImmediate` hops run: a fixed number of event-loop turns, enough
 * for the short chains of the code under test (no wall-clock wait).
 */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await nextTurn();
}

export class ManualTime implements Clock {
  private t = 0;
  private seq = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Runs `fire` once, `ms` from now; returns its cancel. */
  readonly after = (fire: () => void, ms: number): (() => void) => this.add(fire, ms, undefined);

  /** Runs `fire` every `ms`; returns its cancel. */
  readonly every = (fire: () => void, ms: number): (() => void) => this.add(fire, ms, ms);

  /** Resolves `ms` from now; rejects with the signal's reason if it aborts first (as timers/promises). */
  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason as unknown);
      const onAbort = (): void => {
        cancel();
        reject(signal?.reason as unknown);
      };
      const cancel = this.after(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /**
   * Moves time forward by `ms`: each due timer fires at its own time, earliest first, and what it
   * set off settles before the next one fires.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (let next = this.due(end); next !== undefined; next = this.due(end)) {
      this.t = next.at;
      if (next.periodMs === undefined) this.timers = this.timers.filter((x) => x !== next);
      else next.at += next.periodMs;
      next.fire();
      await settle();
    }
    this.t = end;
    await settle();
  }

  private add(fire: () => void, ms: number, periodMs: number | undefined): () => void {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fire, periodMs };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** The earliest timer due by `end` (ties in the order they were set). */
  private due(end: number): Timer | undefined {
    let best: Timer | undefined;
    for (const x of this.timers)
      if (x.at <= end && (best === undefined || x.at < best.at || (x.at === best.at && x.seq < best.seq))) best = x;
    return best;
  }
}
