// Every subcommand's arguments, declared once (sub-args.ts makes the parse, --help, the usage line and
// the errors of them). Apart from subcommands.ts, whose rows use them at run time, the modules import
// only their types: the declarations import nothing but sub-args.ts, so a run's start-up loads no
// subcommand module, and no module imports the table that loads it.
import type { ArgsSpec } from './sub-args.js';

/** Most operations a replay keeps in flight: each is an async lane, and 1,024 already saturate any device here. */
export const MAX_REPLAY_CONCURRENCY = 1024;
/** Longest replay --duration: 24 days (a Node timer fires a longer delay at once). */
export const MAX_REPLAY_DURATION_SEC = 24 * 86_400;

export const REPLAY_ARGS = {
  about: `Replays an I/O trace (written by --io-trace-log, or by the reference; .zst accepted) against a cache
directory and measures the storage operations.`,
  positional: { name: 'TRACE', noun: 'trace file', min: 1, max: 1 },
  options: {
    'cache-dir': {
      kind: 'string',
      value: 'DIR',
      help: 'Directory for the entry files; must exist',
      defaultText: 'a new temporary directory',
    },
    'create-cache-dir': { kind: 'bool', help: 'Create --cache-dir (and missing parents) when it does not exist' },
    'io-mode': { kind: 'string', value: 'MODE', choices: ['direct', 'buffered'], default: 'direct', help: 'direct (O_DIRECT) or buffered' },
    'payload-filler': {
      kind: 'string',
      value: 'KIND',
      choices: ['native', 'threads'],
      default: 'native',
      help: 'Who fills the write buffers (as kv-cache run --payload-filler)',
    },
    'storage-backend': {
      kind: 'string',
      value: 'KIND',
      choices: ['file', 'memory', 's3'],
      default: 'file',
      help: 'Storage backend to replay onto (as kv-cache run --storage-backend)',
    },
    's3-endpoint': {
      kind: 'string',
      value: 'URL',
      help: 'With --storage-backend s3: the endpoint (as kv-cache run)',
      defaultText: "the provider's",
    },
    's3-bucket': { kind: 'string', value: 'NAME', help: 'With --storage-backend s3: the bucket (must exist unless --create-bucket)' },
    'create-bucket': { kind: 'bool', help: 'Create --s3-bucket when it does not exist' },
    's3-prefix': { kind: 'string', value: 'PREFIX', default: 'kvcache-bench/', help: "Key prefix of the replay's objects" },
    's3-region': { kind: 'string', value: 'REGION', help: 'S3 signing region', defaultText: 'AWS_REGION, else us-east-1' },
    's3-path-style': { kind: 'bool', help: "Path-style S3 addressing for the provider's endpoint" },
    's3-ca-file': {
      kind: 'string',
      value: 'FILE',
      help: 'With an https:// --s3-endpoint: PEM file of the CA(s) that signed its certificate (as kv-cache run)',
      defaultText: "Node's CA bundle and NODE_EXTRA_CA_CERTS",
    },
    concurrency: {
      kind: 'number',
      value: 'N',
      integer: true,
      min: 1,
      max: MAX_REPLAY_CONCURRENCY,
      default: 16,
      help: `Operations in flight at once, 1 … ${MAX_REPLAY_CONCURRENCY}`,
    },
    paced: { kind: 'bool', help: 'Issue rows at their trace times instead of as fast as possible' },
    'all-tiers': { kind: 'bool', help: 'Replay rows of every tier onto storage (default: only Tier-2 rows)' },
    duration: {
      kind: 'number',
      value: 'S',
      integer: true,
      min: 1,
      max: MAX_REPLAY_DURATION_SEC,
      help: `Stop after S seconds, 1 … ${MAX_REPLAY_DURATION_SEC}`,
      defaultText: 'at the end of the trace',
    },
    seed: {
      kind: 'number',
      value: 'N',
      integer: true,
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      default: 0,
      help: 'Seed of the payload bytes, a non-negative integer',
    },
    output: { kind: 'string', short: 'o', value: 'FILE', help: 'Results JSON', defaultText: 'replay_results_<YYYYmmdd_HHMMSS>.json' },
  },
  notes:
    'SIGINT/SIGTERM stop the replay and save partial results (exit 130/143). The same signal again within 1 s is the same ' +
    'request (launchers such as timeout deliver it twice); a later one exits at once, removing the entry files.',
} as const satisfies ArgsSpec;

