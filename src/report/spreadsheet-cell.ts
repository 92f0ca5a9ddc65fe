// The cell type every spreadsheet and CSV builder shares, in a module of its own so that the sheet
// builders (spreadsheet-overview.ts, aggregate.ts) and the workbook writer (spreadsheet.ts) depend on
// it rather than on each other.

/** One spreadsheet cell. `null` is an empty cell. */
export type Cell = string | number | boolean | null;
