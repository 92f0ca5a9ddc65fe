// `kv-cache models [--json]`: the built-in model table with the KV-cache size each model implies, so a
// user can pick a model (and see what one entry costs the storage) before a run. Sizes come from the
// same functions the run uses (src/model/models.ts), so the table cannot disagree with a run. A second
// table gives each model's parameters and, per GPU profile, the read bandwidth above which loading a
// cached prefix beats recomputing it (src/model/compute.ts, issue 23).
import { breakEvenBytesPerSec, prefillShapeOf } from '../model/compute.js';
import { GPU_PROFILE_KEYS, GPU_PROFILES } from '../model/gpu-profiles.js';
import type { GpuProfileKey } from '../model/gpu-profiles.js';
import { BUILTIN_MODELS, bytesPerElement, entryBytes, headDim, kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { MiB } from '../util/units.js';
import type { ArgsOf } from './sub-args.js';
import type { MODELS_ARGS } from './subcommand-args.js';

/** One row of the table; sizes in bytes (the console converts to MiB). */
export interface ModelRow {
  readonly key: string;
  readonly name: string;
  readonly attention: string;
  readonly layers: number;
  readonly kv_heads: number;
  readonly head_dim: number;
  readonly dtype: string;
  readonly dtype_bytes: number;
  readonly kv_bytes_per_token: number;
  readonly entry_1k_tokens_bytes: number;
  readonly entry_8k_tokens_bytes: number;
  /** Published parameter counts; null for a model without them. */
  readonly total_params: number | null;
  readonly active_params: number | null;
  /** Per GPU profile: break-even read bandwidth per rank for an 8,192-token prefix at MFU 0.5 (bytes/s). */
  readonly break_even_bytes_per_sec: Readonly<Record<GpuProfileKey, number>> | null;
}

/** The prefix and utilisation the listed break-even bandwidths assume (the run's --mfu default). */
export const LISTED_BREAK_EVEN = { contextTokens: 8192, mfu: 0.5 } as const;

function breakEvenByProfile(m: ModelConfig): ModelRow['break_even_bytes_per_sec'] {
  const shape = prefillShapeOf(m);
  if (shape === undefined) return null;
  const { contextTokens, mfu } = LISTED_BREAK_EVEN;
  const at = (k: GpuProfileKey): number =>
    breakEvenBytesPerSec(m, shape, { profile: GPU_PROFILES[k], mfu, tensorParallel: 1 }, contextTokens);
  return Object.fromEntries(GPU_PROFILE_KEYS.map((k) => [k, at(k)])) as Record<GpuProfileKey, number>;
}

export function modelRow(m: ModelConfig): ModelRow {
  // MLA keeps one compressed latent per layer: its "heads" and head width are not what sizes the cache.
  const mla = m.attentionType === 'mla';
  return {
    key: m.key,
    name: m.name,
    attention: m.attentionType,
    layers: m.numLayers,
    kv_heads: mla ? 1 : m.kvHeads,
    head_dim: mla ? (m.kvLoraRank ?? 0) + (m.qkRopeHeadDim ?? 0) : headDim(m),
    dtype: m.dtype,
    dtype_bytes: bytesPerElement(m.dtype),
    kv_bytes_per_token: kvBytesPerToken(m),
    entry_1k_tokens_bytes: entryBytes(m, 1024),
    entry_8k_tokens_bytes: entryBytes(m, 8192),
    total_params: m.compute?.totalParams ?? null,
    active_params: m.compute?.activeParams ?? null,
    break_even_bytes_per_sec: breakEvenByProfile(m),
  };
}

const HEADERS = [
  'model',
  'attention',
  'layers',
  'KV heads',
  'head dim',
  'dtype bytes',
  'KV bytes/token',
  '1k-token entry MiB',
  '8k-token entry MiB',
];

/** Lines of an aligned table: the first `textColumns` columns left-aligned, the others right-aligned. */
function aligned(headers: readonly string[], cells: ReadonlyArray<readonly string[]>, textColumns: number): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: readonly string[]): string =>
    c
      .map((v, i) => (i < textColumns ? v.padEnd(widths[i]) : v.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)];
}

/** The compute table: parameters (billions) and the break-even read bandwidth (GB/s) per GPU profile. */
export function computeTable(rows: readonly ModelRow[]): string {
  const billions = (n: number | null): string => (n === null ? 'n/a' : (n / 1e9).toFixed(2));
  const cells = rows.map((r) => [
    r.key,
    billions(r.total_params),
    billions(r.active_params),
    ...GPU_PROFILE_KEYS.map((k) => (r.break_even_bytes_per_sec === null ? 'n/a' : (r.break_even_bytes_per_sec[k] / 1e9).toFixed(2))),
  ]);
  const { contextTokens, mfu } = LISTED_BREAK_EVEN;
  return [
    `Break-even read bandwidth per GPU rank (GB/s = 10^9 bytes/s): loading a cached ${contextTokens.toLocaleString('en-US')}-token prefix`,
    `beats recomputing it above this rate (prefill at MFU ${mfu}; it scales with the MFU; tensor parallelism cancels out). See docs/ttft.md.`,
    '',
    ...aligned(['model', 'params (B)', 'active (B)', ...GPU_PROFILE_KEYS], cells, 1),
  ].join('\n');
}

/** The aligned text table: text columns left-aligned, numbers right-aligned. */
export function modelsTable(rows: readonly ModelRow[]): string {
  const mib = (b: number): string => (b / MiB).toFixed(2);
  const cells = rows.map((r) => [
    r.key,
    r.attention,
    String(r.layers),
    String(r.kv_heads),
    String(r.head_dim),
    String(r.dtype_bytes),
    r.kv_bytes_per_token.toLocaleString('en-US'),
    mib(r.entry_1k_tokens_bytes),
    mib(r.entry_8k_tokens_bytes),
  ]);
  return aligned(HEADERS, cells, 2).join('\n');
}

/** `args`: --json or nothing, as declared in subcommands.ts. */
export function modelsMain(args: ArgsOf<typeof MODELS_ARGS>): number {
  const rows = [...BUILTIN_MODELS.values()].map(modelRow);
  process.stdout.write(args.values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${modelsTable(rows)}\n\n${computeTable(rows)}\n`);
  return 0;
}
