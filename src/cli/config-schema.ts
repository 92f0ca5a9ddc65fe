// Strict schema of config.yaml (spec §9.2), in the reference's snake_case keys, with every default.
//
// Why zod (v4) rather than ajv: the schema is TypeScript, so the parsed file has a static type inferred
// from it (no hand-written interface that can drift from a JSON Schema); strictObject gives the
// reference's "unknown key at any level is an error"; defaults and range checks sit next to each key;
// and one safeParse reports every issue with its key path, which is what "report all problems at once"
// needs. ajv would need a JSON Schema plus a parallel TS type and its own error-path plumbing.
import * as z from 'zod';
import { integer } from './schema-int.js';
import { RETRIEVAL_DISTRIBUTIONS } from '../engine/run-config.js';
import { DEFAULT_EVICTION } from '../cache/tiered-cache.js';
import { modelEntrySchema } from './model-table.js';

const count = (min: number, def: number) => integer().min(min).default(def);
const num = (min: number, def: number) => z.number().min(min).default(def);
const positive = (def: number) => z.number().positive().default(def);
const prob = (def: number) => z.number().min(0).max(1).default(def);
const ratio = (def: number) => z.number().positive().max(1).default(def);

/** An inclusive [low, high] pair: `[256, 1024]` in the file. */
function range(element: z.ZodNumber, def: [number, number]) {
  return z
    .tuple([element, element])
    .refine(([lo, hi]) => lo <= hi, { message: 'must be ordered [low, high]: the first value exceeds the second' })
    .default(def);
}

const tokens = () => integer().min(1);
const seconds = () => z.number().min(0);

function userTemplate(ctx: [number, number], gen: [number, number], think: [number, number]) {
  return z
    .strictObject({
      context_range: range(tokens(), ctx),
      generation_range: range(tokens(), gen),
      think_time_range: range(seconds(), think),
    })
    .prefault({});
}

function qosProfile(priority: number, p95: number, p99: number, p999: number, p9999: number) {
  return z
    .strictObject({
      priority: integer().default(priority),
      target_latency_p95_ms: positive(p95),
      target_latency_p99_ms: positive(p99),
      target_latency_p999_ms: positive(p999),
      target_latency_p9999_ms: positive(p9999),
    })
    .prefault({});
}

const rag = z
  .strictObject({
    chunk_size_tokens: count(1, 512),
    top_k_chunks: count(1, 5),
    max_chunk_bytes: count(1, 268435456),
    request_probability: prob(0.1),
    retrieval_distribution: z.enum(RETRIEVAL_DISTRIBUTIONS).default('zipfian'),
    max_documents: count(0, 0),
    large_model_doc_tokens_min: count(1, 1024),
    large_model_doc_tokens_max: count(1, 4096),
    small_model_doc_tokens_min: count(1, 4000),
    small_model_doc_tokens_max: count(1, 12000),
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
    min_users: count(1, 1),
    max_users: count(1, 10000),
    scale_up_factor: positive(1.2),
    scale_down_factor: positive(0.8),
    consecutive_samples_required: count(1, 2),
  })
  .superRefine((a, ctx) => {
    if (a.min_users > a.max_users) ctx.addIssue({ code: 'custom', path: ['min_users'], message: 'must not exceed max_users' });
  })
  .prefault({});

export const configFileSchema = z.strictObject({
  model_configs: z.record(z.string(), modelEntrySchema).optional(),
  user_templates: z
    .strictObject({
      chatbot: userTemplate([512, 4096], [50, 200], [0.1, 0.5]),
      coding: userTemplate([4096, 25000], [100, 500], [0.2, 1.0]),
      document: userTemplate([4096, 16384], [200, 800], [0.3, 1.5]),
    })
    .prefault({}),
  generation_timing: z.strictObject({ none: num(0, 0), fast: num(0, 0.002), realistic: num(0, 0.03) }).prefault({}),
  qos_profiles: z
    .strictObject({
      interactive: qosProfile(3, 50, 100, 150, 200),
      responsive: qosProfile(2, 100, 200, 350, 500),
      batch: qosProfile(1, 1000, 5000, 7500, 10000),
    })
    .prefault({}),
  qos_distribution: z.strictObject({ interactive_probability: prob(0.15), responsive_threshold: prob(0.5) }).prefault({}),
  eviction: z
    .strictObject({
      max_recursion_depth: count(0, DEFAULT_EVICTION.maxRecursionDepth),
      target_usage_ratio: ratio(DEFAULT_EVICTION.targetUsageRatio),
      large_entry_limit_ratio: ratio(DEFAULT_EVICTION.largeEntryLimitRatio),
      max_evictions_hard_cap: count(1, DEFAULT_EVICTION.maxEvictionsHardCap),
      max_evictions_min: count(0, DEFAULT_EVICTION.maxEvictionsMin),
    })
    .prefault({}),
  gpu_backend: z
    .strictObject({
      memory_fraction: ratio(0.9),
      max_eviction_attempts: count(0, 100),
      free_memory_threshold: z.number().min(0).lt(1).default(0.1),
    })
    .prefault({}),
  prefix_cache: z
    .strictObject({
      min_prefix_length: count(0, 50),
      max_prefix_entries: count(0, 1000),
      system_prompt_hit_probability: prob(0.2),
    })
    .prefault({}),
  rag,
  conversation: z
    .strictObject({
      max_conversations: count(1, 1000),
      max_turns_per_conv: count(1, 50),
      end_conversation_probability: prob(0.2),
    })
    .prefault({}),
  autoscaler,
  decode: z.strictObject({ batch_size: count(1, 32) }).prefault({}),
  sharegpt: z
    .strictObject({
      // The reference's code caps at 16,384 (its yaml's 8,192 was never read): keep what it did.
      max_context_tokens: count(1, 16384),
      max_generation_tokens: count(1, 2048),
      chars_per_token_estimate: count(1, 4),
    })
    .prefault({}),
  saturation_detection: z
    .strictObject({
      read_latency_p95_threshold_ms: positive(100),
      write_latency_p95_threshold_ms: positive(50),
      queue_depth_threshold: count(1, 100),
      history_window_size: count(1, 10),
    })
    .prefault({}),
  // Defaults are the reference's hard-coded CLI limits (spec §9.1), not its yaml's unused 1,024/16,384 GiB,
  // so that runs without a file behave exactly as the reference; a file may lower or raise them.
  validation_limits: z
    .strictObject({
      max_users: count(1, 100000),
      max_duration_seconds: count(1, 86400),
      max_gpu_memory_gb: num(0, 65536),
      max_cpu_memory_gb: num(0, 131072),
    })
    .prefault({}),
});

/** The file after validation, every default filled in. */
export type ConfigFile = z.output<typeof configFileSchema>;
