// `kv-cache size` (issue 33, docs/sizing.md): its own options (capacities, servers, pools, outputs) and
// the run's flags for the workload, read by the run's own parser, so the same flags give the same
// requests. Bad input — a capacity, a run flag, a non-block-granular workload, an output path, the
// measured run's file, the trace itself (the run's own messages) — exits 2 with nothing written.
import { mkdirSync } from 'node:fs';
import { z } from 'zod';
import { dirname, resolve } from 'node:path';
import { isSourceInputError, runBlockTokens, sourceFor, sourceInputs } from '../engine/sources/registry.js';
import { sizeRun } from '../engine/sizing.js';
import { KvcacheBenchSchema } from '../report/results-schema.js';
import { buildSizeDocument, sizeConsole, sizeCsv } from '../report/size-report.js';
import type { SizeDocument } from '../report/size-report.js';
import { sizePage } from '../report/html/size-page.js';
import type { RunConfig } from '../settings/run-config.js';
import { writeFileAtomically } from '../util/files.js';
import { readInputText } from '../util/input-file.js';
import { excerpt } from '../util/excerpt.js';
import { inert } from '../util/safe-text.js';
import { GiB } from '../util/units.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import { parseRunArgs } from './run-args.js';
import type { ArgsOf } from './sub-args.js';
import type { SIZE_ARGS } from './subcommand-args.js';

const UNITS: Readonly<Record<string, number>> = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };

/** `512G,1T,4.5TiB` → bytes (binary units; a bare number is GiB), or the problems naming each bad item. */
export function parseCapacities(text: string): { capacities: number[]; problems: string[] } {
  const capacities: number[] = [];
  const problems: string[] = [];
  for (const item of text.split(',')) {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:([kmgtp])(?:i?b)?)?\s*$/i.exec(item);
    const unit = m?.[2] !== undefined ? UNITS[m[2].toLowerCase()] : GiB;
    const bytes = m !== null && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
    if (!Number.isFinite(bytes) || bytes <= 0 || bytes > 2 ** 62)
      problems.push(
        `--capacities: '${excerpt(item.trim(), 40)}' is not a capacity; give sizes like 512G,1T,4.5T (K, M, G, T, P: binary units; a bare number is GiB), each > 0`,
      );
    else capacities.push(bytes);
  }
  return { capacities, problems };
}

/** The parts of a run's results the measured point needs, read through the results schema's own pieces. */
const MeasuredRunSchema = z.object({
  kvcache_bench: KvcacheBenchSchema.pick({ tool: true, kv_blocks: true, storage_capacity: true, effective_config: true }).loose(),
});

/** The measured point of a block-granular run's results: its token hit rate at its total capacity. */
function measuredRun(path: string): { point?: NonNullable<SizeDocument['measured_run']>; problem?: string } {
  const read = readInputText(path, { maxBytes: 256 * 1024 * 1024 });
  if (!read.ok) return { problem: `--measured-run ${path}: ${read.problem}` };
  let raw: unknown;
  try {
    raw = JSON.parse(read.text);
  } catch {
    raw = undefined;
  }
  const parsed = MeasuredRunSchema.safeParse(raw);
  if (!parsed.success) return { problem: `--measured-run ${path}: not a kv-cache run results file` };
  const b = parsed.data.kvcache_bench;
  const blocks = b.kv_blocks;
  if (blocks === undefined) return { problem: `--measured-run ${path}: not a block-granular run (no kvcache_bench.kv_blocks)` };
  const args = b.effective_config.args as Record<string, unknown>;
  const num = (k: string): number => (typeof args[k] === 'number' ? args[k] : 0);
  // The storage limit the run recorded, else (trace mode) the one it was given.
  const storage = b.storage_capacity?.limit_bytes ?? (num('storage_capacity_gb') > 0 ? num('storage_capacity_gb') * GiB : null);
  if (storage === null) return { problem: `--measured-run ${path}: the run's storage capacity is not recorded` };
  const capacity = storage + (num('cpu_mem_gb') + num('gpu_mem_gb') * Math.max(1, num('num_gpus'))) * GiB;
  return { point: { path, capacity_bytes: capacity, token_hit_rate: blocks.token_hit_rate.total } };
}

