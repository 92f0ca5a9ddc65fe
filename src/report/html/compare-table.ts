// Headline figures of several runs side by side with ratios against the first run, and whether each
// difference is larger than the runs' own noise. The noise of a figure is its coefficient of variation
// over the run's trials (`--trials`); a difference is called significant only when both runs have
// trials and |ratio − 1| exceeds twice the combined CV √(cv₁² + cv₂²). The CVs are per trial (not of
// the median), which makes the test conservative. Without trials in both runs nothing is claimed.
import { entryVerdict, figureValue, formatFigure, HEADLINE_FIGURES, trialCv } from './headline.js';
import type { HeadlineFigure } from './headline.js';
import { isOption, isReplay, isRun } from './inputs.js';
import type { LoadedInput } from './inputs.js';
import { KV_BLOCK_FIGURES, anyKvBlocks } from './kv-block-figures.js';
import { KV_POOL_FIGURES, anyKvPool } from './kv-pool-figures.js';
import { metadataFigures } from './metadata-figures.js';
import { TTFT_FIGURES, ttftAssumptions } from './ttft-figures.js';
import { inert } from '../../util/safe-text.js';

/** significant: beyond 2 × the combined CV; ns: within it; unknown: a run lacks trials (or the figure has no trial statistic). */
export type Significance = 'significant' | 'ns' | 'unknown';

export interface ComparedValue {
  readonly value: number | null;
  /** value ÷ the first run's value; null when either is missing or the first is 0. Always null for the first run. */
  readonly ratio: number | null;
  readonly significance: Significance;
  /** The combined CV the difference was judged against, when known. */
  readonly noiseCv: number | null;
}

export interface ComparedFigure {
  readonly figure: HeadlineFigure;
  readonly values: readonly ComparedValue[];
}

/** How many combined CVs a difference must exceed to count as significant. */
export const SIGNIFICANCE_CVS = 2;

export function judge(
  ratio: number | null,
  cvBase: number | undefined,
  cvOther: number | undefined,
): Pick<ComparedValue, 'significance' | 'noiseCv'> {
  if (ratio === null || cvBase === undefined || cvOther === undefined) return { significance: 'unknown', noiseCv: null };
  const noiseCv = Math.sqrt(cvBase * cvBase + cvOther * cvOther);
  return { significance: Math.abs(ratio - 1) > SIGNIFICANCE_CVS * noiseCv ? 'significant' : 'ns', noiseCv };
}

/** Runs, replays and merged options alike: a figure an entry does not record is n/a and gets no ratio. */
export function compareFigures(runs: readonly LoadedInput[], figures: readonly HeadlineFigure[] = HEADLINE_FIGURES): ComparedFigure[] {
  const base = runs[0];
  return figures.map((figure) => {
    const baseValue = base === undefined ? null : figureValue(figure, base);
    const values = runs.map((run, i): ComparedValue => {
      const value = figureValue(figure, run);
      if (i === 0) return { value, ratio: null, significance: 'unknown', noiseCv: null };
      const ratio = value === null || baseValue === null || baseValue === 0 ? null : value / baseValue;
      return { value, ratio, ...judge(ratio, base === undefined ? undefined : trialCv(base, figure), trialCv(run, figure)) };
    });
    return { figure, values };
  });
}

/** "×1.23", "×0.84 n.s.", "×1.02 ?" (ratio, then what is known of its significance). */
export function ratioText(v: ComparedValue): string {
  if (v.ratio === null) return '';
  const mark = v.significance === 'ns' ? ' n.s.' : v.significance === 'unknown' ? ' ?' : '';
  return `×${v.ratio.toFixed(2)}${mark}`;
}

/** What the columns of replays and merged summaries are, when there are any: n/a is not a zero. */
function kindNotes(runs: readonly LoadedInput[]): string[] {
  const notes: string[] = [];
  if (runs.some(isReplay))
    notes.push(
      'A replay issues trace rows, not requests: it has no request, token or hit-rate figure (n/a) and records no validity verdict.',
    );
  if (runs.some(isOption))
    notes.push(
      "A merged summary's option is all its ranks: bytes ÷ the trials' common window, read p95/p99 of every rank's samples pooled, tokens/s summed over ranks.",
    );
  return notes;
}

