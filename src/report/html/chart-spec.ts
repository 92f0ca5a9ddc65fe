// The report's charts as plain data: what the page's script hands to uPlot, with the x values of all
// series joined into one column (uPlot's aligned-data layout), a gap (null) where a series has no point.

export type XKind = 'seconds' | 'nines';

export interface SeriesSpec {
  readonly label: string;
  readonly color: string;
  /** Canvas dash pattern (px); absent: a solid line. */
  readonly dash?: readonly number[];
  /** Index of the run the series belongs to (0 for a one-run report). */
  readonly run: number;
}

export interface ChartSpec {
  /** Stable id: the page's element is `chart-<id>`. */
  readonly id: string;
  readonly title: string;
  readonly xKind: XKind;
  /** The x axis's label when it is not time (e.g. prompt tokens); absent: seconds or percentiles by xKind. */
  readonly xLabel?: string;
  readonly yLabel: string;
  /** Log-scaled y axis (latency distributions); values ≤ 0 are dropped as gaps. */
  readonly yLog: boolean;
  readonly series: readonly SeriesSpec[];
  /** [x, y of series 0, y of series 1, …], all the same length. */
  readonly data: ReadonlyArray<ReadonlyArray<number | null>>;
}

/** One series before joining: its own x and y. */
export interface RawSeries {
  readonly spec: SeriesSpec;
  readonly x: readonly number[];
  readonly y: ReadonlyArray<number | null>;
}

/** A series that has at least one value to draw (others are left out of charts). */
export function hasValues(s: RawSeries, yLog = false): boolean {
  return s.y.some((v) => v !== null && Number.isFinite(v) && (!yLog || v > 0));
}

/** Significant digits kept in chart data: finer than a chart shows, and a 10-minute report ~40 % smaller than full doubles. */
export const CHART_DIGITS = 5;
export const chartPrecision = (v: number): number => Number(v.toPrecision(CHART_DIGITS));

/** Joins series with different x values into uPlot's aligned layout (sorted union of x). */
export function joinSeries(series: readonly RawSeries[], yLog = false): Array<Array<number | null>> {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const columns = series.map((s) => {
    const col: Array<number | null> = new Array<number | null>(xs.length).fill(null);
    s.x.forEach((x, i) => {
      const v = s.y[i] ?? null;
      col[at.get(x) ?? 0] = v === null || !Number.isFinite(v) || (yLog && v <= 0) ? null : chartPrecision(v);
    });
    return col;
  });
  return [xs, ...columns];
}

/** A chart of the series that have values, or undefined when none has (the report then says so). */
export function makeChart(
  base: Omit<ChartSpec, 'series' | 'data' | 'yLog'> & { readonly yLog?: boolean },
  series: readonly RawSeries[],
): ChartSpec | undefined {
  const yLog = base.yLog ?? false;
  const drawn = series.filter((s) => hasValues(s, yLog));
  if (drawn.length === 0) return undefined;
  return { ...base, yLog, series: drawn.map((s) => s.spec), data: joinSeries(drawn, yLog) };
}

/** Colours by position (Tableau 10): one per series in a one-run report, one per run in a comparison. */
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Dash patterns for the members of a chart when colour already stands for the run. */
const DASHES: ReadonlyArray<readonly number[] | undefined> = [undefined, [6, 4], [2, 3], [10, 3, 2, 3]];

/**
 * The style of member `member` of run `run`: in a one-run report each member its own colour; with
 * several runs the colour is the run's and the members differ by dash.
 */
export function seriesStyle(run: number, member: number, runCount: number): Pick<SeriesSpec, 'color' | 'dash'> {
  if (runCount <= 1) return { color: PALETTE[member % PALETTE.length] ?? '#000' };
  const dash = DASHES[member % DASHES.length];
  return dash === undefined ? { color: PALETTE[run % PALETTE.length] ?? '#000' } : { color: PALETTE[run % PALETTE.length] ?? '#000', dash };
}
