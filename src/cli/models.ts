// `kv-cache models [--json]`: the built-in model table with the KV-cache size each model implies, so a
// user can pick a model (and see what one entry costs the storage) before a run. Sizes come from the
// same functions the run uses (src/model/models.ts), so the table cannot disagree with a run.
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
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: readonly string[]): string =>
    c
      .map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(HEADERS), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** `args`: --json or nothing, as declared in subcommands.ts. */
export function modelsMain(args: ArgsOf<typeof MODELS_ARGS>): number {
  const rows = [...BUILTIN_MODELS.values()].map(modelRow);
  process.stdout.write(args.values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${modelsTable(rows)}\n`);
  return 0;
}
