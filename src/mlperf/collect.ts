// Finds the rank files of an MLPerf run on disk: every trial directory (one holding rank_<N>/
// directories) under the given directories, each rank's newest kvcache_results_*.json, parsed against
// the results schema. A rank that should exist but has no file, or whose file is not a results
// document, is listed in `missing` with its reason: never a crash. The run's manifest (run.json,
// written by `kv-cache mlperf`) says how many ranks and trials there should be.
//
// The run directory may be shared and written by others, so reading it is bounded by what is there:
// symbolic links below the given directories are never followed (no loops, nothing outside the run
// merged), every file is read through readInputText (regular files only, size-capped, never blocking
// on a FIFO), the manifest's numbers are believed only within bounds, and a long run of absent ranks
// is one line, not one string per rank. Messages name a bad file and what is wrong with it, never
// quote its contents.
import { readdirSync, statSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import * as z from 'zod';
import { LatencyHistogram } from '../metrics/latency.js';
import { parseResults } from '../report/results-schema.js';
import { badMetadataHistograms } from './merge-metadata.js';
import type { ResultsDocument } from '../report/results-schema.js';
import { readInputText } from '../util/input-file.js';
import { MiB } from '../util/units.js';
import { POOLED_HISTOGRAMS } from './merge.js';
import type { MergeMeta, RankFile, TrialInput } from './merge.js';

/** A rank's results file is a few MiB; anything past this is not one (and stays below V8's string limit). */
export const MAX_RESULTS_BYTES = 256 * MiB;
/** run.json is a few hundred bytes. */
const MAX_MANIFEST_BYTES = MiB;
/** More ranks than any launcher starts: a rank number or world size past it is not believed. */
export const MAX_RANKS = 1_000_000;
/** More trials per option than anyone runs. */
export const MAX_TRIALS = 10_000;
/** Directories looked at while searching for trials: a run holds a few dozen. */
const MAX_DIRS_VISITED = 10_000;
/** Absent ranks listed one per line up to this many in a trial; past it, as ranges. */
const MISSING_LISTED_ONE_BY_ONE = 64;

export const MANIFEST_NAME = 'run.json';

/** What `kv-cache mlperf` records about the run before its first step. */
export interface RunManifest {
  readonly run_datetime: string;
  readonly npernode: number;
  readonly host_count: number;
  readonly total_ranks: number;
  readonly trials_per_option: number;
  readonly division: string;
  readonly system_name: string | null;
  readonly options: number[];
  readonly hosts: string[];
  /** The sequence's own settings and where its directories live (for `kv-cache check`; absent in older manifests). */
  readonly sequence?: SequenceFacts;
}

/** A directory the sequence used: its file system and device as the launching host saw them. */
export interface DirFacts {
  readonly path: string;
  /** stat's st_dev: equal ids mean one file system. */
  readonly device_id: number | null;
  readonly file_system: string | null;
  readonly block_device: string | null;
}

/** What the ranks' own files cannot tell: the sequence's delays, seed, config, preconditioning, OPEN overrides, directories. */
export interface SequenceFacts {
  readonly seed: number;
  readonly start_delay_sec: number;
  readonly end_delay_sec: number;
  readonly inter_option_delay_sec: number;
  readonly config: string | null;
  readonly preconditioned: boolean;
  /** OPEN option values the user typed (kv-cache flag → value); empty in CLOSED. */
  readonly overrides: Record<string, string | number>;
  readonly launch_host: string;
  readonly results_dir: DirFacts;
  /** Absent with --storage-backend s3 (no cache directory: the bucket is the storage under test). */
  readonly cache_dir?: DirFacts;
}

/** The manifest's fields as merge believes them: each one within its bounds, else absent (the files decide). */
const count = (max: number) => z.number().int().min(1).max(max).optional().catch(undefined);
const text = z.string().max(256).optional().catch(undefined);
const seconds = z.number().min(0).max(1e9);
const DirFactsSchema = z.object({
  path: z.string().max(4096),
  device_id: z.number().int().min(0).nullable(),
  file_system: z.string().max(64).nullable(),
  block_device: z.string().max(256).nullable(),
});
/** Each field believed alone: one malformed field is absent, the others stand. */
const SequenceSchema = z.object({
  seed: z.number().int().min(0).optional().catch(undefined),
  start_delay_sec: seconds.optional().catch(undefined),
  end_delay_sec: seconds.optional().catch(undefined),
  inter_option_delay_sec: seconds.optional().catch(undefined),
  config: z.string().max(4096).nullable().optional().catch(undefined),
  preconditioned: z.boolean().optional().catch(undefined),
  overrides: z
    .record(z.string().max(64), z.union([z.string().max(256), z.number()]))
    .optional()
    .catch(undefined),
  launch_host: text,
  results_dir: DirFactsSchema.optional().catch(undefined),
  cache_dir: DirFactsSchema.optional().catch(undefined),
});
const ManifestSchema = z.object({
  run_datetime: text,
  npernode: count(MAX_RANKS),
  host_count: count(MAX_RANKS),
  total_ranks: count(MAX_RANKS),
  trials_per_option: count(MAX_TRIALS),
  division: text,
  system_name: z.string().max(256).nullable().optional().catch(undefined),
  options: z.array(z.number().int()).max(64).optional().catch(undefined),
  hosts: z.array(z.string().max(256)).max(10_000).optional().catch(undefined),
  sequence: SequenceSchema.optional().catch(undefined),
});
export type TrustedManifest = z.output<typeof ManifestSchema>;

/** Directories of the run that hold rank directories but are not trials. */
const NOT_TRIALS = new Set(['precondition', 'probe', 'barrier']);
const MAX_DEPTH = 6;
const RANK_DIR = /^rank_(\d+)$/;

/** A directory's entries, sorted; none when it cannot be listed. Types come from the entry itself (a link is a link). */
function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

/** Real (not linked) subdirectories are the only way down: a link loop or a link out of the run is never entered. */
function trialDirs(root: string, budget: { left: number }, depth = 0): string[] {
  if (depth > MAX_DEPTH || budget.left <= 0 || NOT_TRIALS.has(basename(root))) return [];
  budget.left--;
  const found = entries(root);
  if (found.some((e) => RANK_DIR.test(e.name) && (e.isDirectory() || e.isSymbolicLink()))) return [root];
  return found.filter((e) => e.isDirectory()).flatMap((e) => trialDirs(join(root, e.name), budget, depth + 1));
}

/** The run's manifest, its fields checked one by one; undefined when there is none or it is not a JSON object. */
export function readManifest(dir: string): TrustedManifest | undefined {
  const read = readInputText(join(dir, MANIFEST_NAME), { maxBytes: MAX_MANIFEST_BYTES, noFollow: true });
  if (!read.ok) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(read.text);
  } catch {
    return undefined;
  }
  const parsed = ManifestSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** The option a trial directory belongs to: its option_<k> ancestor, else its parent's name. */
function optionOf(trialDir: string): string {
  const parts = resolve(trialDir).split(sep);
  const opt = [...parts].reverse().find((p) => /^option_\d+$/.test(p));
  return opt !== undefined ? opt.slice('option_'.length) : basename(resolve(trialDir, '..'));
}

function trialNumberOf(trialDir: string, fallback: number): number {
  const m = /^trial_(\d{1,9})$/.exec(basename(trialDir));
  return m !== null ? Number(m[1]) : fallback;
}

/** Why a results file's text is not a results document, in words that never quote the file. */
export function resultsProblem(e: unknown): string {
  if (e instanceof SyntaxError) return 'not JSON';
  if (e instanceof z.ZodError) {
    const first = e.issues[0];
    const where = first.path.length > 0 ? first.path.map(String).join('.') : '(top level)';
    const what = first.code === 'invalid_type' ? `expected ${first.expected}` : first.code.replaceAll('_', ' ');
    const more = e.issues.length > 1 ? ` (and ${e.issues.length - 1} more problems)` : '';
    return `not a results document: ${where}: ${what}${more}`;
  }
  return 'cannot be parsed';
}

/**
 * The document without the pooled histograms that cannot be decoded, and a line naming each: one bad
 * histogram costs that rank's samples of it, not the whole merge.
 */
function withoutBadHistograms(doc: ResultsDocument, path: string): { doc: ResultsDocument; notes: string[] } {
  const bad = new Set<string>();
  const notes: string[] = [];
  for (const name of POOLED_HISTOGRAMS) {
    const h = doc.kvcache_bench.latency_histograms[name] as ResultsDocument['kvcache_bench']['latency_histograms'][string] | undefined;
    const problem = h === undefined ? undefined : LatencyHistogram.problemOf(h.encoded);
    if (problem === undefined) continue;
    bad.add(name);
    notes.push(`${path}: latency histogram ${name} left out of the pooled percentiles (${problem})`);
  }
  // The merge leaves an undecodable metadata histogram out of its percentiles by itself (merge-metadata.ts): named here.
  notes.push(...badMetadataHistograms(doc).map((line) => `${path}: ${line}`));
  const histograms = Object.fromEntries(Object.entries(doc.kvcache_bench.latency_histograms).filter(([n]) => !bad.has(n)));
  return bad.size === 0
    ? { doc, notes }
    : { doc: { ...doc, kvcache_bench: { ...doc.kvcache_bench, latency_histograms: histograms } }, notes };
}

/** One rank directory's newest results file, or why there is none. */
function readRank(rdir: string): { doc: RankFile['doc']; path: string; notes: string[] } | { problem: string } {
  const names = entries(rdir)
    .map((e) => e.name)
    .filter((n) => /^kvcache_results_.*\.json$/.test(n));
  if (names.length === 0)
    return { problem: `${rdir}/kvcache_results_*.json: no results file (the rank failed or was stopped before saving)` };
  const path = join(rdir, names[names.length - 1]);
  // No link followed, no FIFO waited on, no device read without end, no more than a results file's size.
  const read = readInputText(path, { maxBytes: MAX_RESULTS_BYTES, noFollow: true });
  if (!read.ok) return { problem: `${path}: not a readable results file (${read.problem})` };
  try {
    return { path, ...withoutBadHistograms(parseResults(read.text), path) };
  } catch (e) {
    return { problem: `${path}: not a readable results file (${resultsProblem(e)})` };
  }
}

/** Ranks 0 … want−1 that have no directory, as messages: one per rank, or ranges when there are many. */
function absentRanks(dir: string, present: ReadonlySet<number>, want: number): { messages: string[]; ranks: number } {
  const runs: Array<[number, number]> = [];
  let absent = 0;
  // Walk only the gaps between the ranks that exist: the cost follows what is on disk, not `want`.
  const sorted = [...present].filter((r) => r < want).sort((a, b) => a - b);
  let next = 0;
  for (const r of [...sorted, want]) {
    if (r > next) {
      runs.push([next, r - 1]);
      absent += r - next;
    }
    next = r + 1;
  }
  const one = (r: number): string => `${join(dir, `rank_${r}`)}/kvcache_results_*.json: rank ${r} wrote nothing`;
  if (absent <= MISSING_LISTED_ONE_BY_ONE)
    return { messages: runs.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => one(a + i))), ranks: absent };
  return {
    messages: runs.map(([a, b]) =>
      a === b ? one(a) : `${join(dir, `rank_${a}`)} … rank_${b}: ranks ${a}–${b} (${b - a + 1}) wrote nothing`,
    ),
    ranks: absent,
  };
}