/** The run's configuration from the workload flags, and every problem with the arguments at once. */
function checkedConfig(args: ArgsOf<typeof SIZE_ARGS>, runArgv: readonly string[]): { config: RunConfig; capacities: number[] } {
  const problems: string[] = [];
  const { capacities, problems: capacityProblems } =
    args.values.capacities !== undefined ? parseCapacities(args.values.capacities) : { capacities: [], problems: [] };
  problems.push(...capacityProblems);
  let config: RunConfig | undefined;
  try {
    config = parseRunArgs(runArgv, new Date()).config;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.problems);
  }
  if (config !== undefined) {
    if (runBlockTokens(config) === undefined)
      problems.push(
        'kv-cache size needs a block-granular workload: --mooncake-trace FILE, or --kv-block-tokens N with synthetic, ShareGPT or BurstGPT requests',
      );
    const inputs = sourceInputs(config);
    for (const flag of ['json', 'csv', 'html'] as const) {
      const path = args.values[flag];
      if (path !== undefined) problems.push(...outputProblems(path, `--${flag}`, inputs));
    }
  }
  if (problems.length > 0 || config === undefined) throw new ConfigError(problems);
  return { config, capacities };
}

function write(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileAtomically(path, text);
}

export async function sizeMain(args: ArgsOf<typeof SIZE_ARGS>, runArgv: readonly string[], version: string): Promise<number> {
  const { config, capacities } = checkedConfig(args, runArgv);
  const measured = args.values['measured-run'] !== undefined ? measuredRun(args.values['measured-run']) : {};
  if (measured.problem !== undefined) throw new ConfigError([measured.problem]);

  const tty = process.stderr.isTTY && !config.noProgress;
  const started = Date.now();
  let shown = false;
  const pools = args.values['kv-pool'] === 'both' ? (['shared', 'private'] as const) : ([args.values['kv-pool']] as const);
  let outcome;
  try {
    outcome = await sizeRun(config, {
      capacities,
      servers: args.values.servers,
      route: args.values.route,
      pools,
      progressEvery: 2000,
      onProgress: ({ requests, references }) => {
        const s = (Date.now() - started) / 1000;
        if (!tty || s < 3) return;
        shown = true;
        process.stderr.write(`\r  sizing: ${requests} requests, ${references} block references (${Math.round(references / s)}/s)   `);
      },
    });
  } catch (e) {
    if (!isSourceInputError(e)) throw e;
    process.stderr.write(`kv-cache size: error: ${inert(e.message)}\n`); // the run's own message for the same input
    return 2;
  }
  if (shown) process.stderr.write('\n');

  const doc = buildSizeDocument({
    version,
    source: outcome.source,
    model: config.model.key,
    blockTokens: outcome.blockTokens,
    bytesPerToken: outcome.bytesPerToken,
    requests: outcome.requests,
    references: outcome.references,
    spanSeconds: Math.max(0, outcome.lastMs - outcome.firstMs) / 1000,
    traceSpeedup: config.traceSpeedup,
    recorded: sourceFor(config).recorded,
    compute: outcome.compute.modelled
      ? {
          modelled: true,
          gpu_profile: outcome.compute.gpuProfile,
          mfu: outcome.compute.mfu,
          tensor_parallel: outcome.compute.tensorParallel,
        }
      : { modelled: false, reason: outcome.compute.reason },
    deployments: outcome.deployments,
    requested: capacities,
    ...(measured.point !== undefined ? { measuredRun: measured.point } : {}),
  });
  process.stdout.write(`${sizeConsole(doc)}\n`);
  const written: string[] = [];
  try {
    if (args.values.json !== undefined) write(args.values.json, `${JSON.stringify(doc, null, 2)}\n`);
    if (args.values.csv !== undefined) write(args.values.csv, sizeCsv(doc));
    if (args.values.html !== undefined) write(args.values.html, sizePage(doc));
  } catch (e) {
    process.stderr.write(`kv-cache size: error: output not written: ${inert(e instanceof Error ? e.message : String(e))}\n`);
    return 1;
  }
  for (const [flag, path] of [
    ['JSON', args.values.json],
    ['CSV', args.values.csv],
    ['HTML', args.values.html],
  ] as const)
    if (path !== undefined) written.push(`${flag} saved to ${inert(path)}`);
  if (written.length > 0) process.stdout.write(`${written.join('\n')}\n`);
  return 0;
}
