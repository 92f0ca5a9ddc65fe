// Shared system-prompt prefixes (docs/reference-compat.md#rc-29). With probability p a request starts with one of three
// fixed system prompts; its KV entry `kv_system_<id>` is shared by every user.
// Reference bug (docs/reference-compat.md#rc-29): it never allocated these keys, so every declared "hit" was a cache miss.
// Here the first sight of a prompt is reported (`firstSight`) so the engine writes the entry once;
// every later match is a real read of that entry.
//
// The draw (`draw`, from the caller's stream) is separate from the bookkeeping (`record`), so a
// session can decide reproducibly at generation time while first sight is settled in processing order.
import { createHash } from 'node:crypto';
import type { Rng } from '../util/rng.js';
import type { CacheType } from '../model/kv-access.js';
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import type { PrefixCacheSettings } from '../settings/config-keys.js';
import { systemPromptKey } from './keys.js';

export const SYSTEM_PROMPT_TEXTS: readonly string[] = [
  'You are a helpful assistant.',
  'You are a helpful assistant specialized in coding tasks.',
  'You are a helpful writing assistant.',
];

export interface SystemPrompt {
  readonly text: string;
  /** First 16 hex digits of SHA-256 of `<first 500 chars>_<word count>`. */
  readonly id: string;
  readonly key: string;
  /** Token count = word count, as the reference estimates it. */
  readonly tokens: number;
}

export interface PrefixMatch {
  readonly prompt: SystemPrompt;
  readonly cacheType: CacheType;
  /** True the first time this prompt is seen: the engine allocates (writes) its entry. */
  readonly firstSight: boolean;
}

export interface PrefixStats {
  readonly prefixHits: number;
  /** First sights of a prompt. */
  readonly prefixMisses: number;
  readonly systemPromptReuse: number;
  /** Never incremented (the reference has no common-phrase detection either). */
  readonly commonPhraseReuse: number;
  /** tokens × bytes per token over every reuse. */
  readonly bytesSaved: number;
}

/** Whitespace-separated word count (Python's str.split()). */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter((w) => w.length > 0).length;
}

export function systemPromptId(text: string): string {
  return createHash('sha256')
    .update(`${text.slice(0, 500)}_${wordCount(text)}`)
    .digest('hex')
    .slice(0, 16);
}

export function makeSystemPrompt(text: string): SystemPrompt {
  const id = systemPromptId(text);
  return { text, id, key: systemPromptKey(id), tokens: wordCount(text) };
}

export class PrefixMatcher {
  readonly prompts: readonly SystemPrompt[];
  private readonly seen = new Set<string>();
  private hits = 0;
  private misses = 0;
  private reuse = 0;
  private saved = 0;

  constructor(
    private readonly bytesPerToken: number,
    private readonly settings: PrefixCacheSettings = DEFAULT_SETTINGS.prefixCache,
    texts: readonly string[] = SYSTEM_PROMPT_TEXTS,
  ) {
    if (texts.length === 0) throw new RangeError('PrefixMatcher needs at least one system prompt');
    this.prompts = texts.map(makeSystemPrompt);
  }

  /** With probability systemPromptHitProbability, one prompt chosen uniformly; no state changes. */
  draw(rng: Rng): SystemPrompt | undefined {
    if (rng.random() >= this.settings.systemPromptHitProbability) return undefined;
    return rng.pick(this.prompts);
  }

  /** Account one use of `prompt`: a miss on first sight, else a hit that saves its bytes. */
  record(prompt: SystemPrompt): PrefixMatch {
    const firstSight = !this.seen.has(prompt.id);
    if (firstSight) {
      this.seen.add(prompt.id);
      this.misses++;
    } else {
      this.hits++;
      this.reuse++;
      this.saved += prompt.tokens * this.bytesPerToken;
    }
    return { prompt, cacheType: 'system', firstSight };
  }

  /** draw + record in one step. */
  match(rng: Rng): PrefixMatch | undefined {
    const p = this.draw(rng);
    return p === undefined ? undefined : this.record(p);
  }

  /** Whether `record` has seen this prompt (its entry should exist). */
  isKnown(promptId: string): boolean {
    return this.seen.has(promptId);
  }

  get stats(): PrefixStats {
    return {
      prefixHits: this.hits,
      prefixMisses: this.misses,
      systemPromptReuse: this.reuse,
      commonPhraseReuse: 0,
      bytesSaved: this.saved,
    };
  }
}
