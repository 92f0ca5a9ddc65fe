// Shared pieces of the workload source tests: user switches, a users context, draining a user.
import { buildWorkloadParts } from '../../../src/engine/build-workload.js';
import type { StepSource } from '../../../src/engine/dispatcher.js';
import type { UserSwitches, UsersContext } from '../../../src/engine/sources/source.js';
import { StopController } from '../../../src/engine/stop-control.js';
import { DEFAULT_SETTINGS } from '../../../src/settings/config-keys.js';
import { Rng } from '../../../src/util/rng.js';
import type { SessionStep } from '../../../src/workload/session.js';
import { TINY } from '../../cache/helpers.js';

export const USERS: UserSwitches = { numUsers: 3, maxRequests: 0, requestRate: 0, replayCycles: 1, disableMultiTurn: false };

/** Users of a source over the default settings' parts, seeded by `seed`. */
export function usersContext(seed: number, over: Partial<UsersContext> = {}): UsersContext {
  const parts = buildWorkloadParts(
    { model: TINY, disableMultiTurn: false, disablePrefixCaching: false, enableRag: false },
    DEFAULT_SETTINGS,
  );
  return { cfg: USERS, parts, rng: new Rng(seed), stop: new StopController(), ...over };
}

/** Every step a user issues, up to `limit`. */
export async function drain(source: StepSource, limit = 1000): Promise<SessionStep[]> {
  const steps: SessionStep[] = [];
  for (let s = await source.next(); s !== undefined && steps.length < limit; s = await source.next()) steps.push(s);
  return steps;
}