export const SCHEMA_ARGS = {
  about: `Prints the JSON Schema (draft 2020-12) of the results file of a run (default), of a replay or of kv-cache size.
Results files carry the schema version they follow in kvcache_bench.schema_version (the schema's const).`,
  positional: { name: 'KIND', noun: 'results kind', min: 0, max: 1, choices: ['run', 'replay', 'size'] },
  options: {},
} as const satisfies ArgsSpec;

export const MODELS_ARGS = {
  about: `Lists the built-in models: layers, KV heads, head dimension, bytes per element, KV bytes per token and
the size of one 1,024- and one 8,192-token cache entry (MiB = 2^20 bytes, one tensor-parallel rank).
A second table gives each model's parameter counts and, per GPU profile (--gpu-profile of run), the read
bandwidth above which loading a cached 8,192-token prefix beats recomputing it (docs/ttft.md).
A config file's model_configs may add or override models; they are not listed here.`,
  options: { json: { kind: 'bool', inUsage: true, help: 'Print the same table as a JSON array (sizes in bytes)' } },
} as const satisfies ArgsSpec;

export const AGGREGATE_ARGS = {
  about: `One row per run results file in the directories (their *.json files, not sub-directories; a DIR may
also be one .json file), sorted by file name: the columns of the reference's json_to_xlsx.py first, in
its order (Filename, Storage Throughput (tok/s) from the root-level totals, Storage Requests/sec,
Total I/O Time (s), then its summary columns), then ours (I/O mode, file system, device, tool bytes/s,
device bytes, validity and its reason codes, stop reason, the trials' CVs, versions). Numbers are
rounded to their precision. Files that are not run results (replay results, other JSON, unreadable
files) are listed as skipped with the reason; so are trial files whose --output file is there too.`,
  positional: { name: 'DIR', noun: 'directory', plural: 'directories', min: 1, max: Infinity },
  options: {
    output: {
      kind: 'string',
      short: 'o',
      value: 'FILE',
      inUsage: true,
      default: 'mlperf_storage_summary.xlsx',
      defaultText: "mlperf_storage_summary.xlsx, the reference's name",
      help: '.xlsx (one sheet) or .csv',
    },
  },
} as const satisfies ArgsSpec;

/** The flags of `kv-cache mlperf` that only OPEN may give (CLOSED locks them; mlperf/request.ts), with their help. */
const MLPERF_OPEN_ONLY = [
  ['trials', 'N', 'Trials per option (CLOSED: 3)'],
  ['seed', 'N', 'Seed base of every run (CLOSED: 42)'],
  ['start-delay', 'S', 'Seconds before each trial (CLOSED: 90)'],
  ['end-delay', 'S', 'Seconds after each trial (CLOSED: 90)'],
  ['inter-option-delay', 'S', 'Seconds between options (CLOSED: 90)'],
  ['config', 'FILE', 'A kv-cache config.yaml for every run (CLOSED: the built-in settings)'],
  ['precondition-size-gb', 'G', 'Bytes to precondition (CLOSED: 2 × the storage capacity)'],
  ['model', 'NAME', "Overrides the option's model in every option run"],
  ['num-users', 'N', "Overrides the option's user count"],
  ['cpu-mem-gb', 'G', "Overrides the option's CPU tier size"],
  ['gpu-mem-gb', 'G', "Overrides the option's GPU tier size"],
  ['max-concurrent-allocs', 'N', "Overrides the option's allocation limit"],
  ['generation-mode', 'MODE', "Overrides the option's generation mode"],
  ['duration', 'S', "Overrides the option's duration"],
] as const;

