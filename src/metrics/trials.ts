// Statistics over repeated trials of one workload (--trials): per headline figure its median, range
// and coefficient of variation, and which trial is "the median trial" whose full results stand for the
// set. MLPerf submissions run several trials and report a central value; the reference's own documents
// show CVs of 50–125 %, so the spread is reported beside the centre, never instead of it.
// Pure functions of numbers: no I/O, no clock.

/** A headline figure's spread above this (as a fraction) earns a warning: the trials disagree. */
export const TRIAL_CV_WARNING = 0.1;

export interface FigureStats {
  /** Number of trials that had the figure (a figure absent from a trial, e.g. no storage reads, is skipped). */
  readonly n: number;
  /** Middle value; the mean of the two middle values when n is even; null when n = 0. */
  readonly median: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly mean: number | null;
  /**
   * Sample coefficient of variation: sample standard deviation (n − 1 denominator) ÷ mean. Null when
   * n < 2 (no spread can be estimated) or the mean is 0.
   */
  readonly cv: number | null;
}

export function figureStats(values: ReadonlyArray<number | null | undefined>): FigureStats {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { n: 0, median: null, min: null, max: null, mean: null, cv: null };
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  let cv: number | null = null;
  if (n >= 2 && mean !== 0) {
    const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
    cv = Math.sqrt(variance) / Math.abs(mean);
  }
  return { n, median, min: sorted[0], max: sorted[n - 1], mean, cv };
}

/**
 * Index of the median trial by `values`: the trial ranked ⌈n/2⌉ from the lowest, i.e. the middle one
 * for an odd count and the lower of the two middle ones for an even count (a trial that really ran,
 * never an average of two; the lower one, so the figure shown never flatters the device). Ties keep
 * trial order. Undefined when no trial has the figure.
 */
export function medianTrialIndex(values: ReadonlyArray<number | null | undefined>): number | undefined {
  const ranked = values
    .map((v, i) => ({ v, i }))
    .filter((x): x is { v: number; i: number } => typeof x.v === 'number' && Number.isFinite(x.v))
    .sort((a, b) => a.v - b.v || a.i - b.i);
  if (ranked.length === 0) return undefined;
  return ranked[Math.ceil(ranked.length / 2) - 1].i;
}

/** Names of the figures whose CV exceeds TRIAL_CV_WARNING, with the CV, in the given order. */
export function unstableFigures(stats: Readonly<Record<string, FigureStats>>): Array<{ readonly figure: string; readonly cv: number }> {
  const out: Array<{ figure: string; cv: number }> = [];
  for (const [figure, s] of Object.entries(stats)) if (s.cv !== null && s.cv > TRIAL_CV_WARNING) out.push({ figure, cv: s.cv });
  return out;
}
