// The results of `kv-cache size` (issue 33, docs/sizing.md): a document (its zod schema below, printed
// by `kv-cache schema size`), the console table and the CSV, all from the same document, so what is
// printed is what is saved. Pure functions of the curves; nothing here measures.
import { z } from 'zod';
import type { CurvePoint, HitCurve } from '../metrics/hit-curve.js';
import { BINS_PER_OCTAVE } from '../metrics/hit-curve.js';
import { GiB } from '../util/units.js';

export const SIZE_SCHEMA_VERSION = '1.0.0';

/** Shares of the ideal hit rate whose capacity is reported. */
export const KNEE_SHARES = [0.5, 0.9, 0.95, 0.99] as const;

const rate = (d: string) => z.number().min(0).max(1).describe(d);
const bytes = (d: string) => z.number().nonnegative().describe(`${d} (bytes)`);

const PointSchema = z.object({
  capacity_bytes: bytes('cache capacity of the deployment (all servers together)'),
  token_hit_rate: rate('tokens served from the cache ÷ tokens the requests asked for'),
  block_hit_rate: rate('blocks served from the cache ÷ blocks asked for'),
  hit_bytes: bytes('bytes of the blocks served from the cache'),
  read_bytes_per_sec: z
    .number()
    .nonnegative()
    .nullable()
    .describe("bytes/s the hits need at the trace's own request rate; null without a time span"),
  read_bytes_per_sec_at_speedup: z
    .number()
    .nonnegative()
    .nullable()
    .describe('the same at --trace-speedup (recorded sources with a speed-up other than 1); else null'),
  gpu_seconds_saved_per_hour: z
    .number()
    .nonnegative()
    .nullable()
    .describe('modelled prefill GPU-seconds the hits save per hour of traffic (--gpu-profile, --mfu); null when not modelled'),
  requested: z.boolean().describe('a capacity named by --capacities (else one of the log-spaced list)'),
});

const DeploymentSchema = z.object({
  pool: z.enum(['single', 'shared', 'private']).describe('one server; N servers sharing one pool; N servers each with its own pool'),
  servers: z.number().int().positive(),
  route: z.enum(['replicate', 'session', 'round-robin']).nullable().describe('how requests were divided among private pools'),
  distinct_blocks: z.number().int().nonnegative(),
  distinct_bytes: bytes('bytes of every distinct block: past this capacity nothing is evicted'),
  exact_from_bytes: bytes('the curve is exact from this capacity on (the largest chain, × servers for private pools; docs/sizing.md)'),
  ideal: z.object({
    token_hit_rate: rate('with unlimited capacity'),
    block_hit_rate: rate('with unlimited capacity'),
  }),
  no_reuse: z.boolean().describe('no block was asked twice: the curve is flat at 0'),
  knees: z
    .array(
      z.object({
        share_of_ideal: z.number(),
        capacity_bytes: bytes('smallest capacity of the 64-per-octave grid reaching the share'),
        token_hit_rate: rate('at that capacity'),
      }),
    )
    .describe('empty when there is no reuse'),
  points: z.array(PointSchema).describe('powers of two from the largest block to where the ideal is reached, and the --capacities'),
  curve: z
    .array(z.object({ capacity_bytes: z.number(), token_hit_rate: z.number() }))
    .describe('8 points per octave, for charts (exact at each)'),
});

export const SizeDocumentSchema = z.object({
  kvcache_bench: z.object({
    kind: z.literal('size'),
    schema_version: z.literal(SIZE_SCHEMA_VERSION),
    version: z.string(),
  }),
  workload: z.object({
    source: z.record(z.string(), z.unknown()).describe("the run's workload_source block"),
    model: z.string(),
    block_tokens: z.number().int().positive(),
    kv_bytes_per_token: z.number().nonnegative().describe('per tensor-parallel rank'),
    requests: z.number().int().nonnegative(),
    block_references: z.number().int().nonnegative(),
    tokens_asked: z.number().nonnegative(),
    span_seconds: z.number().nonnegative().describe("first to last request at the trace's own pace"),
    requests_per_sec: z.number().nonnegative().nullable(),
    trace_speedup: z.number().nonnegative(),
  }),
  compute: z.union([
    z.object({ modelled: z.literal(true), gpu_profile: z.string(), mfu: z.number(), tensor_parallel: z.number().int() }),
    z.object({ modelled: z.literal(false), reason: z.string() }),
  ]),
  deployments: z.array(DeploymentSchema),
  measured_run: z
    .object({ path: z.string(), capacity_bytes: z.number(), token_hit_rate: rate('the run\u2019s kv_blocks.token_hit_rate.total') })
    .nullable(),
});

