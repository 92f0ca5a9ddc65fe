// The config-file half of the settings table (docs/reference-compat.md#rc-3): every key of config.yaml,
// declared once with its type, range, default and help, in the reference's snake_case spelling. From
// this one schema come the YAML validation (cli/config-file.ts), the typed camelCase `Settings` the
// engine and workload read, the defaults, and the `effective_config.config` echo. A new key is one line
// here plus the code where it acts.
//
// Why zod (v4) rather than ajv: the schema is TypeScript, so the parsed file has a static type inferred
// from it (no hand-written interface that can drift); strictObject gives the reference's "unknown key at
// any level is an error"; and one safeParse reports every issue with its key path.
import * as z from 'zod';
import { integer } from './schema-int.js';
import { RETRIEVAL_DISTRIBUTIONS } from './choices.js';
import { DEFAULT_EVICTION } from './eviction.js';
import { modelEntrySchema } from './model-entries.js';
import { deepFreeze } from '../util/freeze.js';

const count = (min: number, def: number, help: string) => integer().min(min).default(def).describe(help);
const num = (min: number, def: number, help: string) => z.number().min(min).default(def).describe(help);
const positive = (def: number, help: string) => z.number().positive().default(def).describe(help);
const prob = (def: number, help: string) => z.number().min(0).max(1).default(def).describe(help);
const ratio = (def: number, help: string) => z.number().positive().max(1).default(def).describe(help);

/** An inclusive [low, high] pair: `[256, 1024]` in the file. */
function range(element: z.ZodNumber, def: [number, number], help: string) {
  return z
    .tuple([element, element])
    .refine(([lo, hi]) => lo <= hi, { message: 'must be ordered [low, high]: the first value exceeds the second' })
    .default(def)
    .describe(help);
}

const tokens = () => integer().min(1);
const seconds = () => z.number().min(0);

function userTemplate(ctx: [number, number], gen: [number, number], think: [number, number]) {
  return z
    .strictObject({
      context_range: range(tokens(), ctx, 'Tokens of context of a new conversation, drawn once per user'),
      generation_range: range(tokens(), gen, 'Tokens generated per request, drawn once per user'),
      think_time_range: range(seconds(), think, 'Seconds between a response and the next request, drawn once per user'),
    })
    .prefault({});
}

function qosProfile(priority: number, p95: number, p99: number, p999: number, p9999: number) {
  return z
    .strictObject({
      priority: integer().default(priority).describe('Scheduling priority of the class (higher first)'),
      target_latency_p95_ms: positive(p95, 'p95 end-to-end latency target (ms) of the QoS evaluation'),
      target_latency_p99_ms: positive(p99, 'p99 end-to-end latency target (ms)'),
      target_latency_p999_ms: positive(p999, 'p99.9 end-to-end latency target (ms)'),
      target_latency_p9999_ms: positive(p9999, 'p99.99 end-to-end latency target (ms)'),
    })
    .prefault({});
}

const rag = z
  .strictObject({
    chunk_size_tokens: count(1, 512, 'Tokens per RAG chunk entry'),
    top_k_chunks: count(1, 5, 'Chunks read per RAG request'),
    max_chunk_bytes: count(1, 268435456, 'Largest chunk entry in bytes (chunks shrink to fit)'),
    request_probability: prob(0.1, 'Share of requests that add a RAG retrieval'),
    retrieval_distribution: z.enum(RETRIEVAL_DISTRIBUTIONS).default('zipfian').describe('How retrieved chunks are chosen'),
    max_documents: count(0, 0, 'Documents kept (0 = unlimited; beyond it the oldest is evicted)'),
    large_model_doc_tokens_min: count(1, 1024, 'Shortest document (tokens) for a large model (hidden ≥ 8192 or layers ≥ 64)'),
    large_model_doc_tokens_max: count(1, 4096, 'Longest document (tokens) for a large model'),
    small_model_doc_tokens_min: count(1, 4000, 'Shortest document (tokens) for other models'),
    small_model_doc_tokens_max: count(1, 12000, 'Longest document (tokens) for other models'),
  })
  .superRefine((r, ctx) => {
    for (const size of ['large', 'small'] as const) {
      if (r[`${size}_model_doc_tokens_min`] > r[`${size}_model_doc_tokens_max`]) {
        ctx.addIssue({ code: 'custom', path: [`${size}_model_doc_tokens_min`], message: `must not exceed ${size}_model_doc_tokens_max` });
      }
    }
  })
  .prefault({});

