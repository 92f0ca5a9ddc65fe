// `kv-cache mlperf` arguments → one checked MlperfRequest, with the CLOSED locks: in CLOSED only the
// system name, cache dir, results dir, hosts, ranks per node, process count and MPI parameters vary
// (plus which options to run, the dry run, progress and the barrier timeout, which change no
// measurement). In OPEN an option value is overridden only by a flag the user actually typed: no
// default of ours ever stands in for the option's value (upstream's argparse defaults leak in).
import { CLOSED_DEFAULTS, OPTION_IDS, VALUE_FLAGS } from './options.js';
import type { OptionId, OptionValues } from './options.js';

export type Division = 'closed' | 'open';

export interface MlperfRequest {
  readonly division: Division;
  readonly options: readonly OptionId[];
  readonly trials: number;
  readonly resultsDir: string;
  /** The storage under test; '' with --storage-backend s3 (the bucket is). */
  readonly cacheDir: string;
  readonly systemName: string | undefined;
  readonly hosts: readonly string[];
  readonly numProcesses: number;
  readonly npernode: number;
  readonly mpiParams: readonly string[];
  /** `--storage-backend` and its flags for every run ([] = the file tier under --cache-dir). */
  readonly storageArgs: readonly string[];
  /** OPEN: `--kv-pool shared --kv-block-tokens N` for the option runs (never the preconditioning); [] = private. */
  readonly poolArgs: readonly string[];
  readonly startDelaySec: number;
  readonly endDelaySec: number;
  readonly interOptionDelaySec: number;
  readonly seed: number;
  readonly config: string | undefined;
  readonly skipPrecondition: boolean;
  readonly preconditionSizeGb: number | undefined;
  readonly barrierTimeoutSec: number;
  readonly dryRun: boolean;
  readonly noProgress: boolean;
  /** OPEN only: the option values the user typed, and only those. */
  readonly overrides: Partial<OptionValues>;
}

/** Flags a CLOSED run may not give, with what CLOSED uses instead. */
const CLOSED_LOCKED: ReadonlyArray<readonly [string, string]> = [
  ['trials', `${CLOSED_DEFAULTS.trials}`],
  ['seed', `${CLOSED_DEFAULTS.seed}`],
  ['start-delay', `${CLOSED_DEFAULTS.startDelaySec} s`],
  ['end-delay', `${CLOSED_DEFAULTS.endDelaySec} s`],
  ['inter-option-delay', `${CLOSED_DEFAULTS.interOptionDelaySec} s`],
  ['config', 'the built-in settings'],
  ['skip-precondition', 'preconditioning before the sequence'],
  ['precondition-size-gb', '2 × the storage capacity, as the reference'],
  ...Object.values(VALUE_FLAGS).map((f) => [f, "the option's value (Rules table KVCache-1)"] as const),
];

/** The parsed `kv-cache mlperf` arguments (declared in cli/subcommands.ts): text values, switches, and which were typed. */
export interface MlperfArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly given: ReadonlySet<string>;
}

/** Reads a number flag; `int` demands an integer. A bad value is a problem and `def` is used. */
function numberFlag(problems: string[], v: MlperfArgs['values'], name: string, def: number, min: number, int: boolean): number {
  const raw = v[name];
  if (typeof raw !== 'string') return def;
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || (int && !Number.isSafeInteger(n)) || n < min) {
    problems.push(`--${name} expects ${int ? 'an integer' : 'a number'} ≥ ${min}, got '${raw}'`);
    return def;
  }
  return n;
}