export type SizeDocument = z.infer<typeof SizeDocumentSchema>;
export type SizePoint = z.infer<typeof PointSchema>;
export type SizeDeployment = z.infer<typeof DeploymentSchema>;

export function sizeJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(SizeDocumentSchema, { target: 'draft-2020-12' });
}

/** What the document is built from (engine/sizing.ts's outcome, flattened by the CLI). */
export interface SizeInputs {
  readonly version: string;
  readonly source: Record<string, unknown>;
  readonly model: string;
  readonly blockTokens: number;
  readonly bytesPerToken: number;
  readonly requests: number;
  readonly references: number;
  readonly spanSeconds: number;
  /** Recorded sources: the speed-up the run would replay at; 1 otherwise. */
  readonly traceSpeedup: number;
  readonly recorded: boolean;
  readonly compute: SizeDocument['compute'];
  readonly deployments: ReadonlyArray<{
    readonly pool: 'single' | 'shared' | 'private';
    readonly servers: number;
    readonly route: 'replicate' | 'session' | 'round-robin' | undefined;
    readonly curve: HitCurve;
    readonly distinctBlocks: number;
    readonly distinctBytes: number;
  }>;
  readonly requested: readonly number[];
  readonly measuredRun?: SizeDocument['measured_run'];
}

function deployment(i: SizeInputs, d: SizeInputs['deployments'][number]): SizeDeployment {
  const totals = d.curve.totals();
  const ideal = d.curve.ideal();
  const ratio = (a: number, b: number): number => (b > 0 ? a / b : 0);
  const grid = d.curve.gridPoints();
  const perSec = i.spanSeconds > 0 ? 1 / i.spanSeconds : undefined;
  const point = (p: CurvePoint, requested: boolean): SizePoint => ({
    capacity_bytes: p.capacity,
    token_hit_rate: ratio(p.tokens, totals.tokens),
    block_hit_rate: ratio(p.blocks, totals.blocks),
    hit_bytes: p.bytes,
    read_bytes_per_sec: perSec !== undefined ? p.bytes * perSec : null,
    read_bytes_per_sec_at_speedup:
      perSec !== undefined && i.recorded && i.traceSpeedup > 0 && i.traceSpeedup !== 1 ? p.bytes * perSec * i.traceSpeedup : null,
    gpu_seconds_saved_per_hour: perSec !== undefined && i.compute.modelled ? p.gain * perSec * 3600 : null,
    requested,
  });
  const { maxChainBytes, maxBlockBytes } = d.curve.extremes();
  const noReuse = ideal.tokens === 0;
  // Powers of two from the largest block to the first where the ideal is reached (at most 64 of them).
  const listed: CurvePoint[] = [];
  if (totals.blocks > 0) {
    const from = Math.max(0, Math.floor(Math.log2(Math.max(1, maxBlockBytes * (d.pool === 'private' ? d.servers : 1)))));
    for (let k = from; k < from + 64; k++) {
      const p = grid[k * BINS_PER_OCTAVE];
      if (p === undefined) break;
      listed.push(p);
      if (p.tokens >= ideal.tokens) break;
    }
  }
  const probes = d.curve.probePoints();
  const named = new Set(probes.map((p) => p.capacity));
  const points = [...listed.filter((p) => !named.has(p.capacity)).map((p) => point(p, false)), ...probes.map((p) => point(p, true))].sort(
    (a, b) => a.capacity_bytes - b.capacity_bytes || Number(a.requested) - Number(b.requested),
  );
  const knees = noReuse
    ? []
    : KNEE_SHARES.map((share) => {
        const p = grid.find((g) => g.tokens >= share * ideal.tokens) ?? grid.at(-1);
        return { share_of_ideal: share, capacity_bytes: p?.capacity ?? 0, token_hit_rate: ratio(p?.tokens ?? 0, totals.tokens) };
      });
  // The chart's curve: every 8th grid edge from the first listed capacity to twice the last.
  const step = BINS_PER_OCTAVE / 8;
  const lo = Math.max(0, Math.floor(Math.log2(Math.max(1, listed[0]?.capacity ?? 1))) * BINS_PER_OCTAVE);
  const hi = Math.min(grid.length - 1, (Math.ceil(Math.log2(Math.max(2, listed.at(-1)?.capacity ?? 2))) + 1) * BINS_PER_OCTAVE);
  const curve: SizeDeployment['curve'] = [];
  for (let b = lo; b <= hi; b += step) {
    const p = grid[b];
    if (p !== undefined) curve.push({ capacity_bytes: p.capacity, token_hit_rate: ratio(p.tokens, totals.tokens) });
  }
  return {
    pool: d.pool,
    servers: d.servers,
    route: d.route ?? null,
    distinct_blocks: d.distinctBlocks,
    distinct_bytes: d.distinctBytes,
    exact_from_bytes: maxChainBytes * (d.pool === 'private' ? d.servers : 1),
    ideal: { token_hit_rate: ratio(ideal.tokens, totals.tokens), block_hit_rate: ratio(ideal.blocks, totals.blocks) },
    no_reuse: noReuse,
    knees,
    points,
    curve,
  };
}

