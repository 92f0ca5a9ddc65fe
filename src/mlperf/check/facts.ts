// Small readers the rules share: the rank files of a check as one list, a flag value a rank recorded
// (effective_config.args, what it actually ran), evidence lines with paths relative to the checked
// path and values shown inert, and the combination of several findings into one status.
import { relative } from 'node:path';
import type { ResultsDocument } from '../../report/results-schema.js';
import { inert } from '../../util/safe-text.js';
import type { CheckInput, Evidence, RankInput, Status, Verdict } from './types.js';

/** Every rank file of the check, in trial then rank order. */
export function ranksOf(input: CheckInput): RankInput[] {
  return input.trials.flatMap((t) => t.files.map((f) => ({ option: t.option, trial: t.trial, rank: f.rank, path: f.path, doc: f.doc })));
}

/** A flag value the rank recorded (snake_case name), or undefined when the file does not have it. */
export function argOf(doc: ResultsDocument, key: string): unknown {
  const args = doc.kvcache_bench.effective_config.args;
  return Object.hasOwn(args, key) ? args[key] : undefined;
}

/** A value as evidence shows it: JSON for data, 'not recorded' for undefined; never longer than a line. */
export function shown(v: unknown): string {
  if (v === undefined) return 'not recorded';
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return inert(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** A path relative to the checked path ('.' for the path itself), inert. */
export function relPath(input: CheckInput, path: string): string {
  const r = input.kind === 'file' && path === input.root ? path : relative(input.root, path);
  return inert(r === '' ? '.' : r);
}

export function evidence(file: string, field: string, value: unknown, required: string): Evidence {
  return { file, field, value: shown(value), required: inert(required) };
}

/** A rank file's evidence line. */
export function rankEvidence(input: CheckInput, r: RankInput, field: string, value: unknown, required: string): Evidence {
  return evidence(relPath(input, r.path), field, value, required);
}

/** The run's own facts (run.json) as evidence. */
export function manifestEvidence(input: CheckInput, field: string, value: unknown, required: string): Evidence {
  return evidence(input.manifest !== undefined ? relPath(input, input.manifest.path) : 'run.json', field, value, required);
}

/** FAIL beats CANNOT TELL beats PASS; nothing found at all is CANNOT TELL (never a silent PASS). */
export function worst(statuses: readonly Status[]): Status {
  if (statuses.includes('FAIL')) return 'FAIL';
  if (statuses.length === 0 || statuses.includes('CANNOT TELL')) return 'CANNOT TELL';
  if (statuses.every((s) => s === 'NOT APPLICABLE')) return 'NOT APPLICABLE';
  return 'PASS';
}

/** A finding of a rule: its status and the line that shows it. */
export interface Finding {
  readonly status: Status;
  readonly evidence: Evidence;
}

/** The rule's verdict from its findings: failures and unknowns first (they are what a reader needs), passes after. */
export function verdictOf(findings: readonly Finding[], whenNone: Evidence): Verdict {
  if (findings.length === 0) return { status: 'CANNOT TELL', evidence: [whenNone] };
  const order: Readonly<Record<Status, number>> = { FAIL: 0, 'CANNOT TELL': 1, PASS: 2, 'NOT APPLICABLE': 3 };
  const sorted = [...findings].sort((a, b) => order[a.status] - order[b.status]);
  return { status: worst(findings.map((f) => f.status)), evidence: sorted.map((f) => f.evidence) };
}

/** Numbers equal within rounding (a sum of floats recomputed in another order). */
export function sameNumber(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** The distinct hosts the rank files name (a file without a ranks block ran on 'unknown'). */
export function hostsOf(ranks: readonly RankInput[]): string[] {
  return [...new Set(ranks.map((r) => r.doc.kvcache_bench.ranks?.host ?? 'unknown'))].sort();
}
