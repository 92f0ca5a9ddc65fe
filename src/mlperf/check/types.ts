// The submission checker's vocabulary: what a rule reads (CheckInput: the run directory's manifest,
// rank files and merged summary, or one results file), what it says (a Verdict with evidence lines:
// which file, which field, what value, what was required) and what a rule is (a row of the table in
// rules.ts). Plain data only: reading is in input.ts, printing in report.ts.
import type { ResultsDocument } from '../../report/results-schema.js';
import type { TrustedManifest } from '../collect.js';
import type { TrialInput } from '../merge.js';

export const STATUSES = ['PASS', 'FAIL', 'NOT APPLICABLE', 'CANNOT TELL'] as const;
export type Status = (typeof STATUSES)[number];

/** One fact behind a verdict. `file` is relative to the checked path ('' for the run itself). */
export interface Evidence {
  readonly file: string;
  readonly field: string;
  readonly value: string;
  readonly required: string;
}

export interface Verdict {
  readonly status: Status;
  readonly evidence: readonly Evidence[];
}

/**
 * Where a rule applies. 'closed': CLOSED submissions only (NOT APPLICABLE in OPEN, CANNOT TELL when
 * the division is not recorded); 'run': a run directory, not one results file; 'multi-rank': more
 * than one rank per trial; 'multi-host': ranks on more than one host; 'any': everywhere.
 */
export type Scope = 'any' | 'closed' | 'run' | 'multi-rank' | 'multi-host';

export interface Rule {
  /** Rules.md §6 id (e.g. 6.3.1.1), or KB.n for ours. */
  readonly id: string;
  readonly name: string;
  /** Every scope listed must hold for the rule to apply. */
  readonly appliesTo: readonly Scope[];
  /** What the rule requires, in one line (the docs table and --json). */
  readonly requirement: string;
  readonly evaluate: (input: CheckInput) => Verdict;
}

export type Division = 'closed' | 'open';

/** A manifest (run.json) as collect.ts believes it, with where it was read from. */
export interface ManifestInput {
  readonly path: string;
  readonly fields: TrustedManifest;
}

/** The merged summary's upstream figures of one option, as read leniently (absent when not a number). */
export interface SummaryOption {
  readonly aggregated_read_bandwidth_gbps?: number;
  readonly aggregated_write_bandwidth_gbps?: number;
  readonly aggregated_storage_throughput_tokens_per_sec?: number;
  readonly aggregated_device_read_p95_ms?: number;
  readonly aggregated_device_write_p95_ms?: number;
}

export interface SummaryInput {
  readonly path: string;
  /** By option id; absent when the file was there but could not be read (see `problem`). */
  readonly options?: Readonly<Record<string, SummaryOption>>;
  readonly problem?: string;
}

export interface CheckInput {
  /** A run directory of `kv-cache mlperf` / rank trials, or one results file. */
  readonly kind: 'run' | 'file';
  /** The path given (absolute); evidence names files relative to it. */
  readonly root: string;
  readonly manifest: ManifestInput | undefined;
  readonly division: Division | undefined;
  /** Where the division came from, for the evidence. */
  readonly divisionFrom: string;
  /** Trials with their rank files; a single results file is one trial of one rank. */
  readonly trials: readonly TrialInput[];
  readonly summary: SummaryInput | undefined;
}

/** A rank file with its trial's option and number. */
export interface RankInput {
  readonly option: string;
  readonly trial: number;
  readonly rank: number;
  readonly path: string;
  readonly doc: ResultsDocument;
}
