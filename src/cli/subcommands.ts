// The subcommands of `kv-cache` besides a run: one row each. `dispatch` (main.ts) routes by the first
// argument and `--help` lists them, so a new subcommand is one row here plus its own module.
import type { SignalGuard } from './signals.js';
import { replayMain } from './replay.js';
import { schemaMain } from './schema.js';
import { modelsMain } from './models.js';
import { aggregateMain } from './aggregate.js';
import { mlperfMain } from './mlperf.js';
import { mergeMain } from './merge.js';
import { distillMain } from './distill-fio.js';
import { traceMain } from './trace.js';

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
    main: (argv, ctx) => replayMain(argv, ctx.version, ctx.signals),
  },
  {
    name: 'schema',
    usage: 'kv-cache schema [run|replay]',
    summary: 'Prints the JSON Schema of a results file',
    main: (argv) => schemaMain(argv),
  },
  {
    name: 'models',
    usage: 'kv-cache models [--json]',
    summary: 'Lists the model table with KV bytes per token and entry sizes',
    main: (argv) => modelsMain(argv),
  },
  {
    name: 'aggregate',
    usage: 'kv-cache aggregate DIR… [-o summary.xlsx|.csv]',
    summary: "One row per results file in the directories (the reference's json_to_xlsx.py columns, then ours)",
    main: (argv) => aggregateMain(argv),
  },
  {
    name: 'mlperf',
    usage: 'kv-cache mlperf --results-dir DIR --cache-dir DIR [options]',
    summary: 'Runs the MLPerf v3.0 KV-cache sequence (options 1-3, trials, ranks) and merges it',
    main: (argv, ctx) => mlperfMain(argv, ctx.signals),
  },
  {
    name: 'merge',
    usage: 'kv-cache merge DIR... [--output FILE]',
    summary: 'Merges the rank results of an MLPerf run into one summary',
    main: (argv) => mergeMain(argv),
  },
  {
    name: 'distill-fio',
    usage: 'kv-cache distill-fio FILE [-o OUT.ini | --stdout]',
    summary: 'Distils a fio job from a traced results JSON or saved bpftrace output',
    main: (argv, ctx) => distillMain(argv, ctx.version),
  },
  {
    name: 'trace',
    usage: 'kv-cache trace (--pid N | --command "CMD") [--fio]',
    summary: "Traces a process's block-layer and syscall latencies with bpftrace (root)",
    main: (argv, ctx) => traceMain(argv, ctx.version, ctx.signals),
  },
];

export function findSubcommand(name: string | undefined): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}
