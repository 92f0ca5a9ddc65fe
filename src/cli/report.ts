// `kv-cache report RESULTS.json… [-o FILE]`: one self-contained HTML report of one run, or of several
// runs overlaid with ratios against the first. Bad input (a missing or foreign file, a schema version
// from the future, an unusable output path) is one message and exit 2, with nothing written.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { reportHtml } from '../report/html/build-report.js';
import { loadRuns, ReportInputError } from '../report/html/run-input.js';
import type { LoadedRun } from '../report/html/run-input.js';
import { messageOf } from '../util/errors.js';
import { readSubcommandArgs } from './sub-args.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';

export const DEFAULT_REPORT_OUTPUT = 'report.html';

const REPORT_HELP = `Usage: kv-cache report RESULTS.json [MORE.json…] [-o FILE]

Writes one self-contained HTML report (scripts and styles inlined: readable offline and by e-mail).
One file: headline figures and the validity verdict, bandwidth, IOPS and latency over time, latency
distributions from the saved histograms, tier occupancy, evictions, QoS, device telemetry,
autoscaling, run parameters and machine. Several files: the same charts overlaid (one colour per run)
and a table of headline figures with ratios against the first file.

  -o, --output FILE   The HTML file to write (default: ${DEFAULT_REPORT_OUTPUT})
  -h, --help          Show this help`;

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
export function writeReport(prefix: string, runs: readonly LoadedRun[], path: string, version: string): number {
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
export function loadOrComplain(prefix: string, paths: readonly string[]): LoadedRun[] | undefined {
  try {
    return loadRuns(paths);
  } catch (e) {
    if (!(e instanceof ReportInputError)) throw e;
    process.stderr.write(`${prefix}: error: ${e.message}\n`);
    return undefined;
  }
}

export function reportMain(argv: readonly string[], version: string): number {
  const prefix = 'kv-cache report';
  const parsed = readSubcommandArgs(argv, { output: { type: 'string', short: 'o' } }, prefix, REPORT_HELP);
  if (typeof parsed === 'number') return parsed;
  const files = parsed.positionals;
  const output = parsed.values.output ?? DEFAULT_REPORT_OUTPUT;
  const problems = [
    ...(files.length === 0 ? ['give at least one results file (the JSON a run wrote with --output)'] : []),
    ...htmlOutputProblems(output, '--output', files),
  ];
  if (problems.length > 0) {
    process.stderr.write(`${prefix}: error: ${problems.join('\n')}\n`);
    return 2;
  }
  const runs = loadOrComplain(prefix, files);
  return runs === undefined ? 2 : writeReport(prefix, runs, output, version);
}
