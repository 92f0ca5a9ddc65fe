// Multi-turn conversation bookkeeping (docs/reference-compat.md#rc-28): ids, turn numbers, turn keys and cumulative tokens,
// with at most maxConversations states kept (least recently used dropped first). Differences from
// the reference, on purpose:
// - ids use a per-user counter instead of epoch milliseconds, so runs are reproducible;
// - recency is a logical counter (each start/addTurn is one tick), not time.time();
// - dropping a live conversation is not fatal (docs/reference-compat.md#rc-28): addTurn reports
//   `{ ok: false }` and the caller starts a new conversation.
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import type { ConversationSettings } from '../settings/config-keys.js';
import { conversationId, turnKey } from './keys.js';

interface ConversationState {
  readonly id: string;
  readonly userId: string;
  turn: number;
  cumulativeTokens: number;
  readonly turnKeys: string[];
}

export type AddTurnResult =
  { readonly ok: true; readonly turn: number; readonly key: string } | { readonly ok: false; readonly reason: 'not_live' };

export interface ConversationStats {
  readonly started: number;
  readonly ended: number;
  /** States removed by the maxConversations limit. */
  readonly dropped: number;
  /** Of those, conversations that were still a user's open conversation. */
  readonly droppedLive: number;
}

export class ConversationManager {
  readonly maxConversations: number;
  readonly maxTurnsPerConv: number;
  /** Insertion order = recency order (oldest first): touching re-inserts at the end. */
  private readonly states = new Map<string, ConversationState>();
  private readonly activeByUser = new Map<string, string>();
  private readonly countByUser = new Map<string, number>();
  private started = 0;
  private ended = 0;
  private dropped = 0;
  private droppedLive = 0;

  constructor(settings: Partial<ConversationSettings> = {}) {
    this.maxConversations = settings.maxConversations ?? DEFAULT_SETTINGS.conversation.maxConversations;
    this.maxTurnsPerConv = settings.maxTurnsPerConv ?? DEFAULT_SETTINGS.conversation.maxTurnsPerConv;
    if (!Number.isInteger(this.maxConversations) || this.maxConversations < 1) {
      throw new RangeError(`maxConversations must be a positive integer, got ${this.maxConversations}`);
    }
    if (!Number.isInteger(this.maxTurnsPerConv) || this.maxTurnsPerConv < 1) {
      throw new RangeError(`maxTurnsPerConv must be a positive integer, got ${this.maxTurnsPerConv}`);
    }
  }

  /** Number of conversation states kept (open or ended, not yet dropped). */
  get size(): number {
    return this.states.size;
  }

  get stats(): ConversationStats {
    return { started: this.started, ended: this.ended, dropped: this.dropped, droppedLive: this.droppedLive };
  }

  /** Open a new conversation for `userId` (it becomes the user's open one); returns its id. */
  start(userId: string): string {
    while (this.states.size >= this.maxConversations) this.dropOldest();
    const n = (this.countByUser.get(userId) ?? 0) + 1;
    this.countByUser.set(userId, n);
    const id = conversationId(userId, n);
    this.states.set(id, { id, userId, turn: 0, cumulativeTokens: 0, turnKeys: [] });
    this.activeByUser.set(userId, id);
    this.started++;
    return id;
  }

  /** Whether the conversation's state is still kept (not dropped by the limit). */
  isLive(id: string): boolean {
    return this.states.has(id);
  }

  /** The user's open conversation, if any. */
  activeConversation(userId: string): string | undefined {
    return this.activeByUser.get(userId);
  }

  /**
   * Next turn: increments the turn number, adds both sides' tokens to the conversation's context
   * and returns the turn's key. A dropped (or unknown) conversation gives `{ ok: false }`.
   */
  addTurn(id: string, inputTokens = 0, outputTokens = 0): AddTurnResult {
    const s = this.touch(id);
    if (s === undefined) return { ok: false, reason: 'not_live' };
    s.turn += 1;
    s.cumulativeTokens += inputTokens + outputTokens;
    const key = turnKey(id, s.turn);
    s.turnKeys.push(key);
    return { ok: true, turn: s.turn, key };
  }

  /** Current turn number (0 before the first turn); undefined when not live. */
  turnNumber(id: string): number | undefined {
    return this.states.get(id)?.turn;
  }

  /** Tokens of every turn so far, input and output; undefined when not live. */
  contextSize(id: string): number | undefined {
    return this.states.get(id)?.cumulativeTokens;
  }

  /**
   * Keys of the turns before `currentTurn` (default: the latest turn), i.e. all keys except the
   * current one. Empty when not live.
   */
  previousTurnKeys(id: string, currentTurn?: number): string[] {
    const s = this.states.get(id);
    if (s === undefined) return [];
    const upTo = Math.min(currentTurn ?? s.turn, s.turnKeys.length + 1);
    return s.turnKeys.slice(0, Math.max(0, upTo - 1));
  }

  /** Close the conversation: it is no longer its user's open one; its state stays until dropped. */
  end(id: string): void {
    const s = this.states.get(id);
    if (s === undefined) return;
    if (this.activeByUser.get(s.userId) === id) this.activeByUser.delete(s.userId);
    this.ended++;
  }

  private touch(id: string): ConversationState | undefined {
    const s = this.states.get(id);
    if (s === undefined) return undefined;
    this.states.delete(id);
    this.states.set(id, s);
    return s;
  }

  /** Drop the least recently used state: the first in the map's order (touch re-inserts). */
  private dropOldest(): void {
    const first = this.states.values().next();
    if (first.done === true) return;
    const s = first.value;
    this.states.delete(s.id);
    this.dropped++;
    if (this.activeByUser.get(s.userId) === s.id) {
      this.activeByUser.delete(s.userId);
      this.droppedLive++;
    }
  }
}
