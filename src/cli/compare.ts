// `kv-cache compare A.json B.json… [--html FILE]`: the headline figures of several results files side by
// side (runs, replays, each option of a merged MLPerf summary; a figure a file does not record is n/a)
// with ratios against the first, each difference marked when it is within the runs' own noise (their
// --trials CVs) or when that noise is unknown; --html also writes the report's comparison view.
import { formatCompareTable } from '../report/html/compare-table.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { COMPARE_ARGS } from './subcommand-args.js';
import { htmlOutputProblems, loadOrComplain, writeReport } from './report.js';

/** `args`: two or more RESULTS.json and --html, as declared in subcommands.ts; an unusable --html throws a ConfigError (exit 2). */
export function compareMain(args: ArgsOf<typeof COMPARE_ARGS>, version: string): number {
  const prefix = 'kv-cache compare';
  const files = args.positionals;
  const html = args.values.html;
  const problems = html !== undefined ? htmlOutputProblems(html, '--html', files) : [];
  if (problems.length > 0) throw new ConfigError(problems);
  const runs = loadOrComplain(prefix, files);
  if (runs === undefined) return 2;
  process.stdout.write(formatCompareTable(runs));
  return html === undefined ? 0 : writeReport(prefix, runs, html, version);
}
