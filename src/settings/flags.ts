// The command-line half of the settings table (docs/reference-compat.md#rc-2): every `kv-cache run`
// flag declared once — spelling, value type, default, simple range check, help group and text, and
// whether the reference has it. From this one table come the `RunFlags` type, the argv parser
// (cli/run-args.ts), `--help` (cli/help.ts), the range checks (cli/validate.ts) and the
// `effective_config.args` echo. A new flag is one row here plus the code where it acts.
import { resolve as resolvePath } from 'node:path';
import { fileStamp } from '../util/dates.js';
import { DEFAULT_GPU_BANDWIDTH_GBS } from '../tiers/simulated-gpu.js';
import { DEFAULT_STORAGE_BACKEND, STORAGE_BACKENDS, STORAGE_KINDS } from '../tiers/registry.js';
import { GPU_PROFILE_KEYS } from '../model/gpu-profiles.js';
import {
  AUTOSCALER_MODES,
  PAYLOAD_FILLERS,
  GENERATION_MODES,
  IO_MODES,
  KV_LAYOUTS,
  FILE_CALLS,
  LOG_LEVELS,
  MAX_BLOCK_TOKENS,
  PERFORMANCE_PROFILES,
  ROUTE_FLAG_VALUES,
  KV_POOLS,
  TOKENIZERS,
} from './choices.js';

export type FlagKind = 'int' | 'float' | 'string' | 'choice' | 'bool';

export const FLAG_GROUPS = ['Workload', 'Tiers and capacity', 'Workload sources', 'Run control', 'Output', 'Modes and advanced'] as const;
export type FlagGroup = (typeof FLAG_GROUPS)[number];

/**
 * A range check that needs nothing but the value, worded as the reference words it
 * ("num-users must be positive (got 0)"). Checks against config limits live in cli/validate.ts.
 */
export type ValueCheck =
  | { readonly kind: 'nonNegative' }
  | { readonly kind: 'positive' }
  | { readonly kind: 'atLeast'; readonly min: number; readonly unit?: string }
  | { readonly kind: 'between'; readonly min: number; readonly max: number };

/** What a default may depend on: the start time (output file name) and a random source (seed). */
export interface DefaultContext {
  readonly now: Date;
  readonly rng: () => number;
}

export interface FlagRow<V> {
  /** Without the leading dashes, e.g. 'num-users'. */
  readonly name: string;
  readonly kind: FlagKind;
  readonly group: FlagGroup;
  readonly help: string;
  /** True when the reference has this flag with the same spelling and default. */
  readonly reference: boolean;
  readonly default: V;
  /** A default computed at start-up (output name, seed) instead of `default`. */
  readonly defaultAt?: (ctx: DefaultContext) => V;
  /** Shown as "(default: …)" in --help when the default is not a plain value. */
  readonly defaultText?: string;
  readonly choices?: readonly string[];
  /** Placeholder of a string value in the help text. */
  readonly metavar?: string;
  readonly check?: ValueCheck;
  /** Applied to a given value (cache-dir becomes absolute). */
  readonly normalize?: (v: V) => V;
}

type Extra<V> = Partial<Pick<FlagRow<V>, 'defaultAt' | 'defaultText' | 'metavar' | 'check' | 'normalize'>> & { readonly ours?: true };

function row<V>(name: string, kind: FlagKind, def: V, group: FlagGroup, help: string, extra: Extra<V>): FlagRow<V> {
  const { ours, ...rest } = extra;
  return { name, kind, group, help, reference: ours !== true, default: def, ...rest };
}

const int = (name: string, def: number, group: FlagGroup, help: string, extra: Extra<number> = {}) =>
  row(name, 'int', def, group, help, extra);
const float = (name: string, def: number, group: FlagGroup, help: string, extra: Extra<number> = {}) =>
  row(name, 'float', def, group, help, extra);
