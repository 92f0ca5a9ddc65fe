// The subcommands of `kv-cache` besides a run: one row each. `dispatch` (main.ts) routes by the first
// argument and `--help` lists them, so a new subcommand is one row here plus its own module.
import type { SignalGuard } from './signals.js';
import { replayMain } from './replay.js';
import { schemaMain } from './schema.js';

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
    name: 'report',
    usage: 'kv-cache report RESULTS.json… [-o FILE]',
    summary: 'Writes a self-contained HTML report of one run or several overlaid',
    // Loaded on use: a run's start-up (before its signal handlers are installed) does not pay for the report code.
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
