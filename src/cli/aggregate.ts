// `kv-cache aggregate DIR… [-o summary.xlsx|summary.csv]`: one row per run results file found in the
// directories (their *.json files, not recursive, as the reference's json_to_xlsx.py), written as an
// XLSX sheet or CSV. This module finds and reads the files and checks the paths (the arguments are
// declared in subcommands.ts); the table is src/report/aggregate.ts. Bad arguments: one message, exit 2,
// nothing written. A results file larger than MAX_RESULTS_FILE_BYTES is bad input too (each file is
// parsed whole in memory): every file's size is checked before any is read. Files that are not
// results are listed as skipped with their reason; no results at all is exit 2.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { aggregateBytes, aggregateFormatOf, aggregateTable } from '../report/aggregate.js';
import type { FoundFile } from '../report/aggregate.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { formatBytes, readInputText } from '../util/input-file.js';
import { MAX_RESULTS_BYTES } from '../report/html/run-input.js';
import { inert } from '../util/safe-text.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { AGGREGATE_ARGS } from './subcommand-args.js';

/**
 * The largest results file aggregate reads: 256 MiB, the report's bound too (a 10-minute run's file is
 * ~1 MiB; --keep-latency-samples of a long run makes it larger). A file is parsed whole, which takes a
 * few times its size in memory; a larger one is refused before anything is read or written.
 */
export const MAX_RESULTS_FILE_BYTES = MAX_RESULTS_BYTES;

interface AggregateArgs {
  readonly dirs: readonly string[];
  readonly output: string;
}

/** The checked arguments (as declared in subcommands.ts); every problem with the paths at once as a ConfigError. */
export function aggregateArgs(input: ArgsOf<typeof AGGREGATE_ARGS>): AggregateArgs {
  const dirs = input.positionals;
  const output = input.values.output;
  const problems: string[] = [];
  for (const d of dirs) {
    let kind: string;
    try {
      const st = statSync(d);
      kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    } catch {
      problems.push(`${d}: no such directory`);
      continue;
    }
    if (kind === 'other') problems.push(`${d}: not a directory or a regular file`);
    else if (kind === 'file' && extname(d).toLowerCase() !== '.json')
      problems.push(`${d}: a file, not a directory or a .json results file`);
  }
  if (aggregateFormatOf(output) === undefined) problems.push(`--output ${output}: give a path ending in .xlsx or .csv`);
  else problems.push(...outputProblems(output, '--output'));
  if (problems.length > 0) throw new ConfigError(problems);
  return { dirs, output };
}

function readFound(path: string): FoundFile {
  // Regular files only (a FIFO or device would never end), opened without blocking, read no further than the cap.
  const read = readInputText(path, { maxBytes: MAX_RESULTS_FILE_BYTES });
  return read.ok ? { path, text: read.text } : { path, unreadable: read.problem };
}

/** The *.json files of each argument (a .json file stands for itself), each path as join(DIR, name), in order, once each. */
export function listResultsFiles(dirs: readonly string[]): string[] {
  const paths = new Set<string>();
  for (const d of dirs) {
    if (statSync(d).isFile()) {
      paths.add(d);
      continue;
    }
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (extname(e.name).toLowerCase() === '.json' && !e.isDirectory()) paths.add(join(d, e.name));
    }
  }
  return [...paths];
}

/** Files above the size bound, each as one problem (stat only: nothing is opened). */
export function oversizedProblems(paths: readonly string[], maxBytes = MAX_RESULTS_FILE_BYTES): string[] {
  const problems: string[] = [];
  for (const path of paths) {
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      continue; // gone or unreadable: reported as skipped when it is read
    }
    if (size > maxBytes)
      problems.push(
        inert(
          `${path}: is ${formatBytes(size)}; a results file may be at most ${formatBytes(maxBytes)} (aggregate parses each file whole in memory)`,
        ),
      );
  }
  return problems;
}

/** The files of `paths`, each read only when the consumer reaches it: the table keeps one file's text at a time. */
export function* readResultsFiles(paths: readonly string[]): Generator<FoundFile> {
  for (const path of paths) yield readFound(path);
}

export async function aggregateMain(input: ArgsOf<typeof AGGREGATE_ARGS>): Promise<number> {
  const args = aggregateArgs(input);
  const paths = listResultsFiles(args.dirs);
  const tooLarge = oversizedProblems(paths);
  if (tooLarge.length > 0) throw new ConfigError(tooLarge);
  const table = aggregateTable(readResultsFiles(paths));
  for (const s of table.skipped) process.stdout.write(`${inert(`Skipped ${s.path}: ${s.reason}`)}\n`);
  if (table.rows.length === 0) {
    process.stderr.write(`kv-cache aggregate: error: no run results found in ${args.dirs.join(', ')} (*.json files with a 'summary')\n`);
    return 2;
  }
  const format = aggregateFormatOf(args.output) ?? 'xlsx';
  try {
    const bytes = await aggregateBytes(table, format);
    mkdirSync(dirname(resolve(args.output)), { recursive: true });
    writeFileAtomically(args.output, bytes);
  } catch (e) {
    process.stderr.write(`kv-cache aggregate: error: ${args.output} not written: ${messageOf(e)}\n`);
    return 1;
  }
  const skipped = table.skipped.length > 0 ? ` (${table.skipped.length} skipped)` : '';
  process.stdout.write(`Aggregated ${table.files} results file(s)${skipped} into ${args.output}\n`);
  return 0;
}
