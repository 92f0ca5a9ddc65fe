// What `kv-cache check` reads: a run directory (its run.json, its trials' rank files through
// collect.ts's bounded walk, its newest merged summary) or one results file. Everything goes through
// the hardened readers: readInputText (regular files only, no link followed inside the run, size-capped)
// and the results schema; nothing is quoted from a file. A path that is neither is a CheckInputError
// (exit 2); a broken rank file inside a run is evidence (6.3.3.1), not an input error.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';
import { parseResults } from '../../report/results-schema.js';
import { readInputText } from '../../util/input-file.js';
import { MiB } from '../../util/units.js';
import { inert } from '../../util/safe-text.js';
import { collectRun, MAX_RESULTS_BYTES, readManifest, resultsProblem, MANIFEST_NAME } from '../collect.js';
import type { CheckInput, Division, SummaryInput } from './types.js';

export class CheckInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckInputError';
  }
}

/** A merged summary is a few hundred KiB even for many ranks and trials. */
const MAX_SUMMARY_BYTES = 64 * MiB;
const SUMMARY_NAME = /^kvcache_run_summary_.*\.json$/;

/** The upstream figures of each option, each believed alone (a wrong type is absent, so the rule says so). */
const num = z.number().optional().catch(undefined);
const SummarySchema = z.object({
  options: z.record(
    z.string().max(64),
    z.object({
      aggregated_read_bandwidth_gbps: num,
      aggregated_write_bandwidth_gbps: num,
      aggregated_storage_throughput_tokens_per_sec: num,
      aggregated_device_read_p95_ms: num,
      aggregated_device_write_p95_ms: num,
    }),
  ),
});

/** The newest summary file directly in `dir` (a regular file, not a link), read and parsed leniently. */
export function readSummary(dir: string): SummaryInput | undefined {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && SUMMARY_NAME.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return undefined;
  }
  const name = names.at(-1);
  if (name === undefined) return undefined;
  const path = join(dir, name);
  const read = readInputText(path, { maxBytes: MAX_SUMMARY_BYTES, noFollow: true });
  if (!read.ok) return { path, problem: `not readable (${read.problem})` };
  let raw: unknown;
  try {
    raw = JSON.parse(read.text);
  } catch {
    return { path, problem: 'not JSON' };
  }
  const parsed = SummarySchema.safeParse(raw);
  return parsed.success ? { path, options: parsed.data.options } : { path, problem: 'not a run summary (no options object)' };
}

/** The option of a results file outside a run: its option_<k> ancestor, else 'file'. */
function optionOfPath(path: string): string {
  const m = /(?:^|\/)option_(\d+)\//.exec(path);
  return m !== null ? m[1] : 'file';
}

function divisionOf(
  recorded: string | undefined,
  given: Division | undefined,
  where: string,
): { division: Division | undefined; from: string } {
  const fromFile = recorded === 'closed' || recorded === 'open' ? recorded : undefined;
  if (fromFile !== undefined && given !== undefined && fromFile !== given)
    throw new CheckInputError(`--division ${given}, but ${where} records the division ${fromFile}`);
  if (fromFile !== undefined) return { division: fromFile, from: `${MANIFEST_NAME} division` };
  if (given !== undefined) return { division: given, from: '--division' };
  return { division: undefined, from: `not recorded (no ${MANIFEST_NAME} with a division; give --division)` };
}

function readFile(path: string, given: Division | undefined): CheckInput {
  const read = readInputText(path, { maxBytes: MAX_RESULTS_BYTES });
  if (!read.ok) throw new CheckInputError(`${inert(path)}: not a readable results file (${read.problem})`);
  let doc;
  try {
    doc = parseResults(read.text);
  } catch (e) {
    throw new CheckInputError(`${inert(path)}: not a readable results file (${resultsProblem(e)})`);
  }
  const { division, from } = divisionOf(undefined, given, path);
  const rank = doc.kvcache_bench.ranks?.rank ?? 0;
  return {
    kind: 'file',
    root: path,
    manifest: undefined,
    division,
    divisionFrom: from,
    trials: [{ option: optionOfPath(path), trial: 1, dir: dirname(path), files: [{ rank, path, doc }], missing: [] }],
    summary: undefined,
  };
}

/** The check's input from a path given on the command line (followed if a link: the user named it). */
export function readCheckInput(given: string, division: Division | undefined, now: Date): CheckInput {
  const path = resolve(given);
  let isDir: boolean;
  try {
    const st = statSync(path);
    if (!st.isDirectory() && !st.isFile()) throw new CheckInputError(`${inert(given)}: neither a run directory nor a results file`);
    isDir = st.isDirectory();
  } catch (e) {
    if (e instanceof CheckInputError) throw e;
    throw new CheckInputError(`${inert(given)}: not found (a run directory of kv-cache mlperf, or a results file)`);
  }
  if (!isDir) return readFile(path, division);
  const manifestPath = join(path, MANIFEST_NAME);
  const fields = readManifest(path);
  const { trials } = collectRun([path], now);
  if (trials.length === 0 && fields === undefined)
    throw new CheckInputError(
      `${inert(given)}: no ${MANIFEST_NAME} and no rank results (rank_<N>/kvcache_results_*.json) under it: not a run directory`,
    );
  const d = divisionOf(fields?.division, division, manifestPath);
  return {
    kind: 'run',
    root: path,
    manifest: fields === undefined ? undefined : { path: manifestPath, fields },
    division: d.division,
    divisionFrom: d.from,
    trials,
    summary: readSummary(path),
  };
}
