// `kv-cache report RESULTS.json… [-o FILE]`: one self-contained HTML report of one results file, or of
// several overlaid with ratios against the first: runs (trials and ranks included), replays and merged
// MLPerf summaries alike. Bad input (a missing or foreign file, a schema version
// from the future, an unusable output path) is one message and exit 2, with nothing written.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { reportHtml } from '../report/html/build-report.js';
import { loadInputs } from '../report/html/inputs.js';
import type { LoadedInput } from '../report/html/inputs.js';
import { ReportInputError } from '../report/html/run-input.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { REPORT_ARGS } from './subcommand-args.js';

/** Problems with an HTML output path (none when it can be written and is not one of the inputs). */
export function htmlOutputProblems(path: string, flag: string, inputs: readonly string[]): string[] {
  const problems = outputProblems(
    path,
    flag,
    inputs.map((p) => ({ flag: 'results file', path: p })),
  );
  return path.endsWith('.json') && problems.length === 0
    ? [`${flag} ${path} ends in .json; give the HTML file's path (e.g. report.html)`]
    : problems;
}

/** Writes the report of `runs` to `path` (its directory made if missing); returns the exit code. */
export function writeReport(prefix: string, runs: readonly LoadedInput[], path: string, version: string): number {
  try {
    const html = reportHtml(runs, new Date(), version);
    mkdirSync(dirname(resolve(path)), { recursive: true });
    writeFileAtomically(path, html);
    process.stdout.write(`Report written to ${path} (${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB)\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`${prefix}: error: could not write ${path}: ${messageOf(e)}\n`);
    return 1;
  }
}

/** Loads the results files, printing the one message of bad input; undefined when there was one. */
export function loadOrComplain(prefix: string, paths: readonly string[]): LoadedInput[] | undefined {
  try {
    return loadInputs(paths);
  } catch (e) {
    if (!(e instanceof ReportInputError)) throw e;
    process.stderr.write(`${prefix}: error: ${e.message}\n`);
    return undefined;
  }
}

/** `args`: RESULTS.json… and -o/--output, as declared in subcommands.ts; an unusable output throws a ConfigError (exit 2). */
export function reportMain(args: ArgsOf<typeof REPORT_ARGS>, version: string): number {
  const prefix = 'kv-cache report';
  const files = args.positionals;
  const output = args.values.output;
  const problems = htmlOutputProblems(output, '--output', files);
  if (problems.length > 0) throw new ConfigError(problems);
  const runs = loadOrComplain(prefix, files);
  return runs === undefined ? 2 : writeReport(prefix, runs, output, version);
}
