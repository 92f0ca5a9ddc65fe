// One section of the HTML report: charts, tables and "not recorded" notes, built from the runs by one
// function. The report's sections are the rows of SECTIONS in ../model.ts.
import type { ChartSpec } from '../chart-spec.js';
import type { LoadedRun } from '../run-input.js';

export interface TableSpec {
  readonly id: string;
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
  /** Shown folded (a long reference table): the reader opens it when needed. */
  readonly collapsed?: boolean;
}

export interface Section {
  readonly id: string;
  readonly title: string;
  readonly charts: readonly ChartSpec[];
  readonly tables: readonly TableSpec[];
  /** Lines such as "Per-second timeline: not recorded in this file". */
  readonly notes: readonly string[];
}

/** Builds one section from every run of the report (the first run is the baseline). */
export type SectionBuilder = (runs: readonly LoadedRun[]) => Section;
