// The subcommands of `kv-cache` besides a run: one row each, with its arguments declared once.
// `dispatch` (main.ts) routes by the first argument; the row's declaration (sub-args.ts) gives the
// strict parse, `kv-cache <sub> --help`, the usage line in `kv-cache --help` and the bad-argument
// errors (one message + the usage, exit 2, before the module runs). A new subcommand is its module
// plus one declaration (subcommand-args.ts) and one row here. Modules load on use: a run's start-up (before its signal
// handlers are installed) pays for none of them, so the declarations import nothing but sub-args.ts
// (a default they restate, like distill-fio's iodepth clamp, is held equal by subcommands.test.ts).
import type { SignalGuard } from './signals.js';
import { runWithArgs, splitDeclared, usageLine } from './sub-args.js';
import type { ArgsSpec, OptionSpecs, SubArgs } from './sub-args.js';
import {
  REPLAY_ARGS,
  SCHEMA_ARGS,
  MODELS_ARGS,
  AGGREGATE_ARGS,
  MLPERF_ARGS,
  MLPERF_PROBE_ARGS,
  MERGE_ARGS,
  CHECK_ARGS,
  DISTILL_ARGS,
  TRACE_ARGS,
  REPORT_ARGS,
  COMPARE_ARGS,
  SIZE_ARGS,
} from './subcommand-args.js';

/** What a subcommand gets: its own arguments (the subcommand's name removed) and the process context. */
export interface SubcommandContext {
  readonly version: string;
  readonly signals: SignalGuard;
}

export interface Subcommand {
  readonly name: string;
  /** The usage line shown in `kv-cache --help`, made from the declaration. */
  readonly usage: string;
  /** One sentence for `kv-cache --help`. */
  readonly summary: string;
  readonly args: ArgsSpec;
  /** Returns the exit code (0 ok, 1 failure, 2 bad input). */
  readonly main: (argv: readonly string[], ctx: SubcommandContext) => Promise<number>;
}

interface Row<O extends OptionSpecs> {
  readonly name: string;
  readonly summary: string;
  readonly args: ArgsSpec<O>;
  /** Runs with arguments already parsed and checked against `args`. */
  readonly run: (args: SubArgs<O>, ctx: SubcommandContext) => Promise<number> | number;
}

function subcommand<const O extends OptionSpecs>(row: Row<O>): Subcommand {
  return {
    name: row.name,
    summary: row.summary,
    args: row.args,
    usage: usageLine(row.name, row.args),
    main: (argv, ctx) => runWithArgs(row.name, row.args, argv, (a) => row.run(a, ctx)),
  };
}

export const SUBCOMMANDS: readonly Subcommand[] = [
  subcommand({
    name: 'replay',
    summary: 'Replays a recorded I/O trace against a storage directory',
    args: REPLAY_ARGS,
    run: async (args, ctx) => (await import('./replay.js')).replayMain(args, ctx.version, ctx.signals),
  }),
  subcommand({
    name: 'schema',
    summary: 'Prints the JSON Schema of a results file',
    args: SCHEMA_ARGS,
    run: async (args) => (await import('./schema.js')).schemaMain(args),
  }),
  subcommand({
    name: 'models',
    summary: 'Lists the model table with KV bytes per token and entry sizes',
    args: MODELS_ARGS,
    run: async (args) => (await import('./models.js')).modelsMain(args),
  }),
  subcommand({
    name: 'aggregate',
    summary: "One row per results file in the directories (the reference's json_to_xlsx.py columns, then ours)",
    args: AGGREGATE_ARGS,
    run: async (args) => (await import('./aggregate.js')).aggregateMain(args),
  }),
  {
    ...subcommand({
      name: 'mlperf',
      summary: 'Runs the MLPerf v3.0 KV-cache sequence (options 1-3, trials, ranks) and merges it',
      args: MLPERF_ARGS,
      run: async (args, ctx) => (await import('./mlperf.js')).mlperfMain(args, ctx.signals),
    }),
    // The sequence's own host probe has a declaration of its own; users never type it.
    main: (argv, ctx) =>
      argv.includes('--probe-dir')
        ? runWithArgs('mlperf', MLPERF_PROBE_ARGS, argv, async (args) => (await import('./mlperf.js')).probeMain(args))
        : runWithArgs('mlperf', MLPERF_ARGS, argv, async (args) => (await import('./mlperf.js')).mlperfMain(args, ctx.signals)),
  },
  subcommand({
    name: 'merge',
    summary: 'Merges the rank results of an MLPerf run into one summary',
    args: MERGE_ARGS,
    run: async (args) => (await import('./merge.js')).mergeMain(args),
  }),
  subcommand({
    name: 'check',
    summary: 'Checks an MLPerf run directory (or a results file) against the KV-cache submission rules',
    args: CHECK_ARGS,
    run: async (args) => (await import('./check.js')).checkMain(args),
  }),
  subcommand({
    name: 'distill-fio',
    summary: 'Distils a fio job from a traced results JSON or saved bpftrace output',
    args: DISTILL_ARGS,
    run: async (args, ctx) => (await import('./distill-fio.js')).distillMain(args, ctx.version),
  }),
  subcommand({
    name: 'trace',
    summary: "Traces a process's block-layer and syscall latencies with bpftrace (root)",
    args: TRACE_ARGS,
    run: async (args, ctx) => (await import('./trace.js')).traceMain(args, ctx.version, ctx.signals),
  }),
  subcommand({
    name: 'report',
    summary: 'Writes a self-contained HTML report of one run or several overlaid',
    args: REPORT_ARGS,
    run: async (args, ctx) => (await import('./report.js')).reportMain(args, ctx.version),
  }),
  subcommand({
    name: 'compare',
    summary: 'Prints headline figures of runs side by side with ratios and their significance',
    args: COMPARE_ARGS,
    run: async (args, ctx) => (await import('./compare.js')).compareMain(args, ctx.version),
  }),
  {
    ...subcommand({
      name: 'size',
      summary: 'The LRU hit rate of a workload at every KV cache capacity, in one pass (no I/O)',
      args: SIZE_ARGS,
      run: async (args, ctx) => (await import('./size.js')).sizeMain(args, [], ctx.version),
    }),
    // Its own options, and the run's flags for the workload (parsed by the run's reader in size.ts).
    main: (argv, ctx) => {
      const { own, rest } = splitDeclared(SIZE_ARGS, argv);
      return runWithArgs('size', SIZE_ARGS, own, async (args) => (await import('./size.js')).sizeMain(args, rest, ctx.version));
    },
  },
];

export function findSubcommand(name: string | undefined): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}
