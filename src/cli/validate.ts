// Cross-field and range checks of the flag values (docs/reference-compat.md#rc-2: the reference's tested checks plus what the reference checks
// untested). Every problem is collected; messages keep the reference's fragments ("num-users must be
// positive", …) so scripts and people who know the reference recognise them. Limits come from the
// config file's validation_limits (defaults = the reference's hard-coded limits).
import { slabProblems } from '../engine/kv-layout.js';
import { cacheDirProblems, realFs } from './cache-dir.js';
import type { FsProbe } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { RunConfig } from '../settings/run-config.js';
import { FLAG_ROWS } from '../settings/flags.js';
import type { RunFlags, ValueCheck } from '../settings/flags.js';
import type { Settings, ValidationLimits } from '../settings/config-keys.js';
import { entrySizeOf, kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { formatBytes } from '../util/input-file.js';
import { runBlockTokens, sourceFor, sourceProblems } from '../engine/sources/registry.js';
import { storageBackendChecks } from '../tiers/registry.js';
import { objectStoreOptionsOf } from '../tiers/storage-kind.js';

export interface CheckResult {
  readonly problems: string[];
  readonly warnings: string[];
}

type Limits = ValidationLimits;
/** The flag values the checks read (RunConfig and RunFlags both qualify). */
export type CheckedFlags = Omit<RunFlags, 'model'>;

const REFERENCE_MAX_DURATION = 86400;

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/** Non-finite or fractional values can only come from hand-built configs; argv parsing rejects them earlier. */
function numberShape(name: string, v: number, integer: boolean, problems: string[]): boolean {
  if (!Number.isFinite(v)) problems.push(`${name} must be a finite number (got ${v})`);
  else if (integer && !Number.isInteger(v)) problems.push(`${name} must be an integer (got ${v})`);
  else return true;
  return false;
}

/** The reference's wording of a failed value check, or undefined when `v` passes. */
function checkProblem(name: string, v: number, check: ValueCheck): string | undefined {
  switch (check.kind) {
    case 'nonNegative':
      return v < 0 ? `${name} cannot be negative (got ${v})` : undefined;
    case 'positive':
      return v <= 0 ? `${name} must be positive (got ${v})` : undefined;
    case 'atLeast':
      return v >= check.min
        ? undefined
        : `${name} must be at least ${check.min}${check.unit !== undefined ? ` ${check.unit}` : ''} (got ${v})`;
    case 'between':
      return v >= check.min && v <= check.max
        ? undefined
        : `${name} must be between ${check.min.toFixed(1)} and ${check.max.toFixed(1)} (got ${v})`;
  }
}

/** Each numeric flag's shape and its table check (settings/flags.ts); the names of flags that passed. */
function tableChecks(f: CheckedFlags, problems: string[]): Set<string> {
  const passed = new Set<string>();
  for (const row of FLAG_ROWS) {
    if (row.kind !== 'int' && row.kind !== 'float') continue;
    if (row.field === 'model') continue; // a string; narrows the field for CheckedFlags
    const v = f[row.field] as number;
    if (!numberShape(row.name, v, row.kind === 'int', problems)) continue;
    const problem = row.check !== undefined ? checkProblem(row.name, v, row.check) : undefined;
    if (problem !== undefined) problems.push(problem);
    else passed.add(row.name);
  }
  return passed;
}

/** Upper bounds from the config file's validation_limits, for values that passed their own check. */
function limitChecks(f: CheckedFlags, limits: Limits, passed: ReadonlySet<string>, problems: string[]): void {
  if (passed.has('num-users') && f.numUsers > limits.maxUsers)
    problems.push(`num-users exceeds limit of ${limits.maxUsers} (got ${f.numUsers})`);
  if (passed.has('duration') && f.durationSec > limits.maxDurationSeconds) {
    problems.push(
      limits.maxDurationSeconds === REFERENCE_MAX_DURATION
        ? `duration exceeds 24 hours (${REFERENCE_MAX_DURATION} s; got ${f.durationSec})`
        : `duration exceeds limit of ${limits.maxDurationSeconds} s (validation_limits.max_duration_seconds; got ${f.durationSec})`,
    );
  }
  for (const [name, v, max] of [
    ['gpu-mem-gb', f.gpuMemGb, limits.maxGpuMemoryGb],
    ['cpu-mem-gb', f.cpuMemGb, limits.maxCpuMemoryGb],
  ] as const) {
    if (passed.has(name) && v > max) problems.push(`${name} exceeds limit of ${max} GiB (got ${v})`);
  }
}

function tensorParallelChecks(f: CheckedFlags, passed: ReadonlySet<string>, problems: string[], warnings: string[]): void {
  if (!passed.has('tensor-parallel')) return;
  if (passed.has('num-gpus') && f.tensorParallel > f.numGpus) {
    problems.push(`tensor-parallel (${f.tensorParallel}) cannot exceed num-gpus (${f.numGpus})`);
  } else if (!isPowerOfTwo(f.tensorParallel)) {
    warnings.push(`tensor-parallel ${f.tensorParallel} is not a power of 2; real deployments use 1, 2, 4, 8, …`);
  }
}

/** --kv-layout against the storage it needs; the slab flags without the slab layout. */
function layoutChecks(f: CheckedFlags, problems: string[], warnings: string[]): void {
  if (f.kvLayout !== 'flat' && f.storageBackend !== 'file')
    problems.push(`--kv-layout ${f.kvLayout} lays entries out in files: it needs --storage-backend file (got ${f.storageBackend})`);
  if (f.kvLayout !== 'flat' && f.ioTraceLog !== undefined)
    problems.push(`--kv-layout ${f.kvLayout} lays out files on storage, and trace mode (--io-trace-log) has none; drop one`);
  if (f.kvLayout !== 'slab')
    for (const [name, v] of [
      ['slab-slot-mib', f.slabSlotMib],
      ['slab-file-gib', f.slabFileGib],
    ] as const)
      if (v > 0) warnings.push(`--${name} ${v} is not used: it sizes the pool of --kv-layout slab (the layout is ${f.kvLayout})`);
}

/** Every problem and warning of a set of flag values. Never throws. */
export function checkFlags(f: CheckedFlags, limits: Limits, fs: FsProbe = realFs): CheckResult {
  const problems: string[] = [];
  const warnings: string[] = [];
  const passed = tableChecks(f, problems);
  limitChecks(f, limits, passed, problems);
  tensorParallelChecks(f, passed, problems, warnings);
  if (f.prefillOnly && f.decodeOnly) problems.push('--prefill-only and --decode-only are mutually exclusive');
  if (passed.has('mfu') && f.mfu > 1) problems.push(`mfu cannot exceed 1.0 (got ${f.mfu})`); // a share of the GPU's peak
  problems.push(...sourceProblems(f)); // a run replays one workload source
  problems.push(...poolProblems(f));
  if (f.cacheDir !== undefined) problems.push(...cacheDirProblems(f.cacheDir, fs, f.createCacheDir));
  layoutChecks(f, problems, warnings);
  // Trace mode replaces every tier with a null tier: the storage backend is not opened.
  if (f.ioTraceLog === undefined) {
    const storage = storageBackendChecks(f.storageBackend, f.storageCapacityGb, f.cacheDir, objectStoreOptionsOf(f));
    problems.push(...storage.problems);
    warnings.push(...storage.warnings);
  }
  return { problems, warnings };
}

/** A shared pool is a pool of KV blocks on a real storage tier (docs/shared-pool.md). */
function poolProblems(f: CheckedFlags): string[] {
  const problems: string[] = [];
  if (f.kvPool !== 'shared') {
    if (f.keepPool) problems.push('--keep-pool keeps a shared pool: it needs --kv-pool shared');
    return problems;
  }
  if (sourceProblems(f).length === 0 && runBlockTokens(f) === undefined)
    problems.push(
      "--kv-pool shared shares KV blocks: it needs block mode (--kv-block-tokens N, or a --mooncake-trace); whole-request entries are one server's own",
    );
  if (f.ioTraceLog !== undefined) problems.push('--kv-pool shared needs a storage tier: trace mode (--io-trace-log) has none');
  if (f.storageBackend === 'memory')
    problems.push("--kv-pool shared needs storage every rank reaches: --storage-backend file or s3, not 'memory'");
  if (f.precondition)
    problems.push("--kv-pool shared with --precondition: a pool's contents are its blocks; warm it with an earlier run and --keep-pool");
  if (f.decodeOnly)
    problems.push('--kv-pool shared with --decode-only: every rank would pre-populate the same blocks; run decode-only on private pools');
  if (f.kvLayout === 'slab')
    problems.push(
      "--kv-pool shared with --kv-layout slab: a slab pool's slots are one server's index; a shared pool is one file per block",
    );
  return problems;
}

const GiB = 2 ** 30;

/** Capacity of the largest tier the flags define, or undefined when it is only known at setup (free space). */
function largestTierBytes(f: CheckedFlags): number | undefined {
  if (f.storageCapacityGb > 0) return Math.max(f.storageCapacityGb, f.gpuMemGb * f.numGpus, f.cpuMemGb) * GiB;
  if (f.ioTraceLog !== undefined) return Infinity; // trace mode: the storage tier is unlimited
  return undefined;
}

/**
 * The model against the workload and the tiers: the largest synthetic request's entry must be an exact
 * byte count, and one entry of the smallest request (1 token for dataset and trace replays) must fit
 * in some tier, or every request would fail. Values that failed their own checks are skipped.
 */
export function modelFitProblems(model: ModelConfig, f: CheckedFlags, settings: Settings): string[] {
  const perToken = kvBytesPerToken(model);
  if (!(perToken > 0) || !Number.isFinite(perToken)) return [];
  const templates = Object.values(settings.userTemplates);
  const replay = sourceFor(f).recorded;
  const smallest = replay ? 1 : Math.min(...templates.map((t) => t.contextRange[0]));
  const largest = Math.max(...templates.map((t) => t.contextRange[1]));
  const tp = f.tensorParallel >= 1 ? f.tensorParallel : 1;
  const problems: string[] = [];
  if (!replay && !Number.isSafeInteger(perToken * largest))
    problems.push(
      `model '${model.key}': an entry of the largest context (${largest} tokens × ${perToken} bytes per token) is beyond 2^53 bytes; lower user_templates context_range or use a smaller model`,
    );
  const entry = entrySizeOf(perToken, smallest, tp);
  const room = largestTierBytes(f);
  if (room !== undefined && entry > room)
    problems.push(
      `model '${model.key}': one entry of the smallest request (${smallest} token${smallest === 1 ? '' : 's'} × ${perToken} bytes per token${tp > 1 ? ` ÷ tensor-parallel ${tp}` : ''} = ${formatBytes(entry)}) fits in no tier (the largest holds ${formatBytes(room)}); give more --gpu-mem-gb, --cpu-mem-gb or --storage-capacity-gb, or use a smaller model`,
    );
  return problems;
}

/** The problem of a --model key absent from the model table (built-ins plus config models). */
export function unknownModelProblem(key: string, models: ReadonlyMap<string, unknown>): string {
  return `unknown model '${key}'; valid models: ${[...models.keys()].sort().join(', ')}`;
}

/** Throws ConfigError listing every problem of `config`; a valid config passes untouched. */
export function validateRunConfig(config: RunConfig, fs: FsProbe = realFs): void {
  const { problems } = checkFlags(config, config.settings.validationLimits, fs);
  if (config.models.get(config.model.key) === undefined) {
    problems.push(unknownModelProblem(config.model.key, config.models));
  }
  problems.push(...modelFitProblems(config.model, config, config.settings));
  problems.push(...slabProblems(config)); // a slot smaller than a block, a pool file smaller than a slot
  if (problems.length > 0) throw new ConfigError(problems);
}