function optionList(raw: string | undefined, problems: string[]): OptionId[] {
  if (raw === undefined || raw === 'all') return [...OPTION_IDS];
  const ids: OptionId[] = [];
  for (const part of raw.split(',')) {
    const id = OPTION_IDS.find((o) => String(o) === part.trim());
    if (id === undefined) problems.push(`--option: invalid choice '${part}'; valid: 1, 2, 3, all (or a list such as 1,3)`);
    else if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** The request of parsed `kv-cache mlperf` arguments (their syntax already checked). Problems are collected, never thrown. */
export function mlperfRequest(args: MlperfArgs): { readonly request: MlperfRequest; readonly problems: string[] } {
  const problems: string[] = [];
  const values = args.values;
  const given = (f: string): boolean => args.given.has(f);
  const str = (f: string): string | undefined => {
    const v = values[f];
    return typeof v === 'string' ? v : undefined;
  };
  if (given('closed') && given('open')) problems.push('--closed and --open exclude each other');
  const division: Division = given('open') ? 'open' : 'closed';
  if (division === 'closed')
    for (const [flag, instead] of CLOSED_LOCKED)
      if (given(flag)) problems.push(`--${flag} is locked in CLOSED (it uses ${instead}); run with --open to change it`);

  // Both are required by the declaration; an empty one (`--results-dir ''`) is still a problem.
  const resultsDir = str('results-dir') ?? '';
  const cacheDir = str('cache-dir') ?? '';
  if (resultsDir === '') problems.push('--results-dir DIR is empty (where the results and the summary go)');
  // The S3 tier's runs keep their entries in the bucket of --s3-args: a cache dir would be neither used nor measured.
  const s3 = str('storage-backend') === 's3';
  if (s3 && division === 'open' && given('cache-dir'))
    problems.push(
      '--cache-dir is not used with --storage-backend s3 (the bucket given in --s3-args is the storage under test); leave it out',
    );
  else if (!s3 && !given('cache-dir')) problems.push('--cache-dir DIR is required (the storage under test), unless --storage-backend s3');
  else if (!s3 && cacheDir === '') problems.push('--cache-dir DIR is empty (the storage under test)');
  const hosts = (str('hosts') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  const hostCount = Math.max(1, hosts.length);
  const numProcessesRaw = numberFlag(problems, values, 'num-processes', 0, 1, true);
  const npernodeRaw = numberFlag(problems, values, 'npernode', 0, 1, true);
  let numProcesses = numProcessesRaw;
  let npernode = npernodeRaw;
  if (numProcesses > 0 && npernode > 0 && numProcesses !== npernode * hostCount)
    problems.push(`--num-processes ${numProcesses} ≠ --npernode ${npernode} × ${hostCount} host(s)`);
  else if (numProcesses > 0 && npernode === 0) {
    if (numProcesses % hostCount !== 0)
      problems.push(`--num-processes ${numProcesses} does not divide evenly by ${hostCount} hosts; give a multiple of ${hostCount}`);
    npernode = Math.max(1, Math.floor(numProcesses / hostCount));
  } else if (numProcesses === 0) {
    npernode = Math.max(1, npernode);
    numProcesses = npernode * hostCount;
  }

  const overrides: Record<string, unknown> = {};
  const intValue = (key: keyof OptionValues, min: number): void => {
    if (given(VALUE_FLAGS[key])) overrides[key] = numberFlag(problems, values, VALUE_FLAGS[key], 0, min, true);
  };
  const floatValue = (key: keyof OptionValues): void => {
    if (given(VALUE_FLAGS[key])) overrides[key] = numberFlag(problems, values, VALUE_FLAGS[key], 0, 0, false);
  };
  if (division === 'open') {
    if (given('model')) overrides.model = str('model');
    if (given('generation-mode')) overrides.generationMode = str('generation-mode');
    intValue('numUsers', 1);
    intValue('maxConcurrentAllocs', 0);
    intValue('durationSec', 1);
    floatValue('cpuMemGb');
    floatValue('gpuMemGb');
  }
  const request: MlperfRequest = {
    division,
    options: optionList(str('option'), problems),
    trials: numberFlag(problems, values, 'trials', CLOSED_DEFAULTS.trials, 1, true),
    resultsDir,
    cacheDir,
    systemName: str('system-name'),
    hosts,
    numProcesses,
    npernode,
    mpiParams: (str('mpi-params') ?? '').split(/\s+/).filter((p) => p !== ''),
    storageArgs: storageArgsOf(division, str('storage-backend'), str('s3-args'), problems),
    poolArgs: poolArgsOf(division, str('kv-pool'), str('kv-block-tokens'), problems),
    startDelaySec: numberFlag(problems, values, 'start-delay', CLOSED_DEFAULTS.startDelaySec, 0, false),
    endDelaySec: numberFlag(problems, values, 'end-delay', CLOSED_DEFAULTS.endDelaySec, 0, false),
    interOptionDelaySec: numberFlag(problems, values, 'inter-option-delay', CLOSED_DEFAULTS.interOptionDelaySec, 0, false),
    seed: numberFlag(problems, values, 'seed', CLOSED_DEFAULTS.seed, 0, true),
    config: str('config'),
    skipPrecondition: values['skip-precondition'] === true,
    preconditionSizeGb: given('precondition-size-gb') ? numberFlag(problems, values, 'precondition-size-gb', 0, 0, false) : undefined,
    barrierTimeoutSec: numberFlag(problems, values, 'barrier-timeout', 300, 1, false),
    dryRun: values['dry-run'] === true,
    noProgress: values['no-progress'] === true,
    overrides: overrides,
  };
  return { request, problems };
}

/**
 * A shared KV pool for the option runs (issue 32): OPEN only — CLOSED is upstream's model, each rank
 * its own private cache — and block-granular (a pool shares blocks), so --kv-block-tokens comes with it.
 */
function poolArgsOf(division: Division, pool: string | undefined, blockTokens: string | undefined, problems: string[]): string[] {
  const name = pool ?? 'private';
  if (name !== 'private' && name !== 'shared') problems.push(`--kv-pool: invalid choice '${name}'; valid: private, shared`);
  if (name !== 'shared') {
    if (blockTokens !== undefined) problems.push('--kv-block-tokens goes with --kv-pool shared here');
    return [];
  }
  if (division === 'closed') {
    problems.push(
      "--kv-pool shared is not allowed in CLOSED: CLOSED is upstream's model, every rank its own private cache; run with --open to measure a shared pool",
    );
    return [];
  }
  const n = Number(blockTokens ?? '');
  if (blockTokens === undefined || !Number.isSafeInteger(n) || n < 1) {
    problems.push('--kv-pool shared needs --kv-block-tokens N (a whole number ≥ 1): a shared pool holds KV blocks');
    return [];
  }
  return ['--kv-pool', 'shared', '--kv-block-tokens', String(n)];
}

/**
 * The storage flags every run gets. Upstream's rules admit object storage in CLOSED only through a
 * POSIX gateway (s3fs, rclone, Mountpoint-S3) mounted as the cache dir, so the native S3 tier is OPEN only.
 */
function storageArgsOf(division: Division, backend: string | undefined, s3Args: string | undefined, problems: string[]): string[] {
  const name = backend ?? 'file';
  if (name !== 'file' && name !== 's3') problems.push(`--storage-backend: invalid choice '${name}'; valid: file, s3`);
  if (name === 's3' && division === 'closed')
    problems.push(
      '--storage-backend s3 is not allowed in CLOSED: the rules admit object storage only through a POSIX gateway (s3fs, rclone, Mountpoint-S3) mounted as --cache-dir; run with --open for the native S3 tier',
    );
  if (name !== 's3') {
    if (s3Args !== undefined) problems.push('--s3-args needs --storage-backend s3');
    return [];
  }
  return ['--storage-backend', 's3', ...(s3Args ?? '').split(/\s+/).filter((p) => p !== '')];
}