const bool = (name: string, group: FlagGroup, help: string, extra: Extra<boolean> = {}) => row(name, 'bool', false, group, help, extra);
const str = (name: string, def: string, group: FlagGroup, help: string, extra: Extra<string> = {}) =>
  row(name, 'string', def, group, help, extra);
/** A string flag that is absent unless given. */
const path = (name: string, group: FlagGroup, help: string, extra: Extra<string | undefined> = {}) =>
  row<string | undefined>(name, 'string', undefined, group, help, { defaultText: 'none', ...extra });
function choice<C extends string>(
  name: string,
  choices: readonly C[],
  def: C,
  group: FlagGroup,
  help: string,
  extra: Extra<C> = {},
): FlagRow<C> {
  return { ...row<C>(name, 'choice', def, group, help, extra), choices };
}

const W: FlagGroup = 'Workload';
const T: FlagGroup = 'Tiers and capacity';
const S: FlagGroup = 'Workload sources';
const R: FlagGroup = 'Run control';
const O: FlagGroup = 'Output';
const M: FlagGroup = 'Modes and advanced';

const nonNegative: ValueCheck = { kind: 'nonNegative' };
const positive: ValueCheck = { kind: 'positive' };

/** `benchmark_results_<YYYYmmdd_HHMMSS>.json` in local time, as the reference names it. */
export function defaultOutputName(now: Date): string {
  return `benchmark_results_${fileStamp(now)}.json`;
}

/** A random non-negative 31-bit seed from a [0, 1) source. */
export function randomSeed(rng: () => number): number {
  return Math.floor(rng() * 2 ** 31) % 2 ** 31;
}