const autoscaler = z
  .strictObject({
    min_users: count(1, 1, 'Fewest users the autoscaler keeps'),
    max_users: count(1, 10000, 'Most users the autoscaler may run'),
    scale_up_factor: positive(1.2, 'Users are multiplied by this when scaling up'),
    scale_down_factor: positive(0.8, 'Users are multiplied by this when scaling down'),
    consecutive_samples_required: count(
      1,
      2,
      'Samples in a row: the QoS autoscaler acts after this many over target; capacity mode measures each user count over this many and credits it with the lowest',
    ),
  })
  .superRefine((a, ctx) => {
    if (a.min_users > a.max_users) ctx.addIssue({ code: 'custom', path: ['min_users'], message: 'must not exceed max_users' });
  })
  .prefault({});

/** Every section but `model_configs`: the part that becomes `Settings`. */
const settingsShape = {
  user_templates: z
    .strictObject({
      chatbot: userTemplate([512, 4096], [50, 200], [0.1, 0.5]),
      coding: userTemplate([4096, 25000], [100, 500], [0.2, 1.0]),
      document: userTemplate([4096, 16384], [200, 800], [0.3, 1.5]),
    })
    .prefault({}),
  generation_timing: z
    .strictObject({
      none: num(0, 0, 'Seconds of simulated generation per token, --generation-mode none'),
      fast: num(0, 0.002, 'Seconds per token, --generation-mode fast'),
      realistic: num(0, 0.03, 'Seconds per token, --generation-mode realistic'),
    })
    .prefault({}),
  qos_profiles: z
    .strictObject({
      interactive: qosProfile(3, 50, 100, 150, 200),
      responsive: qosProfile(2, 100, 200, 350, 500),
      batch: qosProfile(1, 1000, 5000, 7500, 10000),
    })
    .prefault({}),
  qos_distribution: z
    .strictObject({
      interactive_probability: prob(0.15, 'A uniform draw below this makes a user interactive'),
      responsive_threshold: prob(0.5, 'A draw below this (and not interactive) makes it responsive; else batch'),
    })
    .prefault({}),
  eviction: z
    .strictObject({
      max_recursion_depth: count(0, DEFAULT_EVICTION.maxRecursionDepth, 'Deepest chain of demotions one placement may start'),
      target_usage_ratio: ratio(DEFAULT_EVICTION.targetUsageRatio, 'A full tier evicts down to this share of its capacity'),
      large_entry_limit_ratio: ratio(DEFAULT_EVICTION.largeEntryLimitRatio, 'An entry above this share of a tier skips it'),
      max_evictions_hard_cap: count(1, DEFAULT_EVICTION.maxEvictionsHardCap, 'Most evictions one placement may make'),
      max_evictions_min: count(0, DEFAULT_EVICTION.maxEvictionsMin, 'Evictions one placement may always make'),
    })
    .prefault({}),
  gpu_backend: z
    .strictObject({
      memory_fraction: ratio(0.9, 'Share of GPU memory usable (no effect: there is no CUDA backend)'),
      max_eviction_attempts: count(0, 100, 'GPU eviction attempts (no effect)'),
      free_memory_threshold: z.number().min(0).lt(1).default(0.1).describe('GPU free-memory threshold (no effect)'),
    })
    .prefault({}),
  prefix_cache: z
    .strictObject({
      min_prefix_length: count(0, 50, 'Shortest cached prefix in tokens (no effect, as in the reference)'),
      max_prefix_entries: count(0, 1000, 'Most cached prefixes (no effect, as in the reference)'),
      system_prompt_hit_probability: prob(0.2, 'Share of requests that start with a shared system prompt'),
    })
    .prefault({}),
  rag,
  conversation: z
    .strictObject({
      max_conversations: count(1, 1000, 'Live conversations kept (the least recently used is dropped)'),
      max_turns_per_conv: count(1, 50, 'Turns after which a conversation ends'),
      end_conversation_probability: prob(0.2, 'Chance that a conversation ends after a turn'),
    })
    .prefault({}),
  autoscaler,
  decode: z.strictObject({ batch_size: count(1, 32, 'Generated tokens per full-entry decode read') }).prefault({}),
  sharegpt: z
    .strictObject({
      // The reference's code caps at 16,384 (its yaml's 8,192 was never read): keep what it did.
      max_context_tokens: count(1, 16384, 'Longest ShareGPT context in tokens (longer turns are capped)'),
      max_generation_tokens: count(1, 2048, 'Longest ShareGPT response in tokens'),
      chars_per_token_estimate: count(1, 4, 'Characters per token of --tokenizer chars'),
    })
    .prefault({}),
  saturation_detection: z
    .strictObject({
      read_latency_p95_threshold_ms: positive(100, 'Storage read p95 (ms) at which the autoscaler calls storage saturated'),
      write_latency_p95_threshold_ms: positive(50, 'Write p95 threshold (no effect, as in the reference)'),
      queue_depth_threshold: count(1, 100, 'Queue depth threshold (no effect, as in the reference)'),
      history_window_size: count(1, 10, 'Autoscaler samples kept for the saturation trend'),
    })
    .prefault({}),
  // Defaults are the reference's hard-coded CLI limits, not its yaml's unused 1,024/16,384 GiB, so that
  // runs without a file behave exactly as the reference; a file may lower or raise them.
  validation_limits: z
    .strictObject({
      max_users: count(1, 100000, 'Upper bound of --num-users'),
      max_duration_seconds: count(1, 86400, 'Upper bound of --duration'),
      max_gpu_memory_gb: num(0, 65536, 'Upper bound of --gpu-mem-gb'),
      max_cpu_memory_gb: num(0, 131072, 'Upper bound of --cpu-mem-gb'),
    })
    .prefault({}),
};

