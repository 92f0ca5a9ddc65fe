// One synthetic user's request stream (spec §4.3 steps 1–6). Each call to nextRequest decides, from
// the user's own random stream, everything about the next request: think time, conversation and
// turn, sizes, phase, key, and the per-request prefix and RAG draws that the reference made at
// processing time (spec §4.4 steps 1 and 3) — so the sequence is reproducible per seed whatever
// order the engine processes requests in. The session never waits: it returns the think time and
// the scheduled time on its own timeline, and the engine waits.
import type { Rng } from '../util/rng.js';
import type { ConversationManager } from './conversation.js';
import type { PrefixMatcher, SystemPrompt } from './prefix.js';
import type { RagRetrieval, RagSource } from './rag.js';
import { phaseFor } from './request.js';
import type { Request } from './request.js';
import { DEFAULT_WORKLOAD_SETTINGS } from './settings.js';
import type { WorkloadSettings } from './settings.js';
import type { UserProfile } from './users.js';
import { ragRequestKey, requestKey } from './keys.js';

export interface SessionOptions {
  readonly profile: UserProfile;
  /** The session's own stream (see sessionStream). */
  readonly rng: Rng;
  readonly settings?: WorkloadSettings;
  /**
   * Multi-turn conversations when given (shared by all sessions: the limit is global). Its
   * maxTurnsPerConv is the turn limit; settings.conversation gives the end probability.
   */
  readonly conversations?: ConversationManager;
  /** Prefix caching when given; only its (stateless) draw is used here. */
  readonly prefix?: PrefixMatcher;
  /** RAG when given. */
  readonly rag?: RagSource;
  /** Start of this session's timeline in ms (default 0). */
  readonly startAtMs?: number;
}

export interface SessionStep {
  /** Seconds to wait before issuing `request`: thinkTimeS × uniform(0.8, 1.2). */
  readonly thinkTimeS: number;
  readonly request: Request;
  /** The extra RAG request of step 6, issued right after `request`. */
  readonly ragRequest?: Request;
  /** The open conversation had been dropped by the manager's limit; a new one was started. */
  readonly conversationLost: boolean;
}

interface Turn {
  readonly cacheKey: string;
  readonly conversationId?: string;
  readonly turn: number;
  readonly previousTurnKeys: readonly string[];
  readonly lost: boolean;
}

/** The request stream of a user: `rng.fork(<userId>).fork('requests')`, apart from its profile draws. */
export function sessionStream(rng: Rng, userId: string): Rng {
  return rng.fork(userId).fork('requests');
}

export class UserSession {
  readonly profile: UserProfile;
  private readonly rng: Rng;
  private readonly settings: WorkloadSettings;
  private readonly conversations: ConversationManager | undefined;
  private readonly prefix: PrefixMatcher | undefined;
  private readonly rag: RagSource | undefined;
  private conversationId: string | undefined;
  private seq = 0;
  private clockMs: number;
  private lostCount = 0;

  constructor(opts: SessionOptions) {
    this.profile = opts.profile;
    this.rng = opts.rng;
    this.settings = opts.settings ?? DEFAULT_WORKLOAD_SETTINGS;
    this.conversations = opts.conversations;
    this.prefix = opts.prefix;
    this.rag = opts.rag;
    this.clockMs = opts.startAtMs ?? 0;
  }

  get userId(): string {
    return this.profile.userId;
  }

  /** Requests made so far (chat requests; RAG requests share their number). */
  get requestCount(): number {
    return this.seq;
  }

  /** Scheduled time of the last request on this session's timeline, ms. */
  get timeMs(): number {
    return this.clockMs;
  }

  /** The conversation the session last used, if multi-turn is on. */
  get currentConversation(): string | undefined {
    return this.conversationId;
  }

  /** Times an open conversation was found dropped (and replaced). */
  get conversationsLost(): number {
    return this.lostCount;
  }

  nextRequest(): SessionStep {
    const p = this.profile;
    const thinkTimeS = p.thinkTimeS * this.rng.uniform(0.8, 1.2);
    this.clockMs += thinkTimeS * 1000;
    const ending = this.conversations !== undefined && this.conversationId !== undefined && this.drawEnd(this.conversationId);
    const contextTokens = this.rng.int(Math.max(1, Math.floor(p.contextLength / 4)), p.contextLength);
    const generationTokens = this.rng.int(Math.max(1, Math.floor(p.generationLength / 4)), p.generationLength);
    const seq = this.seq++;
    const turn = this.nextTurn(ending, seq, contextTokens, generationTokens);
    if (turn.lost) this.lostCount++;
    const request: Request = {
      id: requestKey(p.userId, seq),
      kind: 'chat',
      userId: p.userId,
      qos: p.qos,
      priority: p.priority,
      contextTokens,
      generationTokens,
      phase: phaseFor(contextTokens),
      cacheKey: turn.cacheKey,
      ...(turn.conversationId !== undefined ? { conversationId: turn.conversationId } : {}),
      turn: turn.turn,
      previousTurnKeys: turn.previousTurnKeys,
      ...this.processingDraws(),
      scheduledAtMs: this.clockMs,
    };
    const ragRequest = this.ragRequest(seq);
    return ragRequest === undefined
      ? { thinkTimeS, request, conversationLost: turn.lost }
      : { thinkTimeS, request, ragRequest, conversationLost: turn.lost };
  }

