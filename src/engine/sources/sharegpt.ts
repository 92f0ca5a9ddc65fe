// ShareGPT replay (--dataset-path, docs/reference-compat.md#rc-31): the dataset is loaded whole at
// open (as token counts), then replayed as a paced, shuffled timeline. A conversation is claimed whole
// by one user, so its turns run in order and each turn reloads the earlier ones (the reference never
// registered dataset conversations, so it did no multi-turn reloads).
import { requestKey, turnKey } from '../../workload/keys.js';
import { DatasetError, loadShareGpt, shareGptTimeline } from '../../workload/sharegpt.js';
import type { ShareGptRequestPlan } from '../../workload/sharegpt.js';
import { tokenCounter } from '../../workload/tokens.js';
import type { RunConfig } from '../../settings/run-config.js';
import type { UserPool } from '../dispatcher.js';
import { recordedStep } from './recorded.js';
import type { RecordedRequestContext } from './recorded.js';
import type { OpenedSource, RankShare, WorkloadSourceDef } from './source.js';
import { servesRequest } from '../../workload/routing.js';

/**
 * Whether this rank replays a conversation when ranks divide the dataset: a conversation is the unit
 * (its turns reload each other), routed by its id (session) or dealt in dataset order (round-robin,
 * pass after pass), the same on every rank whatever order each shuffled it into.
 */
function servesConversation(share: RankShare | undefined, first: ShareGptRequestPlan, conversations: number): boolean {
  if (share === undefined) return true;
  const ordinal = (first.pass - 1) * conversations + first.conversationIndex;
  const served = servesRequest(share.route, ordinal, { id: first.conversationId, conversationId: first.conversationId });
  share.onRequest(served, undefined);
  return served;
}

/** Virtual users over a ShareGPT replay: each claims the next whole conversation when idle. */
export function shareGptUsers(
  plans: Iterator<ShareGptRequestPlan>,
  c: RecordedRequestContext,
  share?: RankShare,
  conversations = 0,
): UserPool {
  let lookahead = plans.next();
  const nextConversation = (): ShareGptRequestPlan[] => {
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
  const claimConversation = (): ShareGptRequestPlan[] => {
    for (;;) {
      const turns = nextConversation();
      const first = turns[0];
      if (first === undefined || servesConversation(share, first, conversations)) return turns;
    }
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
        return recordedStep(
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

async function open(cfg: RunConfig): Promise<OpenedSource> {
  const path = cfg.datasetPath ?? '';
  const sg = cfg.settings.sharegpt;
  const tokens = tokenCounter(cfg.tokenizer, sg.charsPerTokenEstimate);
  const dataset = loadShareGpt(path, {
    maxConversations: cfg.maxConversations,
    tokens,
    maxContextTokens: sg.maxContextTokens,
    maxGenerationTokens: sg.maxGenerationTokens,
  });
  const st = dataset.stats;
  return {
    describe: () => ({ kind: 'sharegpt', path, tokenizer: tokens.name, ...st }),
    logLines: () => [
      `ShareGPT: ${st.conversationsLoaded} conversations, ${st.turns} turns from ${path} (${tokens.name} tokens; ${st.skippedPairs} misaligned pairs and ${st.skippedRecords} records skipped)`,
    ],
    users: ({ cfg: switches, parts, rng, share }) => {
      const plans = shareGptTimeline(dataset.conversations, {
        requestRate: switches.requestRate,
        replayCycles: switches.replayCycles,
        rng: rng.fork('sharegpt'),
      });
      const context: RecordedRequestContext = { ...parts, rng: rng.fork('trace'), multiTurn: !switches.disableMultiTurn };
      const pool = shareGptUsers(plans, context, share, dataset.conversations.length);
      return { pool, conversationsLost: () => 0, sourceFailure: () => undefined };
    },
  };
}

export const shareGptSource: WorkloadSourceDef = {
  kind: 'sharegpt',
  pick: { flag: '--dataset-path', what: 'ShareGPT replay', picked: (f) => f.datasetPath !== undefined },
  recorded: true,
  inputs: (f) => (f.datasetPath !== undefined ? [{ flag: '--dataset-path', path: f.datasetPath }] : []),
  open,
  inputErrors: [DatasetError],
};
