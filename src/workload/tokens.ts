// Token counting for dataset replay (docs/reference-compat.md#rc-32): the reference counts ShareGPT messages with tiktoken's
// `cl100k_base` when it is installed, else estimates `len(text) // 4` (at least 1). Here the real
// tokenizer is always available: js-tiktoken ships the cl100k_base ranks inside the npm package, so
// nothing is downloaded at run time. The estimate stays available as 'chars' for speed and parity
// with reference runs that had no tiktoken.
//
// The tokenizer is loaded lazily, on the first count() of a counter: requiring the ranks module costs
// ~10–40 ms, but building the encoder (decoding 100k base64 ranks into maps) takes ~0.6–1.0 s and ~33 MB
// of heap (measured on Node 20). A run that never replays a dataset pays nothing; a run that does
// should create one counter and share it.
import { createRequire } from 'node:module';
import { Tiktoken } from 'js-tiktoken/lite';
import type { TiktokenBPE } from 'js-tiktoken/lite';

export type TokenizerKind = 'cl100k_base' | 'chars';
export const TOKENIZER_KINDS: readonly TokenizerKind[] = ['cl100k_base', 'chars'];

export interface TokenCounter {
  /** 'cl100k_base', or `chars/<n>` for the estimate. */
  readonly name: string;
  /** Tokens in `text`. cl100k_base gives 0 for ''; the estimate is never below 1 (reference formula). */
  count(text: string): number;
}

/** The reference's fallback divisor: one token per 4 characters. */
export const DEFAULT_CHARS_PER_TOKEN = 4;

/**
 * A counter of the given kind. 'chars' = max(1, floor(characters / charsPerToken)), characters counted
 * as code points like Python's len().
 */
export function tokenCounter(kind: TokenizerKind, charsPerToken = DEFAULT_CHARS_PER_TOKEN): TokenCounter {
  switch (kind) {
    case 'cl100k_base':
      return new Cl100kCounter();
    case 'chars':
      return charsCounter(charsPerToken);
    default:
      throw new RangeError(`unknown tokenizer '${String(kind)}' (expected ${TOKENIZER_KINDS.join(' or ')})`);
  }
}

export function isTokenizerKind(s: string): s is TokenizerKind {
  return (TOKENIZER_KINDS as readonly string[]).includes(s);
}

function charsCounter(charsPerToken: number): TokenCounter {
  if (!Number.isFinite(charsPerToken) || charsPerToken <= 0) {
    throw new RangeError(`charsPerToken must be a positive number, got ${charsPerToken}`);
  }
  return {
    name: `chars/${charsPerToken}`,
    count: (text) => Math.max(1, Math.floor(codePointLength(text) / charsPerToken)),
  };
}

/** Length in code points (a surrogate pair is one character, as in Python). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

class Cl100kCounter implements TokenCounter {
  readonly name = 'cl100k_base';
  private encoder: Tiktoken | undefined;

  count(text: string): number {
    if (text.length === 0) return 0;
    this.encoder ??= new Tiktoken(loadCl100kRanks());
    // No special tokens: "<|endoftext|>" inside a chat message is counted as the plain text it is.
    // (Python tiktoken's default would raise, and the reference would then drop the whole dataset.)
    return this.encoder.encode(text, [], []).length;
  }
}

/** The ranks module (~1 MB of base64), required only when a cl100k counter first counts. */
function loadCl100kRanks(): TiktokenBPE {
  const require = createRequire(import.meta.url);
  const ranks: unknown = require('js-tiktoken/ranks/cl100k_base');
  if (!isTiktokenBpe(ranks)) throw new Error('js-tiktoken/ranks/cl100k_base does not export tokenizer ranks');
  return ranks;
}

function isTiktokenBpe(v: unknown): v is TiktokenBPE {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.pat_str === 'string' && typeof o.bpe_ranks === 'string' && typeof o.special_tokens === 'object' && o.special_tokens !== null
  );
}
