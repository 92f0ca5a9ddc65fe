// Number formats and the aligned table of the bench reports.
import { GiB, MiB } from '../../src/util/units.js';

export const mib = (b: number): string => (b / MiB).toFixed(1);
export const gib = (b: number): string => (b / GiB).toFixed(3);

/** Columns padded to their widest cell: the first three left-aligned (labels), the rest right-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: readonly string[]): string => r.map((c, i) => (i < 3 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}
