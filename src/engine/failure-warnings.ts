// The warnings that name failed operations and refused allocations: a run whose writes failed must
// say so where a reader looks (warnings, console), not only in per-tier counters.
import type { FailedOperation, RecorderSnapshot } from '../metrics/recorder.js';
import type { LeftBehind } from '../tiers/backend.js';
import { inert } from '../util/safe-text.js';
import { GiB } from '../util/units.js';

const OPERATION_WORDS: Record<FailedOperation, [string, string]> = {
  placement_write: ['write', 'writes'],
  hit_read: ['hit read', 'hit reads'],
  demote_read: ['demotion read', 'demotion reads'],
  demote_write: ['demotion write', 'demotion writes'],
  delete: ['delete', 'deletes'],
};

/** One warning per (tier, operation, error) that failed, and one for refused allocations. */
export function failureWarnings(rec: Pick<RecorderSnapshot, 'failures' | 'refusedAllocations'>): string[] {
  const out = rec.failures.map((f) => {
    const [one, many] = OPERATION_WORDS[f.operation];
    return `${f.count} ${f.tier} ${f.count === 1 ? one : many} failed with ${f.error}: not counted as traffic (kvcache_bench.failed_operations)`;
  });
  const r = rec.refusedAllocations;
  if (r.count > 0) {
    out.push(
      `${r.count} new entries (${(r.bytes / GiB).toFixed(3)} GiB) fit in no tier within its limit and were not written (kvcache_bench.refused_allocations)`,
    );
  }
  return out;
}

/**
 * The line that says what the storage's clean-up may have left behind (after the results: they stand).
 * "May": a DELETE that timed out may still be carried out by a store that was only slow.
 */
export function leftBehindLine(left: LeftBehind): string {
  // The why quotes the store's answer, the where the user's prefix: shown inert on the console.
  return inert(`WARNING: the clean-up may have left ${left.count} object(s) of this run in ${left.where} (${left.why}); ${left.remedy}`);
}
