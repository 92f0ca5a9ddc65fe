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

/**
 * Runs of whitespace or of non-whitespace longer than this are cut before tokenizing. The BPE merge
 * of one regex piece is quadratic in its length, and one piece can be a whole run of letters: a
 * 10 KB word took 14 s and a 100 KB word would take over 20 minutes. No cl100k token is longer than
 * this many characters, so text without such runs (almost every message) is counted exactly as by
 * tiktoken; a longer run is counted as consecutive pieces of this length, at most a token more per
 * cut than tiktoken would give.
 */
export const MAX_RUN_CHARS = 64;

/** JavaScript's `\s` (what the tokenizer's regex calls whitespace), one UTF-16 unit at a time. */
export function isRegexSpace(u: number): boolean {
  if (u <= 0x20) return u === 0x20 || (u >= 0x09 && u <= 0x0d);
  if (u < 0xa0) return false;
  return (
    u === 0xa0 ||
    u === 0x1680 ||
    (u >= 0x2000 && u <= 0x200a) ||
    u === 0x2028 ||
    u === 0x2029 ||
    u === 0x202f ||
    u === 0x205f ||
    u === 0x3000 ||
    u === 0xfeff
  );
}

/**
 * `text` as consecutive pieces in which no run of whitespace or of non-whitespace is longer than
 * `maxRun` UTF-16 units (a surrogate pair is never split). Linear; a text without long runs is one piece.
 */
export function* boundedRuns(text: string, maxRun = MAX_RUN_CHARS): Generator<string, void, undefined> {
  let start = 0;
  let runStart = 0;
  let runSpace = false;
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    const space = isRegexSpace(u);
    if (i === runStart || space !== runSpace) {
      if (space !== runSpace) runStart = i;
      runSpace = space;
    } else if (i - runStart >= maxRun && (u < 0xdc00 || u > 0xdfff)) {
      yield text.slice(start, i);
      start = i;
      runStart = i;
    }
  }
  if (start < text.length || text.length === 0) yield text.slice(start);
}

class Cl100kCounter implements TokenCounter {
  readonly name = 'cl100k_base';
  private encoder: Cl100kEncoder | undefined;

  count(text: string): number {
    if (text.length === 0) return 0;
    this.encoder ??= new Cl100kEncoder(loadCl100kRanks());
    let n = 0;
    for (const piece of boundedRuns(text)) n += this.encoder.count(piece);
    return n;
  }
}

/**
 * Counts cl100k_base tokens of a text as tiktoken does (regex pieces, each looked up whole, else
 * byte-pair merged), without building the token list. The merge keeps each adjacent pair's rank and
 * recomputes only the two pairs a merge changes: js-tiktoken recomputes every pair's key after every
 * merge, which made pieces of a few hundred characters cost seconds per megabyte. It needs the
 * encoder's rank map (not part of js-tiktoken's typed API); if a future version hides it, counting
 * falls back to js-tiktoken's own encode, which gives the same numbers more slowly.
 */
class Cl100kEncoder {
  private readonly tiktoken: Tiktoken;
  private readonly ranks: ReadonlyMap<string, number> | undefined;
  private readonly pattern: RegExp;
  private readonly utf8 = new TextEncoder();

  constructor(bpe: TiktokenBPE) {
    this.tiktoken = new Tiktoken(bpe);
    const ranks: unknown = Reflect.get(this.tiktoken, 'rankMap');
    this.ranks = ranks instanceof Map ? (ranks as Map<string, number>) : undefined;
    this.pattern = new RegExp(bpe.pat_str, 'gu');
  }

  count(text: string): number {
    // No special tokens: "<|endoftext|>" inside a chat message is counted as the plain text it is.
    // (Python tiktoken's default would raise, and the reference would then drop the whole dataset.)
    if (this.ranks === undefined) return this.tiktoken.encode(text, [], []).length;
    let n = 0;
    for (const m of text.matchAll(this.pattern)) {
      const bytes = this.utf8.encode(m[0]);
      n += this.ranks.has(bytes.join(',')) ? 1 : mergedTokens(bytes, this.ranks);
    }
    return n;
  }
}

/** Tokens of one piece after byte-pair merging (lowest rank first, leftmost on ties, as tiktoken). */
export function mergedTokens(bytes: Uint8Array, ranks: ReadonlyMap<string, number>): number {
  if (bytes.length <= 1) return bytes.length;
  const bounds = Array.from({ length: bytes.length + 1 }, (_, i) => i); // part k = bytes[bounds[k], bounds[k+1])
  const rankOf = (from: number, to: number): number => ranks.get(bytes.subarray(from, to).join(',')) ?? Infinity;
  const pairRanks = Array.from({ length: bytes.length - 1 }, (_, k) => rankOf(k, k + 2));
  while (pairRanks.length > 0) {
    let best = 0;
    for (let k = 1; k < pairRanks.length; k++) if (pairRanks[k] < pairRanks[best]) best = k;
    if (pairRanks[best] === Infinity) break;
    bounds.splice(best + 1, 1); // parts best and best+1 become one
    pairRanks.splice(best, 1);
    if (best > 0) pairRanks[best - 1] = rankOf(bounds[best - 1], bounds[best + 1]);
    if (best < pairRanks.length) pairRanks[best] = rankOf(bounds[best], bounds[best + 2]);
  }
  let tokens = 0; // tiktoken drops a part that is no token; with all 256 single bytes ranked there is none
  for (let k = 0; k + 1 < bounds.length; k++) if (ranks.has(bytes.subarray(bounds[k], bounds[k + 1]).join(','))) tokens++;
  return tokens;
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