  /** Step 2: end the open conversation with probability p, or when it reached the turn limit. */
  private drawEnd(convId: string): boolean {
    const mgr = this.conversations;
    if (mgr === undefined) return false;
    const byChance = this.rng.random() < this.settings.conversation.endConversationProbability;
    const atLimit = (mgr.turnNumber(convId) ?? 0) >= mgr.maxTurnsPerConv;
    return byChance || atLimit;
  }

  /** Step 4: the turn's key; a dropped conversation is replaced by a new one, never fatal. */
  private nextTurn(ending: boolean, seq: number, inputTokens: number, outputTokens: number): Turn {
    const mgr = this.conversations;
    if (mgr === undefined) return { cacheKey: requestKey(this.userId, seq), turn: 1, previousTurnKeys: [], lost: false };
    if (ending && this.conversationId !== undefined) {
      mgr.end(this.conversationId);
      this.conversationId = undefined;
    }
    let lost = false;
    let convId = this.conversationId ?? mgr.start(this.userId);
    let added = mgr.addTurn(convId, inputTokens, outputTokens);
    if (!added.ok) {
      lost = true;
      convId = mgr.start(this.userId);
      added = mgr.addTurn(convId, inputTokens, outputTokens);
    }
    // A conversation started just now is the most recent state and cannot have been dropped.
    if (!added.ok) throw new Error(`conversation ${convId} vanished right after it was started`);
    this.conversationId = convId;
    return { cacheKey: added.key, conversationId: convId, turn: added.turn, previousTurnKeys: mgr.previousTurnKeys(convId, added.turn), lost };
  }

  /** Spec §4.4 steps 1 and 3, drawn now: a shared system prompt, and RAG chunks to read. */
  private processingDraws(): ProcessingDraws {
    return drawProcessing(this.rng, this.settings, this.prefix, this.rag);
  }

  /** Step 6: with probability requestProbability, a decode request over retrieved chunks' tokens. */
  private ragRequest(seq: number): Request | undefined {
    const retrieval = drawRetrieval(this.rng, this.settings, this.rag);
    if (retrieval === undefined) return undefined;
    const p = this.profile;
    const [lo, hi] = this.settings.rag.ragGenerationTokens;
    return {
      id: `${p.userId}_rag_${String(seq).padStart(6, '0')}`,
      kind: 'rag',
      userId: p.userId,
      qos: p.qos,
      priority: p.priority,
      contextTokens: retrieval.totalTokens,
      generationTokens: this.rng.int(lo, hi),
      phase: 'decode',
      cacheKey: ragRequestKey(retrieval.docId),
      turn: 1,
      previousTurnKeys: [],
      ...this.processingDraws(),
      scheduledAtMs: this.clockMs,
    };
  }
}

/** One session per user, each on its own stream `sessionStream(rng, userId)`. */
export function createSessions(users: readonly UserProfile[], rng: Rng, opts: Omit<SessionOptions, 'profile' | 'rng'> = {}): UserSession[] {
  return users.map((profile) => new UserSession({ ...opts, profile, rng: sessionStream(rng, profile.userId) }));
}

export interface ProcessingDraws {
  readonly systemPrompt?: SystemPrompt;
  readonly ragRetrieval?: RagRetrieval;
}

/**
 * Spec §4.4 steps 1 and 3, drawn in this order: a shared system prompt, and RAG chunks to read. Used
 * by synthetic sessions and by dataset/trace replays alike, so both consume the stream the same way.
 */
export function drawProcessing(rng: Rng, settings: WorkloadSettings, prefix?: PrefixMatcher, rag?: RagSource): ProcessingDraws {
  const systemPrompt = prefix?.draw(rng);
  const ragRetrieval = drawRetrieval(rng, settings, rag);
  return {
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    ...(ragRetrieval !== undefined ? { ragRetrieval } : {}),
  };
}

/** With probability rag.requestProbability, the chunks a RAG read retrieves. */
function drawRetrieval(rng: Rng, settings: WorkloadSettings, rag?: RagSource): RagRetrieval | undefined {
  if (rag === undefined || rng.random() >= settings.rag.requestProbability) return undefined;
  const doc = rag.pickDocument(rng);
  return doc === undefined ? undefined : rag.retrieve(doc, rng);
}