export function buildSizeDocument(i: SizeInputs): SizeDocument {
  const first = i.deployments[0]?.curve.totals();
  return {
    kvcache_bench: { kind: 'size', schema_version: SIZE_SCHEMA_VERSION, version: i.version },
    workload: {
      source: i.source,
      model: i.model,
      block_tokens: i.blockTokens,
      kv_bytes_per_token: i.bytesPerToken,
      requests: i.requests,
      block_references: i.references,
      tokens_asked: first?.tokens ?? 0,
      span_seconds: i.spanSeconds,
      requests_per_sec: i.spanSeconds > 0 ? i.requests / i.spanSeconds : null,
      trace_speedup: i.traceSpeedup,
    },
    compute: i.compute,
    deployments: i.deployments.map((d) => deployment(i, d)),
    measured_run: i.measuredRun ?? null,
  };
}

/** Bytes in binary units, 3 significant figures: 512 MiB, 1.5 TiB. */
export function capacityText(b: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let v = b;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  const text = v.toFixed(digits);
  return `${digits > 0 ? text.replace(/\.?0+$/, '') : text} ${units[u] ?? ''}`;
}

function gbps(v: number | null): string {
  return v === null ? 'n/a' : (v / GiB).toFixed(v / GiB >= 10 ? 1 : 3);
}

function pct(r: number): string {
  return `${(r * 100).toFixed(2)} %`;
}

function deploymentTitle(d: SizeDeployment): string {
  if (d.pool === 'single') return 'one server';
  if (d.pool === 'shared') return `${d.servers} servers, one shared pool (capacity = the pool)`;
  return `${d.servers} servers, private pools of capacity ÷ ${d.servers}, route ${d.route ?? ''}`;
}

