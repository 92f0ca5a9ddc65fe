// The subcommands of `kv-cache` besides a run: one row each. `dispatch` (main.ts) routes by the first
// argument and `--help` lists them, so a new subcommand is one row here plus its own module. Modules
// load on use: a run's start-up (before its signal handlers are installed) pays for none of them.
import type { SignalGuard } from './signals.js';

/** What a subcommand gets: its own arguments (the subcommand's name removed) and the process context. */
export interface SubcommandContext {
  readonly version: string;
  readonly signals: SignalGuard;
}

export interface Subcommand {
  readonly name: string;
  /** The usage line shown in `kv-cache --help`. */
  readonly usage: string;
  /** One sentence for `kv-cache --help`. */
  readonly summary: string;
  /** Returns the exit code (0 ok, 1 failure, 2 bad input). */
  readonly main: (argv: readonly string[], ctx: SubcommandContext) => Promise<number> | number;
}

export const SUBCOMMANDS: readonly Subcommand[] = [
  {
    name: 'replay',
    usage: 'kv-cache replay TRACE [options]',
    summary: 'Replays a recorded I/O trace against a storage directory',
    main: async (argv, ctx) => (await import('./replay.js')).replayMain(argv, ctx.version, ctx.signals),
  },
  {
    name: 'schema',
    usage: 'kv-cache schema [run|replay]',
    summary: 'Prints the JSON Schema of a results file',
    main: async (argv) => (await import('./schema.js')).schemaMain(argv),
  },
  {
    name: 'models',
    usage: 'kv-cache models [--json]',
    summary: 'Lists the model table with KV bytes per token and entry sizes',
    main: async (argv) => (await import('./models.js')).modelsMain(argv),
  },
  {
    name: 'aggregate',
    usage: 'kv-cache aggregate DIR… [-o summary.xlsx|.csv]',
    summary: "One row per results file in the directories (the reference's json_to_xlsx.py columns, then ours)",
    main: async (argv) => (await import('./aggregate.js')).aggregateMain(argv),
  },
  {
    name: 'mlperf',
    usage: 'kv-cache mlperf --results-dir DIR --cache-dir DIR [options]',
    summary: 'Runs the MLPerf v3.0 KV-cache sequence (options 1-3, trials, ranks) and merges it',
    main: async (argv, ctx) => (await import('./mlperf.js')).mlperfMain(argv, ctx.signals),
  },
  {
    name: 'merge',
    usage: 'kv-cache merge DIR... [--output FILE]',
    summary: 'Merges the rank results of an MLPerf run into one summary',
    main: async (argv) => (await import('./merge.js')).mergeMain(argv),
  },
  {
    name: 'distill-fio',
    usage: 'kv-cache distill-fio FILE [-o OUT.ini | --stdout]',
    summary: 'Distils a fio job from a traced results JSON or saved bpftrace output',
    main: async (argv, ctx) => (await import('./distill-fio.js')).distillMain(argv, ctx.version),
  },
  {
    name: 'trace',
    usage: 'kv-cache trace (--pid N | --command "CMD") [--fio]',
    summary: "Traces a process's block-layer and syscall latencies with bpftrace (root)",
    main: async (argv, ctx) => (await import('./trace.js')).traceMain(argv, ctx.version, ctx.signals),
  },
  {
    name: 'report',
    usage: 'kv-cache report RESULTS.json… [-o FILE]',
    summary: 'Writes a self-contained HTML report of one run or several overlaid',
    main: async (argv, ctx) => (await import('./report.js')).reportMain(argv, ctx.version),
  },
  {
    name: 'compare',
    usage: 'kv-cache compare A.json B.json… [--html FILE]',
    summary: 'Prints headline figures of runs side by side with ratios and their significance',
    main: async (argv, ctx) => (await import('./compare.js')).compareMain(argv, ctx.version),
  },
];

export function findSubcommand(name: string | undefined): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}
