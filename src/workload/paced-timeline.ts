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

/** The schedule's clock over passes: each record's due time, pass by pass. */
class PassClock {
  private readonly speedup: number;
  private passOffsetMs = 0;
  private timestamps = new NonDecreasingTimestamps();
  private first: number | undefined;
  private lastMs = 0;

  constructor(
    private readonly msPerUnit: number,
    options: PacedReplayOptions,
  ) {
    checkPacing(options);
    this.speedup = options.speedup;
  }

  /** When a record of (raw) timestamp `ts` is due, ms from the replay start. */
  due(ts: number): number {
    const t = this.timestamps.next(ts);
    this.first ??= t;
    this.lastMs = this.speedup === 0 ? 0 : this.passOffsetMs + ((t - this.first) * this.msPerUnit) / this.speedup;
    return this.lastMs;
  }

  /** Ends a pass: false when it had no record (the schedule ends there), else the next pass starts when its last record was due. */
  endPass(): boolean {
    if (this.first === undefined) return false;
    this.passOffsetMs = this.lastMs;
    this.timestamps = new NonDecreasingTimestamps();
    this.first = undefined;
    return true;
  }
}

/** `records(pass)` gives a fresh stream of the trace per pass; `timestampOf` its time in units of `msPerUnit` ms. */
export async function* pacedTimeline<R>(
  records: (pass: number) => AsyncIterable<R>,
  timestampOf: (record: R) => number,
  msPerUnit: number,
  options: PacedReplayOptions,
): AsyncGenerator<PacedItem<R>> {
  const clock = new PassClock(msPerUnit, options);
  let index = 0;
  for (let pass = 0; options.replayCycles === 0 || pass < options.replayCycles; pass++) {
    for await (const record of records(pass)) yield { record, pass, index: index++, scheduledAtMs: clock.due(timestampOf(record)) };
    if (!clock.endPass()) return;
  }
}

/** A batch of the schedule: records in order and when each is due (ms from the replay start). */
export interface PacedBatch<R> {
  readonly records: readonly R[];
  readonly scheduledAtMs: Float64Array;
}

/** pacedTimeline with `records(pass)` giving batches of records, and the schedule given a batch at a time. */
export async function* pacedBatches<R>(
  records: (pass: number) => AsyncIterable<readonly R[]>,
  timestampOf: (record: R) => number,
  msPerUnit: number,
  options: PacedReplayOptions,
): AsyncGenerator<PacedBatch<R>> {
  const clock = new PassClock(msPerUnit, options);
  for (let pass = 0; options.replayCycles === 0 || pass < options.replayCycles; pass++) {
    for await (const batch of records(pass)) {
      const scheduledAtMs = new Float64Array(batch.length);
      for (let i = 0; i < batch.length; i++) scheduledAtMs[i] = clock.due(timestampOf(batch[i]));
      yield { records: batch, scheduledAtMs };
    }
    if (!clock.endPass()) return;
  }
}
