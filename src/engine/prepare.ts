// Work done before the measured phase (spec §4.10): pre-population for --decode-only and
// preconditioning for --precondition. Both write through the normal waterfall; the run resets its
// statistics afterwards, so none of this traffic is part of the measurement.
import type { TieredCache } from '../cache/tiered-cache.js';
import type { Recorder } from '../metrics/recorder.js';
import { GiB } from '../util/units.js';

/** Entry size of pre-populated and preconditioning entries, as the reference. */
export const PREPARE_ENTRY_TOKENS = 2048;
/** Pre-populated entries per user in decode-only mode. */
export const PREPOP_ENTRIES_PER_USER = 10;
/** A preconditioning writer gives up after this many consecutive failed allocations. */
export const MAX_CONSECUTIVE_FAILURES = 50;
/** Preconditioning reports progress every this many bytes. */
export const PROGRESS_EVERY_BYTES = 10 * GiB;

async function runWriters(count: number, writer: () => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: Math.max(1, count) }, writer));
}

/** Writes `prepop_<i>` entries for decode-only runs; returns their keys. */
export async function prepopulate(cache: TieredCache, entries: number, writers: number, signal: AbortSignal): Promise<string[]> {
  const keys: string[] = [];
  let next = 0;
  await runWriters(writers, async () => {
    while (!signal.aborted) {
      const i = next++;
      if (i >= entries) return;
      const key = `prepop_${i}`;
      if ((await cache.allocate(key, PREPARE_ENTRY_TOKENS, 'prefill')).ok) keys.push(key);
    }
  });
  keys.sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
  return keys;
}

export interface PreconditionResult {
  readonly writtenBytes: number;
  readonly entries: number;
  readonly seconds: number;
  /** True when every writer gave up (too many consecutive failures) before the target. */
  readonly gaveUp: boolean;
}

/**
 * Writes `precond_<seq>` entries with `writers` concurrent writers until `targetBytes` have been
 * written, so an SSD reaches steady state before it is measured. Progress goes to `log`.
 */
export async function precondition(
  cache: TieredCache,
  recorder: Recorder,
  targetBytes: number,
  writers: number,
  signal: AbortSignal,
  log: (line: string) => void,
  now: () => number,
): Promise<PreconditionResult> {
  const start = now();
  let seq = 0;
  let entries = 0;
  let nextReport = PROGRESS_EVERY_BYTES;
  let giveUps = 0;
  const written = (): number => recorder.counters.totalWriteBytes;
  const base = written();
  await runWriters(writers, async () => {
    let failures = 0;
    while (!signal.aborted && written() - base < targetBytes) {
      const r = await cache.allocate(`precond_${seq++}`, PREPARE_ENTRY_TOKENS, 'prefill');
      if (r.ok) {
        failures = 0;
        entries++;
      } else if (++failures >= MAX_CONSECUTIVE_FAILURES) {
        giveUps++;
        return;
      }
      const done = written() - base;
      if (done >= nextReport) {
        nextReport += PROGRESS_EVERY_BYTES;
        log(`Preconditioning: ${(done / GiB).toFixed(1)} / ${(targetBytes / GiB).toFixed(1)} GiB written (${((done / Math.max(1e-9, now() - start)) * 1000 / GiB).toFixed(2)} GiB/s)`);
      }
    }
  });
  return { writtenBytes: written() - base, entries, seconds: (now() - start) / 1000, gaveUp: giveUps >= Math.max(1, writers) };
}