/** Every flag, keyed by its RunFlags field (the camelCase of its name); rows in --help order within a group. */
export const FLAG_TABLE = {
  model: str('model', 'llama3.1-8b', W, 'Model key from the model table (built-ins plus config-file model_configs)', { metavar: 'KEY' }),
  numUsers: int('num-users', 100, W, 'Number of simulated users (1 … validation_limits.max_users)', { check: positive }),
  generationMode: choice(
    'generation-mode',
    GENERATION_MODES,
    'realistic',
    W,
    'Simulated per-token generation time: none 0 ms, fast 2 ms, realistic 30 ms',
  ),
  disableMultiTurn: bool('disable-multi-turn', W, 'Do not reuse previous conversation turns'),
  disablePrefixCaching: bool('disable-prefix-caching', W, 'Disable shared-prefix (system prompt) caching'),
  enableRag: bool('enable-rag', W, 'Add retrieval-augmented (RAG) document reads'),
  ragNumDocs: int('rag-num-docs', 10, W, 'Number of RAG documents to ingest (>= 0)', { check: nonNegative }),

  gpuMemGb: float('gpu-mem-gb', 16, T, 'GPU tier capacity per GPU in GiB (0 disables the tier)', { check: nonNegative }),
  numGpus: int('num-gpus', 1, T, 'Number of GPUs (>= 1); GPU capacity = gpu-mem-gb × num-gpus', { check: { kind: 'atLeast', min: 1 } }),
  tensorParallel: int('tensor-parallel', 1, T, 'Tensor-parallel degree (1 … num-gpus; entries are divided by it)', {
    check: { kind: 'atLeast', min: 1 },
  }),
  gpuBandwidthGbs: float('gpu-bandwidth-gbs', DEFAULT_GPU_BANDWIDTH_GBS, T, 'Bandwidth of the simulated GPU tier in GB/s', {
    ours: true,
    check: positive,
  }),
  cpuMemGb: float('cpu-mem-gb', 32, T, 'CPU (DRAM) tier capacity in GiB (0 disables the tier)', { check: nonNegative }),
  cacheDir: path(
    'cache-dir',
    T,
    'Directory of the storage tier; must exist unless --create-cache-dir (only files this run writes are ever deleted)',
    {
      defaultText: 'a new temporary directory',
      metavar: 'DIR',
      normalize: (v) => (v === undefined ? v : resolvePath(v)),
    },
  ),
  createCacheDir: bool('create-cache-dir', T, 'Create --cache-dir (and missing parents) when it does not exist', { ours: true }),
  removeStaleEntries: bool(
    'remove-stale-entries',
    T,
    'Delete entry files (kvc-<run id>-*.bin) and metadata calibration files (.kvc-cal*) that earlier, killed runs left in --cache-dir',
    {
      ours: true,
    },
  ),
  storageCapacityGb: float('storage-capacity-gb', 0, T, 'Storage tier capacity in GiB (0 = 95% of the free space)', { check: nonNegative }),
  kvPool: choice(
    'kv-pool',
    KV_POOLS,
    'private',
    T,
    'private = each server (rank) its own storage namespace; shared = one KV block pool every rank reads and writes (block mode only; docs/shared-pool.md)',
    { ours: true },
  ),
  keepPool: bool('keep-pool', T, 'Leave the blocks this run published in the shared pool, for a later run to start warm', { ours: true }),
  route: choice(
    'route',
    ROUTE_FLAG_VALUES,
    'auto',
    T,
    'How ranks divide a recorded trace: session = one conversation per server, round-robin = request i to rank i mod N, replicate = every rank replays it all; auto = round-robin with --kv-pool shared, else replicate',
    { ours: true },
  ),
  maxConcurrentAllocs: int('max-concurrent-allocs', 0, T, 'Bound on concurrent allocations (0 = unlimited)', { check: nonNegative }),
  storageBackend: choice(
    'storage-backend',
    STORAGE_BACKENDS,
    DEFAULT_STORAGE_BACKEND,
    T,
    `Storage tier backend: ${STORAGE_BACKENDS.map((k) => `${k} = ${STORAGE_KINDS[k].help}`).join('; ')}`,
    { ours: true },
  ),
  s3Endpoint: path(
    's3-endpoint',
    T,
    'S3 endpoint URL (http(s)://host[:port]) of --storage-backend s3; credentials come from AWS_* variables or profile files only',
    {
      ours: true,
      metavar: 'URL',
      defaultText: "the provider's endpoint for --s3-region",
    },
  ),
  s3Bucket: path('s3-bucket', T, 'Bucket of --storage-backend s3 (must exist unless --create-bucket)', { ours: true, metavar: 'NAME' }),
  createBucket: bool('create-bucket', T, 'Create --s3-bucket when it does not exist', { ours: true }),
  s3Prefix: str(
    's3-prefix',
    'kvcache-bench/',
    T,
    "Key prefix of the S3 tier's objects (kvc-<run id>-*.bin under it); ranks add rank_<N>/",
    {
      ours: true,
      metavar: 'PREFIX',
    },
  ),
  s3Region: path('s3-region', T, 'S3 signing region', {
    ours: true,
    metavar: 'REGION',
    defaultText: 'AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1',
  }),
  s3PathStyle: bool('s3-path-style', T, "Path-style S3 addressing for the provider's endpoint (always used with --s3-endpoint)", {
    ours: true,
  }),
  s3CaFile: path(
    's3-ca-file',
    T,
    "PEM file of the CA(s) that signed an https:// --s3-endpoint's certificate, trusted beside Node's own and NODE_EXTRA_CA_CERTS; verification is never turned off",
    { ours: true, metavar: 'FILE', defaultText: "Node's CA bundle and NODE_EXTRA_CA_CERTS" },
  ),
  ioMode: choice(
    'io-mode',
    IO_MODES,
    'direct',
    T,
    'Storage tier file I/O: direct = O_DIRECT, reads never served by the page cache; buffered = as the reference',
    { ours: true },
  ),
  kvLayout: choice(
    'kv-layout',
    KV_LAYOUTS,
    'flat',
    T,
    'How the file tier lays entries out: flat = one file per entry in --cache-dir; fanout = one file per entry under hash fan-out directories (<3 hex>/<2 hex>/, written to a temporary name and renamed into place, as llm-d’s file-system backend does); slab = fixed-size slots in pool files laid out before the measured window (no create or unlink per entry). A shared pool (--kv-pool shared) is always fanned out',
    { ours: true },
  ),
  fileCalls: choice(
    'file-calls',
    FILE_CALLS,
    'native',
    T,
    "How the file tier makes the system calls of an entry of one chunk (direct I/O): native = all of them (flat and fanout: open … close and fanout's rename; slab: the write and fdatasync, or the read) as one job of the C helper, handed to the kernel through io_uring by one thread where the kernel allows it, else made on the helper's threads; io_uring or threads = that way only (exit 2 when it cannot be had); fs = Node's fs, one threadpool job per call. Each call is timed where it is made. native falls back to threads when io_uring is refused and to fs when the helper is not built (the results' storage_file_calls says which ran)",
    { ours: true },
  ),
  slabSlotMib: float(
    'slab-slot-mib',
    0,
    T,
    "Slot size of --kv-layout slab in MiB (0 = a full KV block; whole-request mode: the largest synthetic context's entry)",
    { ours: true, check: nonNegative, metavar: 'MIB' },
  ),
  slabFileGib: float('slab-file-gib', 0, T, 'Size of each pool file of --kv-layout slab in GiB (0 = the pool in 4 files)', {
    ours: true,
    check: nonNegative,
    metavar: 'GIB',
  }),
  payloadFiller: choice(
    'payload-filler',
    PAYLOAD_FILLERS,
    'native',
    T,
    "Who fills the write buffers: native = the C helper (worker threads when it is not built); threads = worker threads (the results' payload_generation.filler says which ran)",
    { ours: true },
  ),

  datasetPath: path('dataset-path', S, 'ShareGPT JSON file to replay instead of synthetic users', { metavar: 'FILE' }),
  maxConversations: int('max-conversations', 500, S, 'Conversations to load from the ShareGPT file (> 0)', { check: positive }),
  requestRate: float('request-rate', 0, S, 'ShareGPT requests per second (0 = as fast as possible)', { check: nonNegative }),
  useBurstTrace: bool('use-burst-trace', S, 'Replay a BurstGPT trace instead of synthetic users'),
  burstTracePath: str('burst-trace-path', 'BurstGPT/data/BurstGPT_1.csv', S, 'BurstGPT CSV file, directory or glob', { metavar: 'PATH' }),
  mooncakeTrace: path(
    'mooncake-trace',
    S,
    'Mooncake trace (JSON Lines or .jsonl.zst: timestamp, input_length, output_length, hash_ids) to replay as KV blocks',
    { metavar: 'FILE', ours: true },
  ),
  traceBlockTokens: int(
    'trace-block-tokens',
    512,
    S,
    `Tokens one Mooncake hash_id covers (the FAST'25 traces: 512; Alibaba's ATC'25 traces: 16); 1 … ${MAX_BLOCK_TOKENS}`,
    { check: { kind: 'between', min: 1, max: MAX_BLOCK_TOKENS }, ours: true, metavar: 'N' },
  ),
  traceSpeedup: float('trace-speedup', 1.0, S, 'BurstGPT and Mooncake replay speed-up (0 = no pacing delays)', { check: nonNegative }),
  replayCycles: int('replay-cycles', 0, S, 'BurstGPT and Mooncake replay cycles (0 = until the duration ends)', { check: nonNegative }),
  kvBlockTokens: int(
    'kv-block-tokens',
    0,
    S,
    `KV cache in blocks of N tokens keyed by prefix hash, as inference engines store it (0 = one entry per request, as the reference; Mooncake traces: 512); 1 … ${MAX_BLOCK_TOKENS}`,
    { check: { kind: 'between', min: 0, max: MAX_BLOCK_TOKENS }, ours: true, metavar: 'N' },
  ),
  validationTrace: path(
    'validation-trace',
    S,
    'JSON list of real request records (RealTraceEntry) to compare the run with: hit rate, read/write bytes, context lengths',
    { metavar: 'FILE' },
  ),

  durationSec: int('duration', 60, R, 'Measured run length in seconds (1 … validation_limits.max_duration_seconds)', { check: positive }),
  maxRequests: int('max-requests', 0, R, 'Stop after this many completed requests (0 = no limit)', { check: nonNegative }),
  seed: int('seed', 0, R, 'Seed of every random stream', {
    defaultAt: (ctx) => randomSeed(ctx.rng),
    defaultText: 'random, chosen at startup and recorded',
  }),
  precondition: bool('precondition', R, 'Fill the storage tier before measuring'),
  preconditionSizeGb: float('precondition-size-gb', 0, R, 'Bytes to write when preconditioning, in GiB (0 = 2 × storage capacity)', {
    check: nonNegative,
  }),
  preconditionThreads: int('precondition-threads', 0, R, 'Preconditioning writers (0 = CPU count)', { check: nonNegative }),
  trials: int('trials', 1, R, 'Run the workload this many times (fresh cache each); --output holds the median trial by storage bytes/s', {
    ours: true,
    check: positive,
  }),
  trialPauseSec: float('trial-pause', 0, R, 'Seconds to wait between trials (>= 0)', { ours: true, check: nonNegative }),
  config: path('config', R, 'YAML file with workload settings and extra models', {
    defaultText: 'none: built-in defaults',
    metavar: 'FILE',
  }),
  // Ranks of a multi-process run (issue 14): mpirun / srun / Kubernetes indexed jobs (engine/ranks.ts).
  rankOutputBase: path(
    'rank-output-base',
    R,
    'Under a launcher: write results to DIR/rank_<N>/kvcache_results_<time>.json (replaces --output)',
    {
      ours: true,
      metavar: 'DIR',
      normalize: (v) => (v === undefined ? v : resolvePath(v)),
    },
  ),
  rankCacheBase: path('rank-cache-base', R, 'Under a launcher: use DIR/rank_<N>/ as the cache dir (created; replaces --cache-dir)', {
    ours: true,
    metavar: 'DIR',
    normalize: (v) => (v === undefined ? v : resolvePath(v)),
  }),
  seedBase: int('seed-base', 0, R, 'Under a launcher: seed = N + rank (replaces --seed; acts only when given)', {
    ours: true,
    check: nonNegative,
    defaultText: 'none',
  }),
  worldSize: int(
    'world-size',
    0,
    R,
    'Number of ranks when the launcher does not say (Kubernetes JOB_COMPLETION_INDEX); 0 = the launcher’s',
    {
      ours: true,
      check: nonNegative,
    },
  ),
  barrierDir: path('barrier-dir', R, 'Directory shared by every rank where they meet at the start and end', {
    ours: true,
    metavar: 'DIR',
    defaultText: 'DIR/barrier of --rank-output-base',
    normalize: (v) => (v === undefined ? v : resolvePath(v)),
  }),
  barrierTimeoutSec: float('barrier-timeout', 120, R, 'Seconds a rank waits at a barrier for the others before failing alone', {
    ours: true,
    check: positive,
  }),

  output: str('output', '', O, 'Results JSON file', {
    metavar: 'FILE',
    defaultAt: (ctx) => defaultOutputName(ctx.now),
    defaultText: 'benchmark_results_<YYYYmmdd_HHMMSS>.json',
  }),
  xlsxOutput: path('xlsx-output', O, 'Also write a one-row XLSX (or CSV) summary here', { metavar: 'FILE' }),
  performanceProfile: choice('performance-profile', PERFORMANCE_PROFILES, 'latency', O, 'Criteria of the storage health verdict'),
  keepLatencySamples: bool('keep-latency-samples', O, 'Also dump every raw per-request latency into the JSON (memory grows with the run)', {
    ours: true,
  }),
  noProgress: bool('no-progress', O, 'Do not show the live view (a dashboard on a terminal, a line every 10 s otherwise)', { ours: true }),
  logLevel: choice('log-level', LOG_LEVELS, 'INFO', O, 'Logging verbosity'),
  // Issue 23: the modelled time to first token (docs/ttft.md); measured figures are never replaced.
  gpuProfile: choice(
    'gpu-profile',
    ['none', ...GPU_PROFILE_KEYS] as const,
    'h100-sxm',
    O,
    'GPU whose prefill compute the modelled TTFT figures assume (dense BF16 peak of its data sheet); none: no modelled figures',
    { ours: true },
  ),
  mfu: float('mfu', 0.5, O, 'Model FLOPs utilisation of the modelled prefill: share of the GPU peak it achieves (0 < mfu <= 1)', {
    ours: true,
    check: positive,
  }),

  prefillOnly: bool('prefill-only', M, 'Disaggregated prefill node: writes only (excludes --decode-only)'),
  decodeOnly: bool('decode-only', M, 'Disaggregated decode node: reads only (excludes --prefill-only)'),
  enableAutoscaling: bool(
    'enable-autoscaling',
    M,
    'Adjust the number of active users during the run (qos: hold storage saturation at the target; capacity: find the peak)',
  ),
  autoscalerMode: choice('autoscaler-mode', AUTOSCALER_MODES, 'qos', M, 'Autoscaler goal'),
  targetSaturation: float('target-saturation', 0.8, M, 'Storage saturation the QoS autoscaler aims for (0.0 … 1.0)', {
    check: { kind: 'between', min: 0, max: 1 },
  }),
  tokenizer: choice(
    'tokenizer',
    TOKENIZERS,
    'cl100k_base',
    S,
    'Token counts of ShareGPT text: a real cl100k_base tokenizer, or characters ÷ sharegpt.chars_per_token_estimate',
    { ours: true },
  ),
  autoscaleIntervalSec: float('autoscale-interval', 10, M, 'Seconds between autoscaler samples (the reference: 10)', {
    ours: true,
    check: { kind: 'atLeast', min: 0.1, unit: 's' },
  }),
  ioTraceLog: path(
    'io-trace-log',
    M,
    'Trace mode: no real I/O; log every tier operation (incl. deletions) to this CSV (.zst: compressed)',
    { metavar: 'FILE' },
  ),
  enableLatencyTracing: bool(
    'enable-latency-tracing',
    M,
    'Trace block-layer and syscall latencies with bpftrace around the measured phase (needs root) and distil a fio job',
  ),
};

export type FlagTable = typeof FLAG_TABLE;
export type FlagField = keyof FlagTable;
type ValueOf<R> = R extends FlagRow<infer V> ? V : never;

/** Every command-line flag, by value, under its RunFlags field. `model` is the model key as typed. */
export type RunFlags = { readonly [K in FlagField]: ValueOf<FlagTable[K]> };

/** The rows with their fields, in table order. */
export const FLAG_ROWS: ReadonlyArray<FlagRow<unknown> & { readonly field: FlagField }> = (Object.keys(FLAG_TABLE) as FlagField[]).map(
  (field) => ({
    ...(FLAG_TABLE[field] as FlagRow<unknown>),
    field,
  }),
);

const BY_NAME: ReadonlyMap<string, (typeof FLAG_ROWS)[number]> = new Map(FLAG_ROWS.map((f) => [f.name, f]));

export function flagByName(name: string): (typeof FLAG_ROWS)[number] | undefined {
  return BY_NAME.get(name);
}

/** The flags' plain defaults (a computed default is left at its placeholder). */
export function flagDefaults(): RunFlags {
  return Object.fromEntries(FLAG_ROWS.map((f) => [f.field, f.default])) as RunFlags;
}