/** One trial directory's rank files; `expected` ranks (0 … expected−1) each need a file. */
function readTrial(dir: string, expected: number | undefined, fallbackTrial: number): TrialInput {
  const files: RankFile[] = [];
  const missing: string[] = [];
  const rankDirs: number[] = [];
  /** Lines in `missing` that are not a missing rank (so rank_count still counts ranks). */
  let notRanks = 0;
  for (const e of entries(dir)) {
    const m = RANK_DIR.exec(e.name);
    if (m === null) continue;
    const rank = Number(m[1]);
    const rdir = join(dir, e.name);
    if (m[1].length > 7 || rank >= MAX_RANKS) {
      missing.push(`${rdir}: not a rank directory of a run (rank numbers run from 0 to ${MAX_RANKS - 1})`);
      notRanks++;
      continue;
    }
    rankDirs.push(rank);
    if (!e.isDirectory()) {
      missing.push(
        `${rdir}: ${e.isSymbolicLink() ? 'a symbolic link (not followed: merge reads only the run directory itself)' : 'not a directory'}`,
      );
      continue;
    }
    const got = readRank(rdir);
    if ('problem' in got) missing.push(got.problem);
    else {
      files.push({ rank, path: got.path, doc: got.doc });
      missing.push(...got.notes);
      notRanks += got.notes.length; // notes about a rank that is there: not absent ranks
    }
  }
  const worldSizes = files
    .map((f) => f.doc.kvcache_bench.ranks?.world_size ?? 1)
    .filter((w) => Number.isInteger(w) && w > 0 && w <= MAX_RANKS);
  const want = expected ?? Math.max(0, ...worldSizes, ...rankDirs.map((r) => r + 1));
  const absent = absentRanks(dir, new Set(rankDirs), want);
  missing.push(...absent.messages);
  return {
    option: optionOf(dir),
    trial: trialNumberOf(dir, fallbackTrial),
    dir,
    files: files.sort((a, b) => a.rank - b.rank),
    missing,
    rankCount: files.length + missing.length - notRanks - absent.messages.length + absent.ranks,
  };
}

