// The request value the workload hands to the engine, and the small rules attached to it
// (phase by context length, prefill tokens after a shared prefix, decode re-reads per batch).
// Everything the engine must do for a request is decided here, at generation time, from the
// user's own random stream, so the request sequence is reproducible whatever the processing order.
import type { Phase } from '../model/kv-access.js';
import type { QosLevel } from '../settings/choices.js';
import type { KvBlock } from './blocks.js';
import type { SystemPrompt } from './prefix.js';
import type { RagRetrieval } from './rag.js';

export type { Phase };

/** 'chat': a user's turn or request; 'rag': the extra retrieval request (docs/reference-compat.md#rc-26). */
export type RequestKind = 'chat' | 'rag';

export interface Request {
  /** `<userId>_req_<seq:06d>` (chat) or `<userId>_rag_<seq:06d>` (rag); unique per run. */
  readonly id: string;
  readonly kind: RequestKind;
  readonly userId: string;
  readonly qos: QosLevel;
  readonly priority: number;
  readonly contextTokens: number;
  readonly generationTokens: number;
  readonly phase: Phase;
  /**
   * The request's own entry: `<convId>_turn_<n>` in a conversation, `<userId>_req_<seq:06d>`
   * without multi-turn (the reference's bare Request object used `<userId>_ctx`), `rag_<docId>`
   * for a RAG request.
   */
  readonly cacheKey: string;
  readonly conversationId?: string;
  /** Turn number in the conversation; 1 outside conversations. */
  readonly turn: number;
  /**
   * Keys of the conversation's earlier turns (turns 1 … turn−1), snapshotted when the request was
   * made: the multi-turn full-context reload list. A snapshot, so later turns issued before this
   * request is processed are not read (the reference's open loop could read them and miss).
   */
  readonly previousTurnKeys: readonly string[];
  /** Shared system prompt this request starts with, if drawn (docs/reference-compat.md#rc-29). */
  readonly systemPrompt?: SystemPrompt;
  /** RAG chunks this request reads during processing, if drawn (docs/reference-compat.md#rc-27). */
  readonly ragRetrieval?: RagRetrieval;
  /**
   * The context's block chain when the source knows it (a Mooncake trace's hash ids); otherwise block
   * mode derives it from the prompt and conversation (workload/blocks.ts). Unused in whole-request mode.
   */
  readonly blocks?: readonly KvBlock[];
  /** Issue time on the workload's own timeline (ms from the session start); orders ties in the queue. */
  readonly scheduledAtMs: number;
}

/** Context at or above this many tokens is prefill-only (no decode reads), as in the reference. */
export const PREFILL_ONLY_THRESHOLD_TOKENS = 10_000;

/** 'prefill' when context ≥ 10,000 tokens, else 'both' (the reference's PREFILL_DECODE). */
export function phaseFor(contextTokens: number, threshold = PREFILL_ONLY_THRESHOLD_TOKENS): Phase {
  return contextTokens >= threshold ? 'prefill' : 'both';
}

export function hasPrefill(phase: Phase): boolean {
  return phase === 'prefill' || phase === 'both';
}

export function hasDecode(phase: Phase): boolean {
  return phase === 'decode' || phase === 'both';
}

/** Tokens the prefill writes: the context minus the shared prefix's tokens (at least 1). */
export function prefillTokens(req: Pick<Request, 'contextTokens' | 'systemPrompt'>): number {
  return Math.max(1, req.contextTokens - (req.systemPrompt?.tokens ?? 0));
}

/** Re-reads of the whole entry after a decode probe hit: ceil(generationTokens / batchSize). */
export function decodeBatchReads(generationTokens: number, batchSize: number): number {
  if (batchSize < 1) throw new RangeError(`decode batch size must be ≥ 1, got ${batchSize}`);
  return Math.ceil(generationTokens / batchSize);
}
