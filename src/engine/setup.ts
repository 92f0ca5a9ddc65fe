// Builds what a run needs from its RunConfig: the tier stack (tier-stack.ts) and the number of logical
// workers. Owns nothing after teardown: every thread, buffer and file it made is released by `close`.
import type { Recorder } from '../metrics/recorder.js';
import type { Clock } from '../util/clock.js';
import type { RunConfig } from '../settings/run-config.js';
import { assembleTiers } from './tier-stack.js';
import type { EntryFilesAt } from './entry-cleanup.js';
import type { RankPlace, TierStack } from './tier-stack.js';

/** Worker (logical) count cap, as the reference (bin/kv-cache.cjs sizes libuv's pool with the same cap). */
export const MAX_WORKERS = 500;

/** Logical workers: one per user, for every user autoscaling may add (idle workers cost nothing), capped. */
function workerCount(cfg: RunConfig): number {
  const users = cfg.enableAutoscaling ? Math.max(cfg.numUsers, cfg.settings.autoscaler.maxUsers) : cfg.numUsers;
  return Math.min(users, MAX_WORKERS);
}

export interface RunSetup extends TierStack {
  readonly workers: number;
}

/**
 * `madeDir` hears of a temporary cache directory the moment it is made (a force-quit during set-up
 * removes it); `place` is this rank's among the ranks (a shared pool's capacity is divided by them).
 */
export async function setupRun(
  cfg: RunConfig,
  recorder: Recorder,
  clock: Clock,
  madeDir?: (at: EntryFilesAt) => void,
  place?: RankPlace,
): Promise<RunSetup> {
  const workers = workerCount(cfg);
  const tiers = await assembleTiers(cfg, recorder, clock, workers, madeDir, place);
  return { ...tiers, workers };
}
