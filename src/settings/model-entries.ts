// config.yaml `model_configs`: each entry adds a model or overrides fields of a built-in one (the
// reference merges field by field). Unlike the reference, which accepts any structure here and fills a
// new model's missing fields with arbitrary numbers (32 layers, 4096 hidden, …), entries are validated:
// unknown keys and wrong types are errors, a new model must state its shape, and MLA needs its widths.
// `total_params` / `active_params` (counts of parameters) give an entry the modelled TTFT the built-in
// models have (issue 35): the same compute model, attention widths heads × head dim.
import * as z from 'zod';
import { integer } from './schema-int.js';
import { BUILTIN_MODELS, kvBytesPerToken, withModelOverrides } from '../model/models.js';
import type { AttentionType, ComputeShape, ModelConfig } from '../model/models.js';

const DTYPES = ['float32', 'float16', 'bfloat16', 'int8'] as const;
const ATTENTION_TYPES = ['mha', 'gqa', 'mla'] as const;
/** The most parameters an entry may state: more is a typo (the largest published models have a few trillion). */
const PARAM_COUNT_MAX = 1e15;

export const modelEntrySchema = z.strictObject({
  name: z.string().min(1).optional(),
  num_layers: integer().min(1).optional(),
  hidden_dim: integer().min(1).optional(),
  num_heads: integer().min(1).optional(),
  kv_heads: integer().min(1).optional(),
  dtype: z.enum(DTYPES).optional(),
  /** 0 = derive hidden_dim / num_heads (as the reference's `_kv_dim_override`). */
  kv_dim_per_head: integer().min(0).optional(),
  attention_type: z.enum(ATTENTION_TYPES).optional(),
  kv_lora_rank: integer().min(0).optional(),
  qk_rope_head_dim: integer().min(0).optional(),
  /** Every parameter of the model, a count (8.03e9 for 8.03 B); with active_params, the modelled TTFT's compute. */
  total_params: integer().min(1).max(PARAM_COUNT_MAX).optional(),
  /** Parameters one token passes through, a count (a MoE's routed share); default total_params (a dense model). */
  active_params: integer().min(1).max(PARAM_COUNT_MAX).optional(),
});

export type ModelEntry = z.output<typeof modelEntrySchema>;

/** The keys a model entry may hold (for "valid keys" hints). */
export const MODEL_ENTRY_KEYS: readonly string[] = Object.keys(modelEntrySchema.shape);

const REQUIRED_FOR_NEW = ['num_layers', 'hidden_dim', 'num_heads', 'kv_heads'] as const;

/**
 * KV bytes per token a model may have: 4 GiB, so that an entry of a million (2^20) tokens is still an
 * exact integer byte count (below 2^53). Real models need well under 1 MiB per token (llama3.1-405b:
 * 504 KiB); a config entry beyond this is a typo, and its sizes would overflow the byte counters.
 */
export const MAX_KV_BYTES_PER_TOKEN = 2 ** 32;

/** The fewest parameters an entry may state: fewer is a count given in billions (`8` for 8 B). */
export const MIN_PARAM_COUNT = 1_000_000;

/** Fields whose change makes a built-in's explicit attention widths (heads × head dims) stale. */
const WIDTH_FIELDS = ['num_heads', 'hidden_dim', 'kv_dim_per_head', 'attention_type', 'kv_lora_rank', 'qk_rope_head_dim'] as const;

/**
 * The compute shape of a merged entry: its own counts over the built-in's; active defaults to total for
 * a new count (a dense model). A built-in's explicit attention widths stay unless the entry reshapes
 * its attention. Undefined without a total (no TTFT is modelled).
 */
function mergeCompute(e: ModelEntry, base: ModelConfig | undefined): ComputeShape | undefined {
  const totalParams = e.total_params ?? base?.compute?.totalParams;
  if (totalParams === undefined) return undefined;
  // A total given without an active count is a dense model's; a built-in's own active count stays with its own total.
  const activeParams = e.active_params ?? e.total_params ?? base?.compute?.activeParams ?? totalParams;
  const keepWidths = base?.compute !== undefined && WIDTH_FIELDS.every((f) => e[f] === undefined);
  const widths = keepWidths ? { qkWidth: base.compute.qkWidth, vWidth: base.compute.vWidth } : {};
  return {
    totalParams,
    activeParams,
    ...(widths.qkWidth !== undefined ? { qkWidth: widths.qkWidth } : {}),
    ...(widths.vWidth !== undefined ? { vWidth: widths.vWidth } : {}),
  };
}

