// How much KV cache an option's users make, from our model table (the reference's datasize table is
// 32× low for llama3.1-8b: its per-token size leaves out the layer count). Bytes per token =
// layers × kv_heads × head_dim × 2 (K and V) × bytes per element (model/models.ts); the largest
// entry is the longest context of the default user templates plus their longest generation.
import { BUILTIN_MODELS, entryBytes, kvBytesPerToken } from '../model/models.js';
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import { GiB } from '../util/units.js';

export interface Datasize {
  readonly model: string;
  readonly kvBytesPerToken: number;
  readonly largestRequestTokens: number;
  readonly largestEntryBytes: number;
  /** users × ranks × the largest entry: what the storage tier holds when every user's newest entry is its largest. */
  readonly oneLargestEntryPerUserBytes: number;
}

/** Undefined for a model outside the built-in table (a --config model: its size is known only to the run). */
export function datasizeOf(model: string, usersPerRank: number, ranks: number): Datasize | undefined {
  const m = BUILTIN_MODELS.get(model);
  if (m === undefined) return undefined;
  const templates = Object.values(DEFAULT_SETTINGS.userTemplates);
  const tokens = Math.max(...templates.map((t) => t.contextRange[1] + t.generationRange[1]));
  const largest = entryBytes(m, tokens);
  return {
    model,
    kvBytesPerToken: kvBytesPerToken(m),
    largestRequestTokens: tokens,
    largestEntryBytes: largest,
    oneLargestEntryPerUserBytes: largest * usersPerRank * ranks,
  };
}

export function datasizeLine(d: Datasize): string {
  return `# datasize: ${d.model} ${d.kvBytesPerToken} KV bytes/token; largest entry ${d.largestRequestTokens} tokens = ${(d.largestEntryBytes / GiB).toFixed(3)} GiB; one largest entry per user = ${(d.oneLargestEntryPerUserBytes / GiB).toFixed(1)} GiB (GiB = 2^30)`;
}
