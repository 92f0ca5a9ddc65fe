// Requests from recorded workloads (docs/reference-compat.md#rc-31, #rc-33), shared by the recorded
// sources (engine/sources/): a recorded request's shape becomes a Request with the per-request draws
// the synthetic sessions also make, and a timeline pulled one item at a time becomes a pool of
// closed-loop virtual users: the trace sets arrival times, the number of users bounds what is in
// flight (the reference's unpaced producer grew its queue without bound, docs/reference-compat.md#rc-33).
import type { Rng } from '../../util/rng.js';
import { drawQos, qosPriority } from '../../workload/qos.js';
import type { PrefixMatcher } from '../../workload/prefix.js';
import type { RagSource } from '../../workload/rag.js';
import { phaseFor } from '../../workload/request.js';
import type { Request } from '../../workload/request.js';
import type { KvBlock } from '../../workload/blocks.js';
import type { Settings } from '../../settings/config-keys.js';
import { drawProcessing } from '../../workload/session.js';
import type { SessionStep } from '../../workload/session.js';
import type { StepSource, UserPool } from '../dispatcher.js';
import { servesRequest } from '../../workload/routing.js';
import type { RankShare } from './source.js';

export interface RecordedRequestContext {
  readonly settings: Settings;
  readonly rng: Rng;
  readonly multiTurn: boolean;
  readonly prefix?: PrefixMatcher;
  readonly rag?: RagSource;
}

/** What a recorded request says: sizes, key, turn, schedule; the rest is drawn. */
export interface RecordedShape {
  readonly id: string;
  readonly userId: string;
  readonly contextTokens: number;
  readonly generationTokens: number;
  readonly cacheKey: string;
  readonly turn: number;
  readonly conversationId?: string;
  readonly previousTurnKeys: readonly string[];
  readonly scheduledAtMs: number;
  /** The block chain, when the recording names its blocks (Mooncake). */
  readonly blocks?: readonly KvBlock[];
}

/** A Request with the per-request draws the synthetic sessions also make (QoS, prefix, RAG chunks). */
export function recordedStep(shape: RecordedShape, c: RecordedRequestContext): SessionStep {
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

/**
 * Virtual users over a timeline pulled one item at a time: each user pulls the next item when idle.
 * A timeline that throws (a file failing mid-run) ends for every user and is handed to `onError`.
 */
export function pulledUsers<T>(
  items: AsyncIterator<T>,
  shapeOf: (item: T) => RecordedShape,
  c: RecordedRequestContext,
  onError: (e: unknown) => void,
  share?: RankShare,
): UserPool {
  let ended = false;
  /** Requests passed so far, in trace order (every rank counts the same ones: the route's index). */
  let passed = 0;
  const pull = async (): Promise<RecordedShape | undefined> => {
    for (;;) {
      if (ended) return undefined;
      let it: IteratorResult<T>;
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
      const shape = shapeOf(it.value);
      if (share === undefined) return shape;
      const served = servesRequest(share.route, passed++, shape);
      share.onRequest(served, shape.blocks);
      if (served) return shape; // another rank's request is passed over, not replayed here
    }
  };
  return (): StepSource => ({
    next: async () => {
      const shape = await pull();
      return shape === undefined ? undefined : recordedStep(shape, c);
    },
  });
}
