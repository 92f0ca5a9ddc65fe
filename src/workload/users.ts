// Synthetic user profiles (docs/reference-compat.md#rc-26): a user type chosen uniformly among the three templates, and
// context length, generation length, think time and QoS level drawn once for the user's lifetime.
// Each user draws from its own forked stream, so user i's profile does not depend on how many users
// are generated or in which order.
import type { Rng } from '../util/rng.js';
import { drawQos } from './qos.js';
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import type { Settings } from '../settings/config-keys.js';
import { USER_TYPES } from '../settings/choices.js';
import type { QosLevel, UserType } from '../settings/choices.js';

export interface UserProfile {
  readonly userId: string;
  readonly userType: UserType;
  /** C: the user's maximum context tokens; each request draws randint(max(1, C//4), C). */
  readonly contextLength: number;
  /** G: the user's maximum generation tokens; each request draws randint(max(1, G//4), G). */
  readonly generationLength: number;
  /** Mean think time in seconds; each wait is thinkTimeS × uniform(0.8, 1.2). */
  readonly thinkTimeS: number;
  readonly qos: QosLevel;
  readonly priority: number;
}

/** `user_0000`, `user_0001`, … (the reference's id format). */
export function userId(index: number): string {
  return `user_${String(index).padStart(4, '0')}`;
}

/**
 * One user's profile drawn from `rng` (the caller passes the user's own stream). A given `qos`
 * is kept as is; otherwise the level is drawn after the template values.
 */
export function generateUser(id: string, rng: Rng, settings: Settings = DEFAULT_SETTINGS, qos?: QosLevel): UserProfile {
  const userType = rng.pick(USER_TYPES);
  const t = settings.userTemplates[userType];
  const contextLength = rng.int(t.contextRange[0], t.contextRange[1]);
  const generationLength = rng.int(t.generationRange[0], t.generationRange[1]);
  const thinkTimeS = rng.uniform(t.thinkTimeRange[0], t.thinkTimeRange[1]);
  const level = qos ?? drawQos(rng, settings.qosDistribution);
  return {
    userId: id,
    userType,
    contextLength,
    generationLength,
    thinkTimeS,
    qos: level,
    priority: settings.qosProfiles[level].priority,
  };
}

/** The stream name a user's profile is drawn from: the user id itself (`user_0007`). */
export function userStream(rng: Rng, id: string): Rng {
  return rng.fork(id);
}

/** `n` users `user_0000…`, each drawn from the fork `rng.fork(<userId>)`. */
export function generateUsers(n: number, rng: Rng, settings: Settings = DEFAULT_SETTINGS): UserProfile[] {
  const users: UserProfile[] = [];
  for (let i = 0; i < n; i++) {
    const id = userId(i);
    users.push(generateUser(id, userStream(rng, id), settings));
  }
  return users;
}
