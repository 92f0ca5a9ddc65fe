// Why and when the measured phase stops. Made before anything that can stop the run (the duration
// timer, an interrupt, a failed request, the request budget, the autoscaler's peak), so every one
// of them goes through the same `stopWith` and the first reason is the one reported.
import { setMaxListeners } from 'node:events';
import type { StopReason } from '../metrics/result.js';

export class StopController {
  private readonly controller = new AbortController();
  private first: StopReason | undefined;
  private firstFailure: unknown;

  /** `onStop` runs once, at the first stop (the run uses it to cut short the I/O in flight). */
  constructor(private readonly onStop: () => void = () => undefined) {
    setMaxListeners(0, this.controller.signal); // every waiting user and sleeping request listens to it
  }

  /** Aborted at the first stop: users stop issuing, sleeping requests wake. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  /** Stops the run for `reason`, unless it is already stopping (the first reason is kept). */
  stopWith(reason: StopReason): void {
    if (this.stopped) return;
    this.first = reason;
    this.controller.abort();
    this.onStop();
  }

  /** A request failed unexpectedly: the first such error is kept and the run stops as 'failed'. */
  fail(error: unknown): void {
    this.firstFailure ??= error;
    this.stopWith('failed');
  }

  /** The first error given to `fail`; undefined when none. */
  get failure(): unknown {
    return this.firstFailure;
  }

  /** Why the run ended: the first stop, else `exhausted` (every source ran out before anything stopped it). */
  reason(exhausted: StopReason): StopReason {
    return this.first ?? exhausted;
  }

  /**
   * Stops the run as 'interrupted' when `interrupt` fires (SIGINT/SIGTERM), at once if it already
   * has; returns the function that stops listening.
   */
  follow(interrupt: AbortSignal | undefined): () => void {
    if (interrupt === undefined) return () => undefined;
    const onInterrupt = (): void => this.stopWith('interrupted');
    interrupt.addEventListener('abort', onInterrupt, { once: true });
    if (interrupt.aborted) onInterrupt();
    return () => interrupt.removeEventListener('abort', onInterrupt);
  }
}