function table(rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** Rows of figures no trial statistic measures: label, unit, each entry's value, each ratio to #1 (no significance mark). */
function plainRows(runs: readonly LoadedInput[], figures: readonly HeadlineFigure[]): string[][] {
  return compareFigures(runs, figures).map(({ figure, values }) => [
    figure.label,
    figure.unit,
    ...values.map((v) => formatFigure(v.value, figure.digits)),
    ...values.slice(1).map((v) => (v.ratio === null ? '' : `×${v.ratio.toFixed(2)}`)),
  ]);
}

/** The console table of `kv-cache compare`. */
export function formatCompareTable(runs: readonly LoadedInput[]): string {
  const compared = compareFigures(runs);
  const header = [
    'Figure',
    'Unit',
    ...runs.map((_, i) => (i === 0 ? '#1' : `#${i + 1}`)),
    ...runs.slice(1).map((_, i) => `#${i + 2} ÷ #1`),
  ];
  const rows = compared.map(({ figure, values }) => [
    figure.label,
    figure.unit,
    ...values.map((v) => formatFigure(v.value, figure.digits)),
    ...values.slice(1).map(ratioText),
  ]);
  const verdicts = runs.map(entryVerdict);
  const validity = ['Validity', '', ...verdicts.map((v) => v.short), ...runs.slice(1).map(() => '')];
  const withTrials = runs.filter((r) => isRun(r) && r.doc.kvcache_bench.trials !== undefined).length;
  // The modelled TTFT (issue 23): its own table, after the measured one, when any run has it.
  const assumptions = ttftAssumptions(runs.filter(isRun));
  const modelledRows = plainRows(runs, TTFT_FIGURES);
  const modelled =
    assumptions === undefined
      ? []
      : [
          '',
          `Modelled TTFT (MODELLED, not measured: measured loads + modelled prefill compute; ${assumptions}):`,
          ...table([header, ...modelledRows]),
        ];
  // Block-granular runs (issue 22): their own table, when any run has blocks.
  const blockRows = plainRows(runs, KV_BLOCK_FIGURES);
  const blocks = anyKvBlocks(runs.filter(isRun))
    ? ['', 'KV blocks (block-granular runs; n/a: one entry per request):', ...table([header, ...blockRows])]
    : [];
  // Pools and routes (issue 32): runs' own and merged options' (all their ranks), when any entry has one.
  const poolRows = plainRows(runs, KV_POOL_FIGURES);
  const withPool = runs.flatMap((r): Parameters<typeof anyKvPool>[0] =>
    isRun(r) ? [{ doc: r.doc }] : isOption(r) ? [{ merged: r.merged }] : [],
  );
  const pools = anyKvPool(withPool)
    ? ['', 'KV pool (shared or private, ranks dividing a trace; merged options: all their ranks):', ...table([header, ...poolRows])]
    : [];
  // The storage tier's metadata calls (issue 34): runs', replays' and merged options', when any entry made one.
  const metadata = metadataFigures(runs);
  const metadataRows = plainRows(runs, metadata);
  const metadataTable =
    metadata.length === 0
      ? []
      : [
          '',
          'Metadata operations (storage tier; per GiB it read and wrote; n/a: none, or not recorded):',
          ...table([header, ...metadataRows]),
        ];
  const lines = [
    'Runs:',
    ...runs.map((r, i) => `  #${i + 1}  ${r.label}  ${r.path}`),
    '',
    ...table([header, ...rows, validity]),
    ...blocks,
    ...pools,
    ...metadataTable,
    ...modelled,
    '',
    ...verdicts.flatMap((v, i) => (v.valid === false ? [`#${i + 1} ${v.text}`] : [])),
    ...kindNotes(runs),
    `Ratios: value ÷ #1's. n.s. = not significant: the difference is within ${SIGNIFICANCE_CVS} × √(cv₁² + cv₂²), the runs' own`,
    'trial-to-trial coefficients of variation (kvcache_bench.trials). ? = significance unknown:',
    withTrials === runs.length
      ? '  the figure has no trial statistic (device bytes, read p99).'
      : runs.every(isRun)
        ? `  ${runs.length - withTrials} of ${runs.length} runs have no trials (run with --trials 3 or more to measure their noise).`
        : `  ${runs.length - withTrials} of ${runs.length} entries have no trials (replays and merged summaries never do; run with --trials 3 or more).`,
  ];
  // Labels, paths and validity texts come from the files: shown inert (no terminal escape reaches the console).
  return `${lines.map(inert).join('\n')}\n`;
}