/** The console table: per deployment, the ideal, the knees and the points. */
export function sizeConsole(doc: SizeDocument): string {
  const w = doc.workload;
  const lines: string[] = [];
  lines.push('### KV CACHE SIZING (LRU, one pass) ###');
  lines.push(
    `  ${w.requests} requests, ${w.block_references} block references, blocks of ${w.block_tokens} tokens, ${w.model} (${w.kv_bytes_per_token} bytes per token)`,
  );
  lines.push(
    w.requests_per_sec !== null
      ? `  traffic: ${w.span_seconds.toFixed(1)} s at the trace's own pace, ${w.requests_per_sec.toFixed(2)} requests/s`
      : '  traffic: no time span (every request at the same time): no bandwidth per second',
  );
  if (!doc.compute.modelled) lines.push(`  prefill compute saved: not modelled (${doc.compute.reason})`);
  else lines.push(`  prefill compute saved: modelled on ${doc.compute.gpu_profile} at MFU ${doc.compute.mfu}`);
  for (const d of doc.deployments) {
    lines.push('');
    lines.push(`  ${deploymentTitle(d)}: ${d.distinct_blocks} distinct blocks, ${capacityText(d.distinct_bytes)}`);
    if (d.no_reuse) {
      lines.push('  no reuse: no block was asked twice, so the hit rate is 0 at every capacity (the curve is flat at 0)');
      continue;
    }
    lines.push(`  ideal (unlimited): token hit rate ${pct(d.ideal.token_hit_rate)}, block hit rate ${pct(d.ideal.block_hit_rate)}`);
    lines.push(
      `  capacity reaching ${d.knees.map((k) => `${k.share_of_ideal * 100} %: ${capacityText(k.capacity_bytes)}`).join(', ')} of the ideal`,
    );
    lines.push(`  exact from ${capacityText(d.exact_from_bytes)} (the largest request's chain${d.pool === 'private' ? ' × servers' : ''})`);
    const speed = d.points.some((p) => p.read_bytes_per_sec_at_speedup !== null);
    const head = ['capacity', 'token hit', 'block hit', 'read GiB/s', ...(speed ? [`at ×${w.trace_speedup}`] : []), 'GPU-s saved/h'];
    const rows = d.points.map((p) => [
      `${p.capacity_bytes < d.exact_from_bytes ? '~' : ''}${capacityText(p.capacity_bytes)}${p.requested ? ' *' : ''}`,
      pct(p.token_hit_rate),
      pct(p.block_hit_rate),
      gbps(p.read_bytes_per_sec),
      ...(speed ? [gbps(p.read_bytes_per_sec_at_speedup)] : []),
      p.gpu_seconds_saved_per_hour === null ? 'n/a' : p.gpu_seconds_saved_per_hour.toFixed(0),
    ]);
    const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
    const fmt = (r: readonly string[]): string =>
      `    ${r.map((v, c) => (c === 0 ? v.padEnd(widths[c] ?? 0) : v.padStart(widths[c] ?? 0))).join('  ')}`;
    lines.push(fmt(head));
    for (const r of rows) lines.push(fmt(r));
    if (d.points.some((p) => p.requested)) lines.push('    * named by --capacities');
    if (d.points.some((p) => p.capacity_bytes < d.exact_from_bytes))
      lines.push('    ~ below the largest chain: a request may evict its own blocks there, which the one-pass curve does not model');
  }
  if (doc.measured_run !== null)
    lines.push(
      '',
      `  measured run: token hit rate ${pct(doc.measured_run.token_hit_rate)} at ${capacityText(doc.measured_run.capacity_bytes)}`,
    );
  return lines.join('\n');
}

/** One row per deployment and point; every field is a number or one of the closed words, so nothing needs quoting. */
export function sizeCsv(doc: SizeDocument): string {
  const head = [
    'pool',
    'servers',
    'route',
    'capacity_bytes',
    'token_hit_rate',
    'block_hit_rate',
    'hit_bytes',
    'read_bytes_per_sec',
    'read_bytes_per_sec_at_speedup',
    'gpu_seconds_saved_per_hour',
    'requested',
  ];
  const rows = doc.deployments.flatMap((d) =>
    d.points.map((p) =>
      [
        d.pool,
        d.servers,
        d.route ?? '',
        p.capacity_bytes,
        p.token_hit_rate,
        p.block_hit_rate,
        p.hit_bytes,
        p.read_bytes_per_sec ?? '',
        p.read_bytes_per_sec_at_speedup ?? '',
        p.gpu_seconds_saved_per_hour ?? '',
        p.requested,
      ].join(','),
    ),
  );
  return [head.join(','), ...rows].join('\n') + '\n';
}
