// The run's workload, built once: the state every user and the request pipeline share (conversation
// manager, prefix matcher, RAG documents), and the users that issue requests — synthetic sessions,
// or recorded users over a ShareGPT dataset or a BurstGPT trace.
import type { Rng } from '../util/rng.js';
import { kvBytesPerToken } from '../model/models.js';
import { ConversationManager } from '../workload/conversation.js';
import { PrefixMatcher } from '../workload/prefix.js';
import { RagDocumentManager } from '../workload/rag.js';
import { sessionStream, UserSession } from '../workload/session.js';
import type { Settings } from '../settings/config-keys.js';
import { shareGptTimeline } from '../workload/sharegpt.js';
import { generateUser, userId, userStream } from '../workload/users.js';
import { firstRequestsInScheduleOrder, sessionSource } from './dispatcher.js';
import type { UserPool } from './dispatcher.js';
import { burstUsers, shareGptUsers } from './recorded-users.js';
import type { RecordedRequestContext } from './recorded-users.js';
import type { RunConfig } from '../settings/run-config.js';
import type { StopController } from './stop-control.js';
import type { WorkloadSource } from './workload-source.js';

/** What every user and the request pipeline share; an absent part is switched off. */
export interface WorkloadParts {
  readonly settings: Settings;
  readonly conversations?: ConversationManager;
  readonly prefix?: PrefixMatcher;
  readonly rag?: RagDocumentManager;
}

export type WorkloadSwitches = Pick<RunConfig, 'model' | 'disableMultiTurn' | 'disablePrefixCaching' | 'enableRag'>;

export function buildWorkloadParts(cfg: WorkloadSwitches, settings: Settings): WorkloadParts {
  return {
    settings,
    ...(cfg.disableMultiTurn ? {} : { conversations: new ConversationManager(settings.conversation) }),
    ...(cfg.disablePrefixCaching ? {} : { prefix: new PrefixMatcher(kvBytesPerToken(cfg.model), settings.prefixCache) }),
    ...(cfg.enableRag ? { rag: new RagDocumentManager(cfg.model, settings.rag) } : {}),
  };
}

/** The users of a run, and what the results say about them afterwards. */
export interface RunUsers {
  readonly pool: UserPool;
  /** Conversations synthetic users found dropped by the conversation limit. */
  conversationsLost(): number;
  /** The error that ended a recorded source early (a BurstGPT file failing mid-run); undefined when none. */
  sourceFailure(): unknown;
}

export type UserSwitches = Pick<RunConfig, 'numUsers' | 'maxRequests' | 'requestRate' | 'replayCycles' | 'disableMultiTurn'>;

/**
 * Users over `source`. Each kind draws from its own named streams of `rng` (the same seed gives the
 * same requests). A recorded source that fails mid-run stops the run as 'failed' through `stop`.
 */
export function buildUsers(
  cfg: UserSwitches,
  parts: WorkloadParts,
  source: WorkloadSource,
  rng: Rng,
  stop: Pick<StopController, 'stopWith'>,
): RunUsers {
  if (source.kind === 'synthetic') return syntheticUsers(cfg, parts, rng);
  const context: RecordedRequestContext = { ...parts, rng: rng.fork('trace'), multiTurn: !cfg.disableMultiTurn };
  if (source.kind === 'sharegpt') {
    const plans = shareGptTimeline(source.dataset.conversations, {
      requestRate: cfg.requestRate,
      replayCycles: cfg.replayCycles,
      rng: rng.fork('sharegpt'),
    });
    return { pool: shareGptUsers(plans, context), conversationsLost: () => 0, sourceFailure: () => undefined };
  }
  let failure: unknown;
  const pool = burstUsers(source.items, context, (e) => {
    failure = e;
    stop.stopWith('failed');
  });
  return { pool, conversationsLost: () => 0, sourceFailure: () => failure };
}

/**
 * Synthetic user i is drawn from its own streams, so it is the same whenever it is made (autoscaling
 * adds users beyond --num-users on demand). With --max-requests, the first requests of the first
 * --num-users users in schedule order, then fresh sessions for any user added later.
 */
function syntheticUsers(cfg: UserSwitches, parts: WorkloadParts, rng: Rng): RunUsers {
  const sessions: UserSession[] = [];
  const usersRng = rng.fork('users');
  const sessionsRng = rng.fork('sessions');
  const sessionFor = (i: number): UserSession => {
    const id = userId(i);
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
