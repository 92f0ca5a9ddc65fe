// Every file `kv-cache report` and `kv-cache compare` accept, each recognised by its shape and read
// through its own schema: a run's results (run-input.ts: also trial, rank and trace-mode runs), a
// replay's (replay-input.ts) and the merged summary of an MLPerf run (summary-input.ts: one entry per
// option). Files are read through util/input-file.ts (a regular file, a non-blocking open, the size
// cap checked on what was opened), and every problem is one line naming the file, without quoting it.
import { basename } from 'node:path';
import * as z from 'zod';
import { readInputText } from '../../util/input-file.js';
import { inert } from '../../util/safe-text.js';
import { ReportReplaySchema } from './replay-input.js';
import type { ReportReplay } from './replay-input.js';
import {
  disambiguate,
  MAX_RESULTS_BYTES,
  parseRunText,
  ReportInputError,
  refused,
  runLabel,
  schemaVersionProblem,
  zodProblems,
} from './run-input.js';
import type { LoadedRun } from './run-input.js';
import { MANIFEST_PROBLEM, mlperfFileKind, ReportSummarySchema, summaryVersionProblem } from './summary-input.js';
import type { MergedOption, ReportSummary } from './summary-input.js';

/** A `kv-cache replay` results file. */
export interface LoadedReplay {
  readonly path: string;
  readonly label: string;
  readonly replay: ReportReplay;
}

/** One option of a merged MLPerf summary: every rank of its trials as one system. */
export interface LoadedOption {
  readonly path: string;
  readonly label: string;
  /** The option's id in the summary ('1', '2', '3', or a directory name). */
  readonly option: string;
  readonly merged: MergedOption;
  readonly summary: ReportSummary;
}

/** One entry of a report or a comparison. */
export type LoadedInput = LoadedRun | LoadedReplay | LoadedOption;

export const isRun = (i: LoadedInput): i is LoadedRun => 'doc' in i;
export const isReplay = (i: LoadedInput): i is LoadedReplay => 'replay' in i;
export const isOption = (i: LoadedInput): i is LoadedOption => 'merged' in i;

/** What one file's text holds: a run, a replay or a summary's options. */
type Parsed = { kind: 'run'; doc: LoadedRun['doc'] } | { kind: 'replay'; doc: ReportReplay } | { kind: 'summary'; doc: ReportSummary };

function parseReplay(raw: unknown, name: string): ReportReplay {
  const version = z.object({ kvcache_bench: z.object({ schema_version: z.string() }) }).safeParse(raw);
  if (!version.success)
    throw refused(`${name}: a replay results file without kvcache_bench.schema_version; expected a kv-cache results file`);
  const problem = schemaVersionProblem(version.data.kvcache_bench.schema_version);
  if (problem !== undefined) throw refused(`${name}: ${problem}`);
  const parsed = ReportReplaySchema.safeParse(raw);
  if (!parsed.success) throw refused(`${name}: not a valid kv-cache replay results file: ${zodProblems(parsed.error)}`);
  return parsed.data;
}

function parseSummary(raw: unknown, name: string): ReportSummary {
  const version = z.object({ schema_version: z.string() }).safeParse(raw);
  const problem = version.success ? summaryVersionProblem(version.data.schema_version) : 'no schema_version';
  if (problem !== undefined) throw refused(`${name}: ${problem}`);
  const parsed = ReportSummarySchema.safeParse(raw);
  if (!parsed.success) throw refused(`${name}: not a valid kv-cache merged summary (kv-cache merge): ${zodProblems(parsed.error)}`);
  return parsed.data;
}

/** Parses a results file's text by what it is; `name` is how the messages refer to it. */
export function parseInputText(text: string, name: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw refused(`${name}: not JSON (${e instanceof Error ? e.message : String(e)}); expected a kv-cache results file`);
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'replay' in raw)
    return { kind: 'replay', doc: parseReplay(raw, name) };
  const mlperf = mlperfFileKind(raw);
  if (mlperf === 'manifest') throw refused(`${name}: ${MANIFEST_PROBLEM}`);
  if (mlperf === 'summary') return { kind: 'summary', doc: parseSummary(raw, name) };
  return { kind: 'run', doc: parseRunText(text, name) };
}

const replayLabel = (path: string, r: ReportReplay): string => `${basename(path)} (replay, ${r.kvcache_bench.storage_io_mode})`;
const optionLabel = (path: string, id: string, o: MergedOption): string =>
  `${basename(path)} option ${id} (${o.rank_count} rank${o.rank_count === 1 ? '' : 's'})`;

/** The entries one file gives, in order. */
function entriesOf(path: string, parsed: Parsed): LoadedInput[] {
  if (parsed.kind === 'run') return [{ path, label: runLabel(path, parsed.doc), doc: parsed.doc }];
  if (parsed.kind === 'replay') return [{ path, label: replayLabel(path, parsed.doc), replay: parsed.doc }];
  const summary = parsed.doc;
  return Object.entries(summary.options).map(([option, merged]) => ({
    path,
    label: optionLabel(path, option, merged),
    option,
    merged,
    summary,
  }));
}

/** Every run of `inputs` with its place among them, for the sections that chart runs. */
export function runsOf(inputs: readonly LoadedInput[]): LoadedRun[] {
  const onlyRuns = inputs.every(isRun);
  return inputs.flatMap((i, position) => (isRun(i) ? [onlyRuns ? i : { ...i, position }] : []));
}

/** Reads and checks every file; all problems in one error (bad input: exit 2). */
export function loadInputs(paths: readonly string[]): LoadedInput[] {
  const problems: string[] = [];
  const inputs: LoadedInput[] = [];
  for (const path of paths) {
    const read = readInputText(path, { maxBytes: MAX_RESULTS_BYTES });
    if (!read.ok) {
      problems.push(inert(`${path}: ${read.problem}`));
      continue;
    }
    try {
      const entries = entriesOf(path, parseInputText(read.text, path));
      if (entries.length === 0) problems.push(inert(`${path}: a merged summary without any option; nothing to report`));
      inputs.push(...entries);
    } catch (e) {
      if (e instanceof ReportInputError) problems.push(e.message);
      else problems.push(inert(`${path}: cannot be read (${e instanceof Error ? e.message : String(e)})`));
    }
  }
  if (problems.length > 0) throw new ReportInputError(problems.join('\n'));
  return disambiguate(inputs);
}
