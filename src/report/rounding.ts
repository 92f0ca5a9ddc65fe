// Rounding of spreadsheet figures to the precision they really have (issue 15), shared by the per-run
// --xlsx-output and `kv-cache aggregate`. Values are rounded (so CSV readers see the rounded number)
// AND given a number format (so Excel shows it that way). A column's kind follows from the unit in its
// header, so a new column is rounded like its peers without a second table to keep in step.
//
// Why each precision:
// - latency (ms): the HDR histograms record whole microseconds with 3 significant digits, i.e. a
//   bucket resolution of 1/2048 of the value: 1 µs and 4 significant digits say all they know
//   (0.1234 ms stays 0.123; 12.3456 → 12.35; 1,234.56 → 1,235).
// - bandwidths (GiB/s) and rates (tok/s, requests/s, operations per GiB): 3 significant digits; the exact bytes are in
//   the byte columns, and run-to-run noise on storage is far above 0.1 %.
// - ratios and hit rates: 4 decimals (0.01 %).
// - amounts in GiB: 3 decimals (1 MiB); seconds: 3 decimals (1 ms); counts and bytes: integers.

/** What a number is, which decides its rounding and its cell format. */
export type ValueKind = 'count' | 'seconds' | 'rate' | 'latency_ms' | 'ratio' | 'gib' | 'gibps' | 'other';

/** The first rule whose pattern matches a header gives its kind (headers carry their unit). */
const HEADER_KINDS: ReadonlyArray<readonly [RegExp, ValueKind]> = [
  [/\(ms\)$/, 'latency_ms'],
  [/\(GiB\/s\)$/, 'gibps'],
  [/\(GiB\)$/, 'gib'],
  [/\(bytes(\/s)?\)$/, 'count'],
  [/\(s\)$/, 'seconds'],
  [/\(tok\/s\)$|\/sec$|\/GiB$/, 'rate'],
  [/(Rate|Ratio|CV)$/, 'ratio'],
  [/^(Total Requests|Total Tokens|.+ Entries|Requests Completed)$/, 'count'],
];

export function kindOfHeader(header: string): ValueKind {
  return HEADER_KINDS.find(([re]) => re.test(header))?.[1] ?? 'other';
}

const significant = (v: number, digits: number): number => (v === 0 ? 0 : Number(v.toPrecision(digits)));
const decimals = (v: number, d: number): number => Math.round(v * 10 ** d) / 10 ** d;

/** `v` rounded to what a figure of `kind` supports; non-numbers pass through. */
export function roundFor<T>(kind: ValueKind, v: T): T | number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return v;
  switch (kind) {
    case 'count':
      return Math.round(v);
    case 'seconds':
    case 'gib':
      return decimals(v, 3);
    case 'rate':
    case 'gibps':
      return significant(v, 3);
    case 'latency_ms':
      return significant(decimals(v, 3), 4);
    case 'ratio':
      return decimals(v, 4);
    case 'other':
      return v;
  }
}

/** The Excel number format of a kind (undefined: General). At least one decimal where decimals exist, so no trailing dot. */
export function numberFormatFor(kind: ValueKind): string | undefined {
  switch (kind) {
    case 'count':
      return '#,##0';
    case 'seconds':
    case 'gib':
      return '#,##0.000';
    case 'rate':
    case 'gibps':
      return '#,##0.0####';
    case 'latency_ms':
      return '#,##0.0##';
    case 'ratio':
      return '0.0000';
    case 'other':
      return undefined;
  }
}