export const configFileSchema = z.strictObject({
  model_configs: z.record(z.string(), modelEntrySchema).optional().describe('Models added to or overriding the built-in table'),
  ...settingsShape,
});

/** The file after validation, every default filled in. */
export type ConfigFile = z.output<typeof configFileSchema>;

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** A parsed section with camelCase keys; [low, high] pairs and other arrays are kept as they are. */
type Camelized<T> = T extends readonly unknown[]
  ? Readonly<T>
  : T extends object
    ? { readonly [K in keyof T as K extends string ? CamelCase<K> : K]: Camelized<T[K]> }
    : T;

/** Every config.yaml section but model_configs, defaults applied, keys in camelCase (`max_users` → `maxUsers`). */
export type Settings = Camelized<Omit<ConfigFile, 'model_configs'>>;

function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function camelize(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camelKey(k), camelize(x)]));
}

/** The typed Settings of a validated file. */
export function settingsOf(file: ConfigFile): Settings {
  const { model_configs: _models, ...sections } = file;
  return camelize(sections) as Settings;
}

/**
 * Settings from a config.yaml-shaped object (snake_case, any subset of keys), validated and with every
 * default applied. Throws zod's error on invalid input; files go through cli/config-file.ts instead,
 * which reports problems in words. For tests and programmatic callers.
 */
export function settingsFrom(input: object = {}): Settings {
  return settingsOf(configFileSchema.parse(input));
}

/** Every default: what a run without --config uses. */
export const DEFAULT_SETTINGS: Settings = deepFreeze(settingsFrom());

export type UserTemplate = Settings['userTemplates']['chatbot'];
export type QosProfile = Settings['qosProfiles']['batch'];
export type QosDistribution = Settings['qosDistribution'];
export type ConversationSettings = Settings['conversation'];
export type PrefixCacheSettings = Settings['prefixCache'];
export type RagSettings = Settings['rag'];
export type ValidationLimits = Settings['validationLimits'];
