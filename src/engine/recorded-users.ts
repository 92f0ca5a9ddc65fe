// Requests from recorded workloads (docs/reference-compat.md#rc-31, #rc-33): ShareGPT conversations and BurstGPT rows,
// handed to `numUsers` closed-loop virtual users. A ShareGPT conversation is claimed whole by one
// user, so its turns run in order and each turn reloads the earlier ones (the reference never
// registered dataset conversations, so it did no multi-turn reloads). BurstGPT rows are pulled one at
// a time: the trace sets arrival times, the number of users bounds what is in flight (the reference's
// unpaced producer grew its queue without bound, docs/reference-compat.md#rc-33).
import type { Rng } from '../util/rng.js';
import { drawQos, qosPriority } from '../workload/qos.js';
import { requestKey, turnKey } from '../workload/keys.js';
import type { PrefixMatcher } from '../workload/prefix.js';
import type { RagSource } from '../workload/rag.js';
import { phaseFor } from '../workload/request.js';
import type { Request } from '../workload/request.js';
import type { Settings } from '../settings/config-keys.js';
import type { ShareGptRequestPlan } from '../workload/sharegpt.js';
import type { BurstTimelineItem } from '../workload/burstgpt.js';
import { drawProcessing } from '../workload/session.js';
import type { SessionStep } from '../workload/session.js';
import type { StepSource, UserPool } from './dispatcher.js';

export interface RecordedRequestContext {
  readonly settings: Settings;
  readonly rng: Rng;
  readonly multiTurn: boolean;
  readonly prefix?: PrefixMatcher;
  readonly rag?: RagSource;
}

interface Shape {
  readonly id: string;
  readonly userId: string;
  readonly contextTokens: number;
  readonly generationTokens: number;
  readonly cacheKey: string;
  readonly turn: number;
  readonly conversationId?: string;
  readonly previousTurnKeys: readonly string[];
  readonly scheduledAtMs: number;
}

/** A Request with the per-request draws the synthetic sessions also make (QoS, prefix, RAG chunks). */
function makeStep(shape: Shape, c: RecordedRequestContext): SessionStep {
  const qos = drawQos(c.rng, c.settings.qosDistribution);
  const request: Request = {
    ...shape,
    kind: 'chat',
    qos,
    priority: qosPriority(qos, c.settings.qosProfiles),
    phase: phaseFor(shape.contextTokens),
    ...drawProcessing(c.rng, c.settings, c.prefix, c.rag),
  };
  return { thinkTimeS: 0, request, conversationLost: false };
}

/** Virtual users over a ShareGPT replay: each claims the next whole conversation when idle. */
export function shareGptUsers(plans: Iterator<ShareGptRequestPlan>, c: RecordedRequestContext): UserPool {
  let lookahead = plans.next();
  const claimConversation = (): ShareGptRequestPlan[] => {
    if (lookahead.done === true) return [];
    const first = lookahead.value;
    const turns = [first];
    for (
      lookahead = plans.next();
      lookahead.done !== true && lookahead.value.conversationId === first.conversationId;
      lookahead = plans.next()
    ) {
      turns.push(lookahead.value);
    }
    return turns;
  };
  return (index) => {
    const userId = `dataset_user_${index}`;
    let turns: ShareGptRequestPlan[] = [];
    let i = 0;
    return {
      next: () => {
        if (i >= turns.length) {
          turns = claimConversation();
          i = 0;
        }
        const p = turns[i++];
        if (p === undefined) return undefined;
        const key = (turn: number): string => turnKey(p.conversationId, turn);
        return makeStep(
          {
            id: requestKey(userId, p.index),
            userId,
            contextTokens: p.contextTokens,
            generationTokens: p.generationTokens,
            cacheKey: key(p.turn),
            turn: c.multiTurn ? p.turn : 1,
            conversationId: p.conversationId,
            previousTurnKeys: c.multiTurn ? Array.from({ length: p.turn - 1 }, (_, t) => key(t + 1)) : [],
            scheduledAtMs: p.scheduledAtMs,
          },
          c,
        );
      },
    };
  };
}

/** Virtual users over a BurstGPT replay: each pulls the next row when idle. */
export function burstUsers(items: AsyncIterator<BurstTimelineItem>, c: RecordedRequestContext, onError: (e: unknown) => void): UserPool {
  let ended = false;
  return (): StepSource => ({
    next: async () => {
      if (ended) return undefined;
      let it: IteratorResult<BurstTimelineItem>;
      try {
        it = await items.next();
      } catch (e) {
        ended = true;
        onError(e);
        return undefined;
      }
      if (it.done === true) {
        ended = true;
        return undefined;
      }
      const { row, index: k, scheduledAtMs } = it.value;
      // The reference's user ids; keys are unique per row so rows never share entries.
      const userId = `trace_user_${k % 1000}`;
      const id = `${userId}_req_${String(k).padStart(4, '0')}`; // the reference's 4-digit form
      return makeStep(
        {
          id,
          userId,
          contextTokens: Math.max(1, row.requestTokens),
          generationTokens: row.responseTokens,
          cacheKey: id,
          turn: 1,
          previousTurnKeys: [],
          scheduledAtMs,
        },
        c,
      );
    },
  });
}
