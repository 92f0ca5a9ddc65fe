// Number formats and the aligned table of the bench reports.
import { GiB, MiB } from '../../src/util/units.js';

export const mib = (b: number): string => (b / MiB).toFixed(1);
export const gib = (b: number): string => (b / GiB).toFixed(3);

/**
 * Columns padded to their widest cell: the first three left-aligned (labels), the rest right-aligned
 * but for `textColumns` (indices of further columns of words, e.g. a verdict).
 */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, textColumns: readonly number[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number): boolean => i < 3 || textColumns.includes(i);
  const fmt = (r: readonly string[]): string =>
    r
      .map((c, i) => (left(i) ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}