export interface Collected {
  readonly trials: TrialInput[];
  readonly meta: MergeMeta;
}

/** A directory given on the command line: followed if it is a link (the user named it), but it must be a directory. */
function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Every trial under `dirs`, and the run's facts (from the first manifest found, else from the files). */
export function collectRun(dirs: readonly string[], now: Date): Collected {
  const manifest = dirs.map(readManifest).find((m) => m !== undefined);
  const trials: TrialInput[] = [];
  const budget = { left: MAX_DIRS_VISITED };
  for (const root of dirs.filter(isDir)) trialDirs(root, budget).forEach((d, i) => trials.push(readTrial(d, manifest?.total_ranks, i + 1)));
  const docs = trials.flatMap((t) => t.files.map((f) => f.doc));
  const hosts = new Set(docs.map((d) => d.kvcache_bench.ranks?.host ?? 'unknown'));
  const perOption = new Map<string, number>();
  for (const t of trials) perOption.set(t.option, (perOption.get(t.option) ?? 0) + 1);
  const totalRanks = manifest?.total_ranks ?? Math.max(0, ...trials.map((t) => t.rankCount ?? t.files.length + t.missing.length));
  return {
    trials,
    meta: {
      runDatetime: manifest?.run_datetime ?? now.toISOString(),
      npernode: manifest?.npernode ?? (hosts.size > 0 && totalRanks % hosts.size === 0 ? totalRanks / hosts.size : null),
      hostCount: manifest?.host_count ?? Math.max(1, hosts.size),
      totalRanks,
      trialsPerOption: manifest?.trials_per_option ?? Math.max(0, ...perOption.values()),
      division: manifest?.division ?? null,
      systemName: manifest?.system_name ?? null,
    },
  };
}
