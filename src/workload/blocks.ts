// Block-granular KV cache (--kv-block-tokens; docs/workloads.md#block-granular-kv-cache): a request's
// context is a chain of fixed-size token blocks, each keyed by a hash of the chain up to and including
// it, as vLLM's prefix caching, LMCache's chunks and Mooncake's traces key theirs. Two requests whose
// contexts start with the same tokens therefore start with the same keys, for exactly as many blocks as
// the shared tokens fill.
//
// What the tokens are is described, not stored: a context is a list of segments, each a run of tokens
// named by an id (a shared system prompt, a conversation's body). A block's key hashes its parent's key
// with the pieces of segments it covers (id and token range), so equal pieces in equal order give equal
// keys, and a partial block (the chain's last, fewer than N tokens) never shares a key with the full
// block a longer context has in its place.
import { createHash } from 'node:crypto';
import { MAX_BLOCK_TOKENS } from '../settings/choices.js';

/** One block of a request's chain: its key and how many tokens it holds (N, or fewer for the last). */
export interface KvBlock {
  readonly key: string;
  readonly tokens: number;
}

/** A run of `tokens` tokens whose content is named by `id`: equal ids mean equal tokens. */
export interface TokenSegment {
  readonly id: string;
  readonly tokens: number;
}

/** Keys start with this, so block entries are told apart from whole-request entries at a glance. */
const BLOCK_KEY_PREFIX = 'kvb_';

/**
 * The chain of blocks of `blockTokens` tokens over the segments, in order. The last block holds the
 * remainder (not padded: an engine stores the KV it computed, and padding would count bytes no engine
 * writes). Segments of 0 tokens contribute nothing.
 */
export function blockChain(segments: readonly TokenSegment[], blockTokens: number): KvBlock[] {
  if (!Number.isSafeInteger(blockTokens) || blockTokens < 1 || blockTokens > MAX_BLOCK_TOKENS)
    throw new RangeError(`block size must be an integer from 1 to ${MAX_BLOCK_TOKENS} tokens, got ${blockTokens}`);
  const blocks: KvBlock[] = [];
  let parent = '';
  let pieces: string[] = [];
  let filled = 0;
  const close = (): void => {
    const key = BLOCK_KEY_PREFIX + createHash('sha256').update(parent).update('\n').update(pieces.join('|')).digest('hex').slice(0, 24);
    blocks.push({ key, tokens: filled });
    parent = key;
    pieces = [];
    filled = 0;
  };
  for (const seg of segments) {
    if (!Number.isSafeInteger(seg.tokens) || seg.tokens < 0) throw new RangeError(`segment '${seg.id}' has ${seg.tokens} tokens`);
    let offset = 0;
    while (offset < seg.tokens) {
      const take = Math.min(blockTokens - filled, seg.tokens - offset);
      pieces.push(`${seg.id.length}:${seg.id}:${offset}+${take}`);
      offset += take;
      filled += take;
      if (filled === blockTokens) close();
    }
  }
  if (filled > 0) close();
  return blocks;
}

/** Tokens of a chain. */
export function chainTokens(blocks: readonly KvBlock[]): number {
  let n = 0;
  for (const b of blocks) n += b.tokens;
  return n;
}