/** Merges one entry over the built-in model of the same key, if any. Undefined when a required field is missing. */
function mergeModelEntry(key: string, e: ModelEntry, base: ModelConfig | undefined): ModelConfig | undefined {
  const numLayers = e.num_layers ?? base?.numLayers;
  const hiddenDim = e.hidden_dim ?? base?.hiddenDim;
  const numHeads = e.num_heads ?? base?.numHeads;
  const kvHeads = e.kv_heads ?? base?.kvHeads;
  if (numLayers === undefined || hiddenDim === undefined || numHeads === undefined || kvHeads === undefined) return undefined;
  const attentionType: AttentionType = e.attention_type ?? base?.attentionType ?? (kvHeads === numHeads ? 'mha' : 'gqa');
  const kvDimPerHead = e.kv_dim_per_head ?? base?.kvDimPerHead;
  const kvLoraRank = e.kv_lora_rank ?? base?.kvLoraRank;
  const qkRopeHeadDim = e.qk_rope_head_dim ?? base?.qkRopeHeadDim;
  const compute = mergeCompute(e, base);
  return {
    key,
    name: e.name ?? base?.name ?? key,
    numLayers,
    hiddenDim,
    numHeads,
    kvHeads,
    dtype: e.dtype ?? base?.dtype ?? 'float16',
    attentionType,
    ...(kvDimPerHead !== undefined && kvDimPerHead > 0 ? { kvDimPerHead } : {}),
    ...(kvLoraRank !== undefined ? { kvLoraRank } : {}),
    ...(qkRopeHeadDim !== undefined ? { qkRopeHeadDim } : {}),
    ...(compute !== undefined ? { compute } : {}),
  };
}

export interface ModelProblem {
  readonly path: readonly string[];
  readonly message: string;
}

/** A new model's required fields, MLA widths and a non-zero size, for one well-typed entry. */
function entryProblems(key: string, entry: ModelEntry): ModelProblem[] {
  const base = BUILTIN_MODELS.get(key);
  const out: ModelProblem[] = [];
  if (base === undefined) {
    for (const field of REQUIRED_FOR_NEW) {
      if (entry[field] === undefined) out.push({ path: [key, field], message: 'is required for a new model (not a built-in key)' });
    }
  }
  out.push(...paramProblems(key, entry, base));
  const m = mergeModelEntry(key, entry, base);
  if (m === undefined) return out;
  if (m.attentionType === 'mla' && ((m.kvLoraRank ?? 0) <= 0 || (m.qkRopeHeadDim ?? 0) <= 0)) {
    out.push({ path: [key], message: 'needs kv_lora_rank > 0 and qk_rope_head_dim > 0 (attention_type mla)' });
  } else if (kvBytesPerToken(m) <= 0) {
    out.push({ path: [key], message: 'has 0 KV bytes per token (hidden_dim / num_heads rounds down to 0; set kv_dim_per_head)' });
  } else if (!(kvBytesPerToken(m) <= MAX_KV_BYTES_PER_TOKEN)) {
    out.push({
      path: [key],
      message:
        `has ${kvBytesPerToken(m)} KV bytes per token (layers × KV heads × head dim × 2 × dtype bytes, or the MLA widths); ` +
        `at most ${MAX_KV_BYTES_PER_TOKEN} (4 GiB) are supported — real models need under 1 MiB`,
    });
  }
  return out;
}

/** total_params / active_params: counts of parameters in range, active within total, active not alone on a new model. */
function paramProblems(key: string, entry: ModelEntry, base: ModelConfig | undefined): ModelProblem[] {
  const out: ModelProblem[] = [];
  const min = MIN_PARAM_COUNT;
  for (const field of ['total_params', 'active_params'] as const) {
    const v = entry[field];
    if (v === undefined) continue;
    if (v < min)
      out.push({
        path: [key, field],
        message: `is ${v}: a count of parameters, not billions (8.03 B is 8030000000 or 8.03e9); at least ${min.toLocaleString('en-US')}`,
      });
  }
  const total = entry.total_params ?? base?.compute?.totalParams;
  if (entry.active_params !== undefined && total === undefined)
    out.push({ path: [key, 'active_params'], message: 'needs total_params (every parameter of the model) beside it' });
  else if (entry.active_params !== undefined && total !== undefined && entry.active_params > total)
    out.push({ path: [key, 'active_params'], message: `is ${entry.active_params}, more than total_params (${total})` });
  return out;
}

/**
 * Cross-field checks of the raw `model_configs` value. Run separately from the schema so that one
 * malformed entry does not hide the problems of the others (zod skips refinements of invalid input).
 */
export function modelTableProblems(raw: unknown): ModelProblem[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const lenient = z.object(modelEntrySchema.shape); // unknown keys are reported by the strict schema
  return Object.entries(raw).flatMap(([key, value]) => {
    const entry = lenient.safeParse(value);
    return entry.success ? entryProblems(key, entry.data) : [];
  });
}

/** The built-in table with validated `model_configs` entries merged in. */
export function buildModelTable(entries: Readonly<Record<string, ModelEntry>> | undefined): ReadonlyMap<string, ModelConfig> {
  const overrides: ModelConfig[] = [];
  for (const [key, entry] of Object.entries(entries ?? {})) {
    const m = mergeModelEntry(key, entry, BUILTIN_MODELS.get(key));
    if (m !== undefined) overrides.push(m);
  }
  return withModelOverrides(BUILTIN_MODELS, overrides);
}
