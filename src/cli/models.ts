// `kv-cache models [--json]`: the built-in model table with the KV-cache size each model implies, so a
// user can pick a model (and see what one entry costs the storage) before a run. Sizes come from the
// same functions the run uses (src/model/models.ts), so the table cannot disagree with a run.
import { BUILTIN_MODELS, bytesPerElement, entryBytes, headDim, kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { MiB } from '../util/units.js';

const MODELS_HELP = `Usage: kv-cache models [--json]

Lists the built-in models: layers, KV heads, head dimension, bytes per element, KV bytes per token and
the size of one 1,024- and one 8,192-token cache entry (MiB = 2^20 bytes, one tensor-parallel rank).
--json prints the same table as a JSON array (sizes in bytes). A config file's model_configs may add
or override models; they are not listed here.`;

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

export function modelsMain(argv: readonly string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${MODELS_HELP}\n`);
    return 0;
  }
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.length > 0) {
    process.stderr.write(`kv-cache models: error: unexpected argument '${unknown[0]}' (valid: --json, --help)\n`);
    return 2;
  }
  const rows = [...BUILTIN_MODELS.values()].map(modelRow);
  process.stdout.write(argv.includes('--json') ? `${JSON.stringify(rows, null, 2)}\n` : `${modelsTable(rows)}\n`);
  return 0;
}
