// `kv-cache check PATH…`: the MLPerf KV-cache submission rules (mlperf/check/) against run directories
// or results files. Prints per rule `id name STATUS` and its evidence; --json writes the document.
// Exit 0 when no rule fails, 1 when one does, 2 when a PATH cannot be read (one message, nothing written).
import { readCheckInput, CheckInputError } from '../mlperf/check/input.js';
import { checkDocument, checkLines } from '../mlperf/check/report.js';
import type { CheckDocument } from '../mlperf/check/report.js';
import { runCheck } from '../mlperf/check/rules.js';
import type { Division } from '../mlperf/check/types.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { CHECK_ARGS } from './subcommand-args.js';

/** Checks one path; a path that cannot be read throws a CheckInputError. */
export function checkPath(path: string, division: Division | undefined, now = new Date()): CheckDocument {
  return checkDocument(runCheck(readCheckInput(path, division, now)));
}

/** Exit code of documents: 1 when a rule fails anywhere. */
export const exitCodeOf = (docs: readonly CheckDocument[]): number => (docs.some((d) => d.verdict === 'FAIL') ? 1 : 0);

export function checkMain(args: ArgsOf<typeof CHECK_ARGS>): number {
  const paths = args.positionals;
  const json = args.values.json;
  const division: Division | undefined = args.values.division;
  const problems: string[] = [];
  if (json !== undefined && paths.length > 1) problems.push('--json writes the check of one PATH; give one PATH');
  if (json !== undefined && json !== '-') problems.push(...outputProblems(json, '--json'));
  // Every input is read before anything is printed or written: an unreadable one is exit 2 with nothing written.
  const docs: CheckDocument[] = [];
  for (const p of paths) {
    try {
      docs.push(checkPath(p, division));
    } catch (e) {
      if (!(e instanceof CheckInputError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  if (json === '-') process.stdout.write(`${JSON.stringify(docs[0], null, 2)}\n`);
  else for (const d of docs) for (const line of checkLines(d)) process.stdout.write(`${line}\n`);
  if (json !== undefined && json !== '-') {
    try {
      writeFileAtomically(json, `${JSON.stringify(docs[0], null, 2)}\n`);
    } catch (e) {
      process.stderr.write(`kv-cache check: error: ${json} not written: ${messageOf(e)}\n`);
      return 1;
    }
  }
  return exitCodeOf(docs);
}
