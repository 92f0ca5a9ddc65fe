// The default source: synthetic users drawn from the user templates of the settings, used when no
// flag picks a recorded source. Nothing to read, so opening never fails.
import { sessionStream, UserSession } from '../../workload/session.js';
import { generateUser, userId, userStream } from '../../workload/users.js';
import { firstRequestsInScheduleOrder, sessionSource } from '../dispatcher.js';
import type { OpenedSource, RunUsers, UsersContext, WorkloadSourceDef } from './source.js';

/**
 * Synthetic user i is drawn from its own streams, so it is the same whenever it is made (autoscaling
 * adds users beyond --num-users on demand). With --max-requests, the first requests of the first
 * --num-users users in schedule order, then fresh sessions for any user added later.
 */
export function syntheticUsers({ cfg, parts, rng, share }: UsersContext): RunUsers {
  const sessions: UserSession[] = [];
  const usersRng = rng.fork('users');
  const sessionsRng = rng.fork('sessions');
  // Each rank has its own users; in a shared pool their conversations are named per rank, so two ranks'
  // user_0000 never share blocks by name (shared system prompts still do, as on a real cluster).
  const rankScope = share?.pooled === true && share.route.worldSize > 1 ? `r${share.route.rank}_` : '';
  const sessionFor = (i: number): UserSession => {
    const id = rankScope + userId(i);
    const s = new UserSession({
      ...parts,
      profile: generateUser(id, userStream(usersRng, id), parts.settings),
      rng: sessionStream(sessionsRng, id),
    });
    sessions.push(s);
    return s;
  };
  const conversationsLost = (): number => sessions.reduce((n, s) => n + s.conversationsLost, 0);
  if (cfg.maxRequests === 0) return { pool: (i) => sessionSource(sessionFor(i)), conversationsLost, sourceFailure: () => undefined };
  const first = firstRequestsInScheduleOrder(
    Array.from({ length: cfg.numUsers }, (_, i) => sessionFor(i)),
    cfg.maxRequests,
  );
  return { pool: (i) => first[i] ?? sessionSource(sessionFor(i)), conversationsLost, sourceFailure: () => undefined };
}

const opened: OpenedSource = {
  describe: () => ({ kind: 'synthetic' }),
  logLines: () => [],
  users: syntheticUsers,
};

export const syntheticSource: WorkloadSourceDef = {
  kind: 'synthetic',
  recorded: false,
  inputs: () => [],
  open: () => Promise.resolve(opened),
  inputErrors: [],
};
