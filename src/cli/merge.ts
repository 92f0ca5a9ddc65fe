// `kv-cache merge DIR… [-o FILE]`: merges the rank files of an MLPerf run (or any rank runs laid
// out as <trial>/rank_<N>/kvcache_results_*.json) into kvcache_run_summary_<time>.json. Missing or
// unreadable rank files are listed in missing_files and set partial_failure: they never crash the
// merge. Bad arguments exit 2 with nothing written.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { collectRun } from '../mlperf/collect.js';
import { mergeRun } from '../mlperf/merge.js';
import type { RunSummary } from '../mlperf/merge.js';
import { summaryLines } from '../mlperf/summary-text.js';
import { fileStamp } from '../util/dates.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { MERGE_ARGS } from './subcommand-args.js';

/** Problems with the merge's directories (each must be an existing directory). */
export function mergeDirProblems(dirs: readonly string[]): string[] {
  if (dirs.length === 0) return ['merge needs at least one directory (a run directory of kv-cache mlperf)'];
  return dirs.flatMap((d) => {
    try {
      return statSync(d).isDirectory() ? [] : [`'${d}' is not a directory`];
    } catch {
      return [`directory '${d}' not found`];
    }
  });
}

/** Merges `dirs` and writes the summary to `output`; returns it. Throws only when the file cannot be written. */
export function mergeAndSave(dirs: readonly string[], output: string, now: Date): RunSummary {
  const { trials, meta } = collectRun(dirs, now);
  const summary = mergeRun(trials, meta);
  writeFileAtomically(output, `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

/** `args`: DIR… and -o/--output, as declared in subcommands.ts; a problem with the paths throws a ConfigError (exit 2). */
export function mergeMain(args: ArgsOf<typeof MERGE_ARGS>): number {
  const dirs = args.positionals;
  const now = new Date();
  const output = args.values.output ?? join(dirs[0], `kvcache_run_summary_${fileStamp(now)}.json`);
  const problems = mergeDirProblems(dirs);
  if (problems.length === 0) problems.push(...outputProblems(output));
  if (problems.length > 0) throw new ConfigError(problems);
  let summary: RunSummary;
  try {
    summary = mergeAndSave(dirs, output, now);
  } catch (e) {
    process.stderr.write(`kv-cache merge: error: summary ${output} not written: ${messageOf(e)}\n`);
    return 1;
  }
  for (const line of summaryLines(summary, output)) process.stdout.write(`${line}\n`);
  if (summary.partial_failure) process.stderr.write('kv-cache merge: warning: partial_failure: some rank files or trials are missing\n');
  return 0;
}
