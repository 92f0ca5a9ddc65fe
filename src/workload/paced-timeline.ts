// The replay schedule of a recorded trace (BurstGPT, Mooncake), pulled lazily over passes: each
// record is due at pass offset + (its adjusted timestamp − the pass's first) × ms per unit ÷ speed-up.
// Timestamps are made non-decreasing (a step back in time costs no delay), each pass restarts them,
// and the next pass's first record is due when the previous pass's last one was (the reference reset
// its clock, so no sleep between passes). A pass with no record ends the schedule.

/**
 * Makes a timestamp sequence non-decreasing the way the reference's pacing behaved: it slept
 * (ts − previous ts) only when positive, so a step back in time (typically a later file whose
 * clock restarts) costs no delay and the following steps keep their spacing. Equivalently, from a
 * step back on, timestamps are shifted forward by how far they stepped back. A trace whose files
 * continue each other's clock (the real BurstGPT split) is left unchanged.
 */
export class NonDecreasingTimestamps {
  private offset = 0;
  private lastRaw: number | undefined;
  private last = 0;

  /** The next timestamp, adjusted (any unit: the trace's own). */
  next(raw: number): number {
    if (this.lastRaw !== undefined && raw < this.lastRaw) this.offset += this.lastRaw - raw;
    this.lastRaw = raw;
    this.last = Math.max(this.last, raw + this.offset); // guards against rounding by one ulp
    return this.last;
  }
}

export interface PacedReplayOptions {
  /** Trace time per replay time; 0 = no pacing (everything due at 0 ms). */
  readonly speedup: number;
  /** Passes over the trace; 0 = until the consumer stops pulling. */
  readonly replayCycles: number;
}

export interface PacedItem<R> {
  readonly record: R;
  /** 0-based pass over the trace. */
  readonly pass: number;
  /** 0-based sequence number across passes: unique per request of the run. */
  readonly index: number;
  /** When to issue it, ms from the replay start; non-decreasing. */
  readonly scheduledAtMs: number;
}

/** Checks the options the way both replays word it (a RangeError names the bad one). */
export function checkPacing({ speedup, replayCycles }: PacedReplayOptions): void {
  if (!Number.isFinite(speedup) || speedup < 0) throw new RangeError(`trace speedup must be a finite number ≥ 0, got ${speedup}`);
  if (!Number.isSafeInteger(replayCycles) || replayCycles < 0)
    throw new RangeError(`replay cycles must be an integer ≥ 0, got ${replayCycles}`);
}

/** `records(pass)` gives a fresh stream of the trace per pass; `timestampOf` its time in units of `msPerUnit` ms. */
export async function* pacedTimeline<R>(
  records: (pass: number) => AsyncIterable<R>,
  timestampOf: (record: R) => number,
  msPerUnit: number,
  options: PacedReplayOptions,
): AsyncGenerator<PacedItem<R>> {
  checkPacing(options);
  const { speedup, replayCycles } = options;
  let index = 0;
  let passOffsetMs = 0;
  for (let pass = 0; replayCycles === 0 || pass < replayCycles; pass++) {
    const timestamps = new NonDecreasingTimestamps();
    let first: number | undefined;
    let lastMs = passOffsetMs;
    for await (const record of records(pass)) {
      const ts = timestamps.next(timestampOf(record));
      first ??= ts;
      const scheduledAtMs = speedup === 0 ? 0 : passOffsetMs + ((ts - first) * msPerUnit) / speedup;
      lastMs = scheduledAtMs;
      yield { record, pass, index: index++, scheduledAtMs };
    }
    if (first === undefined) return;
    passOffsetMs = lastMs;
  }
}