export const MLPERF_ARGS = {
  about: `Runs the MLPerf Storage v3.0 KV-cache sequence in one command: preconditioning, then options 1, 2, 3
(KVCache-1: 1 Max Storage Stress, 2 Storage Throughput, 3 Large Model), each trial launched as ranks
(mpirun when more than one), delays around every trial, and the merged summary
kvcache_run_summary_<time>.json in <results-dir>/kvcache_<time>/.`,
  // Numbers stay text here: mlperf/request.ts reads them only where the division lets them count
  // (a CLOSED-locked flag is reported as locked, not also as malformed).
  options: {
    'results-dir': {
      kind: 'string',
      value: 'DIR',
      required: true,
      help: 'Where results and the summary go (must exist; on a file system every host shares)',
    },
    'cache-dir': {
      kind: 'string',
      value: 'DIR',
      help: 'The storage under test (must exist; each rank uses DIR/rank_<N>/); CLOSED: on another file system than --results-dir. Required, except with --storage-backend s3 (the bucket is the storage under test)',
    },
    closed: {
      kind: 'bool',
      help: 'Division CLOSED (the default): locks seed 42, 3 trials, 90 s delays, no --config, preconditioning and every option value',
    },
    open: { kind: 'bool', help: 'Division OPEN: the flags below marked OPEN may be given' },
    option: { kind: 'string', value: '1|2|3|all', help: 'Options to run, or a list such as 1,3', defaultText: 'all' },
    'system-name': { kind: 'string', value: 'NAME', help: 'Recorded in the summary' },
    hosts: { kind: 'string', value: 'H1,H2,…', help: 'Hosts for mpirun', defaultText: 'this host only' },
    'num-processes': { kind: 'string', value: 'N', help: 'Total ranks (must divide evenly by the host count)' },
    npernode: { kind: 'string', value: 'N', help: 'Ranks per host', defaultText: 'num-processes ÷ hosts, else 1' },
    'mpi-params': { kind: 'string', value: '"…"', dashValue: true, help: 'Extra mpirun arguments, split on whitespace' },
    'storage-backend': {
      kind: 'string',
      value: 'file|s3',
      help: 'Storage tier backend of every run; s3 is OPEN only (CLOSED admits object storage only through a POSIX gateway mounted as --cache-dir)',
      defaultText: 'file',
    },
    's3-args': {
      kind: 'string',
      value: '"…"',
      dashValue: true,
      help: 'With --storage-backend s3: the run flags of the bucket, split on whitespace (e.g. "--s3-endpoint URL --s3-bucket B --storage-capacity-gb 100")',
    },
    'kv-pool': {
      kind: 'string',
      value: 'private|shared',
      help: 'shared: one KV block pool under --cache-dir (or the bucket) for every rank, with --kv-block-tokens N (OPEN only; docs/shared-pool.md)',
      defaultText: 'private',
    },
    'kv-block-tokens': { kind: 'string', value: 'N', help: 'Tokens per KV block of a shared pool (with --kv-pool shared)' },
    'barrier-timeout': { kind: 'string', value: 'S', help: 'Seconds ranks wait for each other at a barrier', defaultText: '300' },
    'dry-run': { kind: 'bool', help: 'Print the exact commands of the sequence, run nothing' },
    'no-progress': { kind: 'bool', help: 'Plain progress lines even on a terminal' },
    'skip-precondition': { kind: 'bool', help: 'No preconditioning (OPEN only)' },
    ...(Object.fromEntries(
      MLPERF_OPEN_ONLY.map(([name, value, help]) => [name, { kind: 'string', value, help: `${help} (OPEN only)` }]),
    ) as Record<(typeof MLPERF_OPEN_ONLY)[number][0], { readonly kind: 'string'; readonly value: string; readonly help: string }>),
  },
  notes: `OPEN only: each option value given overrides that value in every option run; values not given stay
the option's (no default of ours stands in for them).

Ctrl-C stops the running trial (its ranks save partial results), merges what finished, exits 130.`,
} as const satisfies ArgsSpec;

/** `kv-cache mlperf --probe-dir DIR`: what the sequence itself runs on every host (plan.ts), not for users. */
export const MLPERF_PROBE_ARGS = {
  about: 'Checks that every host sees the shared results directory (run by kv-cache mlperf under mpirun).',
  options: {
    'probe-dir': { kind: 'string', value: 'DIR', required: true, help: 'The shared directory every host writes a file in' },
    'barrier-timeout': { kind: 'number', value: 'S', above: 0, default: 30, help: 'Seconds to wait for every host' },
  },
} as const satisfies ArgsSpec;

