// Cross-field and range checks of the flag values (reference-tests §16 plus what the reference checks
// untested). Every problem is collected; messages keep the reference's fragments ("num-users must be
// positive", …) so scripts and people who know the reference recognise them. Limits come from the
// config file's validation_limits (defaults = the reference's hard-coded limits).
import { cacheDirProblems, realFs } from './cache-dir.js';
import type { FsProbe } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { RunConfig, RunFlags, Settings } from '../engine/run-config.js';

export interface CheckResult {
  readonly problems: string[];
  readonly warnings: string[];
}

type Limits = Settings['validationLimits'];
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

function nonNegative(name: string, v: number, integer: boolean, problems: string[]): void {
  if (numberShape(name, v, integer, problems) && v < 0) problems.push(`${name} cannot be negative (got ${v})`);
}

function rangeChecks(f: CheckedFlags, limits: Limits, problems: string[]): void {
  if (numberShape('num-users', f.numUsers, true, problems)) {
    if (f.numUsers <= 0) problems.push(`num-users must be positive (got ${f.numUsers})`);
    else if (f.numUsers > limits.maxUsers) problems.push(`num-users exceeds limit of ${limits.maxUsers} (got ${f.numUsers})`);
  }
  if (numberShape('duration', f.durationSec, true, problems)) {
    if (f.durationSec <= 0) problems.push(`duration must be positive (got ${f.durationSec})`);
    else if (f.durationSec > limits.maxDurationSeconds) {
      problems.push(
        limits.maxDurationSeconds === REFERENCE_MAX_DURATION
          ? `duration exceeds 24 hours (${REFERENCE_MAX_DURATION} s; got ${f.durationSec})`
          : `duration exceeds limit of ${limits.maxDurationSeconds} s (validation_limits.max_duration_seconds; got ${f.durationSec})`,
      );
    }
  }
  for (const [name, v, max] of [
    ['gpu-mem-gb', f.gpuMemGb, limits.maxGpuMemoryGb],
    ['cpu-mem-gb', f.cpuMemGb, limits.maxCpuMemoryGb],
  ] as const) {
    if (!numberShape(name, v, false, problems)) continue;
    if (v < 0) problems.push(`${name} cannot be negative (got ${v})`);
    else if (v > max) problems.push(`${name} exceeds limit of ${max} GiB (got ${v})`);
  }
  if (numberShape('num-gpus', f.numGpus, true, problems) && f.numGpus < 1) problems.push(`num-gpus must be at least 1 (got ${f.numGpus})`);
  if (numberShape('target-saturation', f.targetSaturation, false, problems) && (f.targetSaturation < 0 || f.targetSaturation > 1)) {
    problems.push(`target-saturation must be between 0.0 and 1.0 (got ${f.targetSaturation})`);
  }
  if (numberShape('max-conversations', f.maxConversations, true, problems) && f.maxConversations <= 0) {
    problems.push(`max-conversations must be positive (got ${f.maxConversations})`);
  }
  if (numberShape('autoscale-interval', f.autoscaleIntervalSec, false, problems) && !(f.autoscaleIntervalSec >= 0.1)) {
    problems.push(`autoscale-interval must be at least 0.1 s (got ${f.autoscaleIntervalSec})`);
  }
  if (numberShape('gpu-bandwidth-gbs', f.gpuBandwidthGbs, false, problems) && f.gpuBandwidthGbs <= 0) {
    problems.push(`gpu-bandwidth-gbs must be positive (got ${f.gpuBandwidthGbs})`);
  }
  nonNegative('rag-num-docs', f.ragNumDocs, true, problems);
  nonNegative('max-concurrent-allocs', f.maxConcurrentAllocs, true, problems);
  nonNegative('request-rate', f.requestRate, false, problems);
  nonNegative('max-requests', f.maxRequests, true, problems);
  nonNegative('storage-capacity-gb', f.storageCapacityGb, false, problems);
  nonNegative('precondition-size-gb', f.preconditionSizeGb, false, problems);
  nonNegative('precondition-threads', f.preconditionThreads, true, problems);
  nonNegative('trace-speedup', f.traceSpeedup, false, problems);
  nonNegative('replay-cycles', f.replayCycles, true, problems);
  numberShape('seed', f.seed, true, problems);
}

function tensorParallelChecks(f: CheckedFlags, problems: string[], warnings: string[]): void {
  if (!numberShape('tensor-parallel', f.tensorParallel, true, problems)) return;
  if (f.tensorParallel < 1) problems.push(`tensor-parallel must be at least 1 (got ${f.tensorParallel})`);
  else if (Number.isInteger(f.numGpus) && f.numGpus >= 1 && f.tensorParallel > f.numGpus) {
    problems.push(`tensor-parallel (${f.tensorParallel}) cannot exceed num-gpus (${f.numGpus})`);
  } else if (!isPowerOfTwo(f.tensorParallel)) {
    warnings.push(`tensor-parallel ${f.tensorParallel} is not a power of 2; real deployments use 1, 2, 4, 8, …`);
  }
}

/** Every problem and warning of a set of flag values. Never throws. */
export function checkFlags(f: CheckedFlags, limits: Limits, fs: FsProbe = realFs): CheckResult {
  const problems: string[] = [];
  const warnings: string[] = [];
  rangeChecks(f, limits, problems);
  tensorParallelChecks(f, problems, warnings);
  if (f.prefillOnly && f.decodeOnly) problems.push('--prefill-only and --decode-only are mutually exclusive');
  if (f.cacheDir !== undefined) problems.push(...cacheDirProblems(f.cacheDir, fs));
  return { problems, warnings };
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
  if (problems.length > 0) throw new ConfigError(problems);
}
