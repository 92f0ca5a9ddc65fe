// `kv-cache compare A.json B.json… [--html FILE]`: the headline figures of several runs side by side
// with ratios against the first, each difference marked when it is within the runs' own noise (their
// --trials CVs) or when that noise is unknown; --html also writes the report's comparison view.
import { formatCompareTable } from '../report/html/compare-table.js';
import { readSubcommandArgs } from './sub-args.js';
import { htmlOutputProblems, loadOrComplain, writeReport } from './report.js';

const COMPARE_HELP = `Usage: kv-cache compare A.json B.json [MORE.json…] [--html FILE]

Prints the headline figures of two or more runs side by side (storage read/write GiB/s, storage read
p95/p99 ms, requests/s, tokens/s, hit rate, device bytes, validity) with ratios against the first.
A ratio is marked n.s. when the difference is within the runs' own noise (their --trials CVs) and ?
when that noise is unknown (runs without --trials): no difference is called significant without trials.

  --html FILE   Also write the HTML comparison report (as kv-cache report A.json B.json… -o FILE)
  -h, --help    Show this help`;

export function compareMain(argv: readonly string[], version: string): number {
  const prefix = 'kv-cache compare';
  const parsed = readSubcommandArgs(argv, { html: { type: 'string' } }, prefix, COMPARE_HELP);
  if (typeof parsed === 'number') return parsed;
  const files = parsed.positionals;
  const html = parsed.values.html;
  const problems = [
    ...(files.length < 2 ? [`give two or more results files to compare (got ${files.length}); for one run use kv-cache report`] : []),
    ...(html !== undefined ? htmlOutputProblems(html, '--html', files) : []),
  ];
  if (problems.length > 0) {
    process.stderr.write(`${prefix}: error: ${problems.join('\n')}\n`);
    return 2;
  }
  const runs = loadOrComplain(prefix, files);
  if (runs === undefined) return 2;
  process.stdout.write(formatCompareTable(runs));
  return html === undefined ? 0 : writeReport(prefix, runs, html, version);
}