export const MERGE_ARGS = {
  about: `Merges the rank results under each DIR (a run directory of kv-cache mlperf, or trial directories
holding rank_<N>/kvcache_results_*.json) into one summary with upstream's fields and ours.`,
  positional: { name: 'DIR', noun: 'directory', plural: 'directories', min: 1, max: Infinity },
  options: {
    output: {
      kind: 'string',
      short: 'o',
      value: 'FILE',
      inUsage: true,
      help: 'Summary file',
      defaultText: 'DIR/kvcache_run_summary_<YYYYmmdd_HHMMSS>.json of the first DIR',
    },
  },
} as const satisfies ArgsSpec;

export const CHECK_ARGS = {
  about: `Checks an MLPerf KV-cache run against the submission rules (Rules.md §6): a run directory written by
kv-cache mlperf (run.json, option_<k>/trial_<t>/rank_<N>/ files, the merged summary) or one results file.
Per rule: id, name, PASS / FAIL / NOT APPLICABLE / CANNOT TELL and its evidence (file, field, value,
required). Exit 0 when no rule fails, 1 when one does, 2 when an input cannot be read.`,
  positional: { name: 'PATH', noun: 'run directory or results file', plural: 'run directories or results files', min: 1, max: Infinity },
  options: {
    json: {
      kind: 'string',
      value: 'FILE',
      inUsage: true,
      help: "Also write the check as a JSON document (its own schema_version) to FILE; '-' prints it instead of the text (one PATH)",
    },
    division: {
      kind: 'string',
      value: 'DIV',
      choices: ['closed', 'open'],
      help: 'closed or open: the division when no run.json records it (a results file alone); CLOSED-only rules are CANNOT TELL without it',
    },
  },
} as const satisfies ArgsSpec;

export const DISTILL_ARGS = {
  about: `Distils a fio job file from a traced workload. FILE is a results JSON of a run with
--enable-latency-tracing (or the reference's), or saved bpftrace output (kv-cache trace -o, bpftrace).`,
  positional: { name: 'FILE', noun: 'file', min: 1, max: 1 },
  options: {
    output: {
      kind: 'string',
      short: 'o',
      value: 'OUT.ini',
      help: 'Where to write the job',
      defaultText: 'fio_traced_<YYYYmmdd_HHMMSS>.ini here',
    },
    stdout: { kind: 'bool', help: 'Print the job instead of writing it' },
    'window-s': {
      kind: 'number',
      value: 'S',
      above: 0,
      what: 'seconds',
      help: "The capture's length in seconds (for Little's law; saved output has none)",
    },
    // Its default is telemetry/distill.ts's DEFAULT_MAX_IODEPTH, not imported: that would load the distiller at every start.
    'max-iodepth': { kind: 'number', value: 'N', integer: true, min: 1, max: 65536, defaultText: '256', help: 'Upper clamp of iodepth' },
  },
  groups: [{ options: ['output', 'stdout'] }],
} as const satisfies ArgsSpec;

export const TRACE_ARGS = {
  about: `Traces a process with bpftrace (root): block requests (of DEV, a disk or partition name such as
nvme0n1 or /dev/sda2, else every device) and the process's read/write/fsync system calls. Ends after
--duration seconds, when the process exits, or on Ctrl-C, and prints the 15 histograms.`,
  options: {
    pid: { kind: 'number', value: 'N', integer: true, min: 1, what: 'a process id', help: 'An existing process (its thread group)' },
    command: { kind: 'string', value: '"CMD"', help: 'Run CMD with sh -c and trace it until it exits' },
    device: { kind: 'string', value: 'DEV', help: "Filter block probes on DEV's disk", defaultText: 'every device' },
    duration: { kind: 'number', value: 'S', above: 0, what: 'seconds', help: 'Stop after S seconds' },
    fio: { kind: 'bool', inUsage: true, help: 'Also print the distilled fio job' },
    output: { kind: 'string', short: 'o', value: 'FILE', help: 'Write the fio job to FILE (implies --fio)' },
  },
  groups: [{ options: ['pid', 'command'], required: true }],
} as const satisfies ArgsSpec;

