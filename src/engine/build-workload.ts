// The run's workload state, built once: what every user and the request pipeline share (conversation
// manager, prefix matcher, RAG documents). The users themselves come from the run's workload source
// (engine/sources/).
import { kvBytesPerToken } from '../model/models.js';
import { ConversationManager } from '../workload/conversation.js';
import { PrefixMatcher } from '../workload/prefix.js';
import { RagDocumentManager } from '../workload/rag.js';
import type { Settings } from '../settings/config-keys.js';
import type { RunConfig } from '../settings/run-config.js';

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
