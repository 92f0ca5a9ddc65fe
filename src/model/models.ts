// Model table and KV-cache bytes per token (docs/reference-compat.md#rc-1). The table is data: configuration may add or
// override entries (see withModelOverrides) without touching any code path.

export type AttentionType = 'mha' | 'gqa' | 'mla';
export type Dtype = 'float32' | 'float16' | 'bfloat16' | 'int8';

export interface ModelConfig {
  readonly key: string;
  readonly name: string;
  readonly numLayers: number;
  readonly hiddenDim: number;
  readonly numHeads: number;
  readonly kvHeads: number;
  readonly dtype: Dtype;
  /** Head dimension override; when absent it is hiddenDim / numHeads (integer division). */
  readonly kvDimPerHead?: number;
  readonly attentionType: AttentionType;
  /** MLA only: compressed latent width and decoupled RoPE key width. */
  readonly kvLoraRank?: number;
  readonly qkRopeHeadDim?: number;
  /** What prefill compute needs beyond the KV shape (src/model/compute.ts); absent: TTFT is not modelled. */
  readonly compute?: ComputeShape;
}

/**
 * Parameter counts and attention widths for the prefill compute model. Counts are the published
 * ones (sources beside each model below); attention widths default to heads × head dim.
 */
export interface ComputeShape {
  /** Every parameter of the model (embeddings included), as its publisher counts them. */
  readonly totalParams: number;
  /** Parameters one token passes through: the total for a dense model, the routed share for a MoE. */
  readonly activeParams: number;
  /** Query·key width per layer (heads × query/key head dim); default heads × head dim. */
  readonly qkWidth?: number;
  /** Value width per layer (heads × value head dim); default heads × head dim. */
  readonly vWidth?: number;
}

const BYTES_PER_ELEMENT: Readonly<Record<string, number>> = {
  float32: 4,
  float16: 2,
  bfloat16: 2,
  int8: 1,
};

/** Bytes per element; unknown dtypes count as 2, as the reference does. */
export function bytesPerElement(dtype: string): number {
  return BYTES_PER_ELEMENT[dtype] ?? 2;
}

export function headDim(m: ModelConfig): number {
  if (m.kvDimPerHead !== undefined && m.kvDimPerHead > 0) return m.kvDimPerHead;
  return Math.floor(m.hiddenDim / m.numHeads);
}

/** KV bytes per token: MHA/GQA layers × kv_heads × head_dim × 2 (K,V) × bytes; MLA layers × (latent + rope) × bytes. */
export function kvBytesPerToken(m: ModelConfig): number {
  const b = bytesPerElement(m.dtype);
  if (m.attentionType === 'mla') {
    return m.numLayers * ((m.kvLoraRank ?? 0) + (m.qkRopeHeadDim ?? 0)) * b;
  }
  return m.numLayers * m.kvHeads * headDim(m) * 2 * b;
}

/** Bytes of one entry of `tokens` tokens on one tensor-parallel rank (integer division, as the reference). */
export function entryBytes(m: ModelConfig, tokens: number, tensorParallel = 1): number {
  return entrySizeOf(kvBytesPerToken(m), tokens, tensorParallel);
}

/** entryBytes for a known bytes-per-token figure. */
export function entrySizeOf(bytesPerToken: number, tokens: number, tensorParallel = 1): number {
  return Math.floor((bytesPerToken * tokens) / tensorParallel);
}

function gqa(
  key: string,
  name: string,
  layers: number,
  hidden: number,
  heads: number,
  kvHeads: number,
  headDimOverride: number | undefined,
  compute: ComputeShape | undefined,
): ModelConfig {
  return {
    key,
    name,
    numLayers: layers,
    hiddenDim: hidden,
    numHeads: heads,
    kvHeads,
    dtype: 'float16',
    attentionType: kvHeads === heads ? 'mha' : 'gqa',
    ...(headDimOverride !== undefined ? { kvDimPerHead: headDimOverride } : {}),
    ...(compute !== undefined ? { compute } : {}),
  };
}

/** A dense model: every parameter is active for every token. */
const dense = (params: number): ComputeShape => ({ totalParams: params, activeParams: params });

export const BUILTIN_MODELS: ReadonlyMap<string, ModelConfig> = new Map(
  [
    // tiny-1b is the reference's synthetic test model, not a published one: 1 B by its name.
    gqa('tiny-1b', 'Tiny 1B', 12, 1024, 8, 4, 128, dense(1_000_000_000)),
    // Parameter counts of the dense models: their Hugging Face model cards (safetensors totals):
    // mistralai/Mistral-7B-v0.1 7.24 B, meta-llama/Llama-2-7b-hf 6.74 B, meta-llama/Llama-3.1-8B 8.03 B,
    // meta-llama/Llama-3.1-70B-Instruct 70.6 B, Qwen/Qwen3-32B 32.8 B ("Number of Parameters: 32.8B").
    gqa('mistral-7b', 'Mistral 7B', 32, 4096, 32, 8, undefined, dense(7_240_000_000)),
    gqa('llama2-7b', 'Llama 2 7B', 32, 4096, 32, 32, undefined, dense(6_740_000_000)),
    gqa('llama3.1-8b', 'Llama 3.1 8B', 32, 4096, 32, 8, undefined, dense(8_030_000_000)),
    gqa('llama3.1-70b-instruct', 'Llama 3.1 70B Instruct', 80, 8192, 64, 8, undefined, dense(70_600_000_000)),
    {
      key: 'deepseek-v3',
      name: 'DeepSeek V3',
      numLayers: 61,
      hiddenDim: 7168,
      numHeads: 128,
      kvHeads: 128,
      dtype: 'float16',
      attentionType: 'mla',
      kvLoraRank: 512,
      qkRopeHeadDim: 64,
      // DeepSeek-V3 technical report (arXiv 2412.19437): 671 B total, 37 B activated per token. Its
      // config.json: 128 heads, query/key head dim 128 + 64 (RoPE) = 192, value head dim 128; prefill
      // attends with the decompressed heads, so those widths, not the latent's, set the attention FLOPs.
      compute: { totalParams: 671_000_000_000, activeParams: 37_000_000_000, qkWidth: 128 * 192, vWidth: 128 * 128 },
    } satisfies ModelConfig,
    gqa('qwen3-32b', 'Qwen3 32B', 64, 5120, 64, 8, 128, dense(32_800_000_000)),
    // OpenAI's gpt-oss model card (Aug 2025): gpt-oss-120b 117 B total, 5.1 B active per token;
    // gpt-oss-20b 21 B total, 3.6 B active. Its alternating 128-token sliding-window layers are not
    // modelled: attention is counted as full on every layer (an over-estimate at long contexts).
    gqa('gpt-oss-120b', 'GPT OSS 120B (MoE)', 36, 2880, 64, 8, 64, { totalParams: 117_000_000_000, activeParams: 5_100_000_000 }),
    gqa('gpt-oss-20b', 'GPT OSS 20B (MoE)', 24, 2880, 64, 8, 64, { totalParams: 21_000_000_000, activeParams: 3_600_000_000 }),
  ].map((m) => [m.key, m]),
);

/** A new table with `overrides` added or replacing built-in entries of the same key. */
export function withModelOverrides(
  base: ReadonlyMap<string, ModelConfig>,
  overrides: readonly ModelConfig[],
): ReadonlyMap<string, ModelConfig> {
  const table = new Map(base);
  for (const m of overrides) table.set(m.key, m);
  return table;
}