export const REPORT_ARGS = {
  about: `Writes one self-contained HTML report (scripts and styles inlined: readable offline and by e-mail).
One file: headline figures and the validity verdict, bandwidth, IOPS and latency over time, latency
distributions from the saved histograms, tier occupancy, evictions, QoS, device telemetry,
autoscaling, run parameters and machine. Several files: the same charts overlaid (one colour per run)
and a table of headline figures with ratios against the first file. A kv-cache replay's results get
a section of their own (what was replayed, storage latency percentiles), as does an mlperf run's
merged summary (kvcache_run_summary_*.json: each option with all its ranks); their rank files are runs.`,
  positional: { name: 'RESULTS.json', noun: 'results file', min: 1, max: Infinity },
  options: { output: { kind: 'string', short: 'o', value: 'FILE', inUsage: true, default: 'report.html', help: 'The HTML file to write' } },
} as const satisfies ArgsSpec;

export const COMPARE_ARGS = {
  about: `Prints the headline figures of two or more runs side by side (storage read/write GiB/s, storage read
p95/p99 ms, requests/s, tokens/s, hit rate, device bytes, validity) with ratios against the first.
A ratio is marked n.s. when the difference is within the runs' own noise (their --trials CVs) and ?
when that noise is unknown (runs without --trials): no difference is called significant without trials.
A replay's results, and each option of an mlperf merged summary, stand beside runs: a figure one does
not record is n/a.`,
  positional: { name: 'RESULTS.json', noun: 'results file', min: 2, max: Infinity, hint: 'for one run use kv-cache report' },
  options: {
    html: {
      kind: 'string',
      value: 'FILE',
      inUsage: true,
      help: 'Also write the HTML comparison report (as kv-cache report A.json B.json… -o FILE)',
    },
  },
} as const satisfies ArgsSpec;

export const SIZE_ARGS = {
  about: `How much KV storage does this traffic need? The exact LRU prefix hit rate at every capacity, in one pass
over the requests a run with the same workload flags would issue (a Mooncake trace, or synthetic,
ShareGPT or BurstGPT requests with --kv-block-tokens N), with no tier and no I/O: stack distances
over block bytes, with the run's block semantics (the longest cached prefix is read, a chain is
evicted tail first, a partial last block has its real size). Prints the token and block hit rates
at powers of two and at --capacities, the ideal (unlimited) rate, the capacity reaching 50/90/95/99 %
of it, the read bandwidth the hits need at the trace's own request rate (and at --trace-speedup), and
with --gpu-profile the prefill GPU-seconds they save per hour. With --servers N: the curve with one
shared pool and with N private pools. Every other option is a run flag (kv-cache --help) choosing the
workload: --mooncake-trace, --trace-block-tokens, --kv-block-tokens, --model, --seed, --duration,
--max-requests, --replay-cycles (0 counts as one pass), --gpu-profile, --mfu, ...`,
  options: {
    capacities: {
      kind: 'string',
      value: 'LIST',
      inUsage: true,
      help: 'Capacities where the rates are given exactly, comma-separated, binary units: 512G,1T,4.5T (K, M, G, T, P; a bare number is GiB)',
    },
    servers: { kind: 'number', value: 'N', integer: true, min: 1, max: 4096, default: 1, help: 'Inference servers the capacity serves' },
    route: {
      kind: 'string',
      value: 'MODE',
      choices: ['session', 'round-robin', 'replicate'],
      default: 'round-robin',
      help: "How requests reach private pools: round-robin (a run's default with several ranks), by session (first block), or every server every request",
    },
    'kv-pool': {
      kind: 'string',
      value: 'POOL',
      choices: ['both', 'shared', 'private'],
      default: 'both',
      help: 'With --servers N > 1: the deployments to compute (shared = one pool of the whole capacity, private = N of capacity ÷ N)',
    },
    json: { kind: 'string', value: 'FILE', inUsage: true, help: 'Write the results as JSON (kv-cache schema size prints its schema)' },
    csv: { kind: 'string', value: 'FILE', help: 'Write one row per deployment and capacity as CSV' },
    html: { kind: 'string', value: 'FILE', help: 'Write an HTML page with the curve on a log capacity axis' },
    'measured-run': {
      kind: 'string',
      value: 'RESULTS.json',
      help: "A block-granular run's results: its token hit rate is drawn as a point at its capacity (storage + CPU + GPU)",
    },
  },
} as const satisfies ArgsSpec;
