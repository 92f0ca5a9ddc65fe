// Finds the rank files of an MLPerf run on disk: every trial directory (one holding rank_<N>/
// directories) under the given directories, each rank's newest kvcache_results_*.json, parsed against
// the results schema. A rank that should exist but has no file, or whose file is not a results
// document, is listed in `missing` with its reason: never a crash. The run's manifest (run.json,
// written by `kv-cache mlperf`) says how many ranks and trials there should be.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { parseResults } from '../report/results-schema.js';
import { messageOf } from '../util/errors.js';
import { checkInputFile } from '../util/input-file.js';
import { GiB } from '../util/units.js';
import type { MergeMeta, RankFile, TrialInput } from './merge.js';

/** A rank's results file is a few MiB; anything past this is not one. */
const MAX_RESULTS_BYTES = GiB;

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
}

/** Directories of the run that hold rank directories but are not trials. */
const NOT_TRIALS = new Set(['precondition', 'probe', 'barrier']);
const MAX_DEPTH = 6;
const RANK_DIR = /^rank_(\d+)$/;

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function trialDirs(root: string, depth = 0): string[] {
  if (depth > MAX_DEPTH || NOT_TRIALS.has(basename(root))) return [];
  const names = entries(root);
  if (names.some((n) => RANK_DIR.test(n) && isDir(join(root, n)))) return [root];
  return names.filter((n) => isDir(join(root, n))).flatMap((n) => trialDirs(join(root, n), depth + 1));
}

export function readManifest(dir: string): RunManifest | undefined {
  const path = join(dir, MANIFEST_NAME);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as RunManifest;
  } catch {
    return undefined;
  }
}

/** The option a trial directory belongs to: its option_<k> ancestor, else its parent's name. */
function optionOf(trialDir: string): string {
  const parts = resolve(trialDir).split(sep);
  const opt = [...parts].reverse().find((p) => /^option_\d+$/.test(p));
  return opt !== undefined ? opt.slice('option_'.length) : basename(resolve(trialDir, '..'));
}

function trialNumberOf(trialDir: string, fallback: number): number {
  const m = /^trial_(\d+)$/.exec(basename(trialDir));
  return m !== null ? Number(m[1]) : fallback;
}

/** One trial directory's rank files; `expected` ranks (0 … expected−1) each need a file. */
function readTrial(dir: string, expected: number | undefined, fallbackTrial: number): TrialInput {
  const files: RankFile[] = [];
  const missing: string[] = [];
  const rankDirs = entries(dir)
    .map((n) => RANK_DIR.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
  for (const rank of rankDirs) {
    const rdir = join(dir, `rank_${rank}`);
    const names = entries(rdir).filter((n) => /^kvcache_results_.*\.json$/.test(n));
    if (names.length === 0) {
      missing.push(`${rdir}/kvcache_results_*.json: no results file (the rank failed or was stopped before saving)`);
      continue;
    }
    const path = join(rdir, names[names.length - 1]);
    const check = checkInputFile(path, { maxBytes: MAX_RESULTS_BYTES }); // a FIFO or device would never end
    if (!check.ok) {
      missing.push(`${path}: not a readable results file (${check.problem})`);
      continue;
    }
    try {
      files.push({ rank, path, doc: parseResults(readFileSync(path, 'utf8')) });
    } catch (e) {
      missing.push(`${path}: not a readable results file (${messageOf(e).split('\n')[0].slice(0, 160)})`);
    }
  }
  const worldSizes = files.map((f) => f.doc.kvcache_bench.ranks?.world_size ?? 1);
  const want = expected ?? Math.max(0, ...worldSizes, ...rankDirs.map((r) => r + 1));
  for (let r = 0; r < want; r++)
    if (!rankDirs.includes(r)) missing.push(`${join(dir, `rank_${r}`)}/kvcache_results_*.json: rank ${r} wrote nothing`);
  return { option: optionOf(dir), trial: trialNumberOf(dir, fallbackTrial), dir, files: files.sort((a, b) => a.rank - b.rank), missing };
}

export interface Collected {
  readonly trials: TrialInput[];
  readonly meta: MergeMeta;
}

/** Every trial under `dirs`, and the run's facts (from the first manifest found, else from the files). */
export function collectRun(dirs: readonly string[], now: Date): Collected {
  const manifest = dirs.map(readManifest).find((m) => m !== undefined);
  const trials: TrialInput[] = [];
  for (const root of dirs) trialDirs(root).forEach((d, i) => trials.push(readTrial(d, manifest?.total_ranks, i + 1)));
  const docs = trials.flatMap((t) => t.files.map((f) => f.doc));
  const hosts = new Set(docs.map((d) => d.kvcache_bench.ranks?.host ?? 'unknown'));
  const perOption = new Map<string, number>();
  for (const t of trials) perOption.set(t.option, (perOption.get(t.option) ?? 0) + 1);
  const totalRanks = manifest?.total_ranks ?? Math.max(0, ...trials.map((t) => t.files.length + t.missing.length));
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
