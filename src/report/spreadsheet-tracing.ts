// The reference's "Device Tracing" and "Trace Histograms" sheets, when tracing ran. Its P50/P95/P99
// columns keep its formula (the lower bound of the bucket holding the percentile); ours beside them
// interpolate within that bucket, and a Reason column says why a histogram is empty.
import type { Workbook } from 'exceljs';
import type { ResultsDocument } from './results-schema.js';

const DEVICE_TRACING_HEADERS = [
  'Metric',
  'Description',
  'Unit',
  'Samples',
  'P50',
  'P95',
  'P99',
  'Min Bucket',
  'Max Bucket',
  'P50 (interpolated)',
  'P95 (interpolated)',
  'P99 (interpolated)',
  'Reason',
] as const;

type Cell = string | number | null;

export function deviceTracingRows(doc: ResultsDocument): Cell[][] {
  const h = doc.device_latency_tracing;
  if (h === undefined) return [];
  return Object.entries(h).map(([name, x]) => [
    name,
    x.description,
    x.unit,
    x.count,
    x.p50_bucket?.[0] ?? null,
    x.p95_bucket?.[0] ?? null,
    x.p99_bucket?.[0] ?? null,
    x.min_bucket,
    x.max_bucket,
    x.p50,
    x.p95,
    x.p99,
    x.reason,
  ]);
}

export function traceHistogramRows(doc: ResultsDocument): Cell[][] {
  const h = doc.device_latency_tracing;
  if (h === undefined) return [];
  return Object.entries(h).flatMap(([name, x]) => x.buckets.map((b) => [name, b.range_us[0], b.range_us[1], b.count]));
}

/** Adds the two sheets when the results hold tracing histograms. */
export function addTracingSheets(wb: Workbook, doc: ResultsDocument): void {
  if (doc.device_latency_tracing === undefined) return;
  const sheet = (name: string, header: readonly string[], rows: Cell[][], widths: readonly number[]): void => {
    const ws = wb.addWorksheet(name);
    ws.addRow([...header]);
    ws.getRow(1).font = { bold: true };
    for (const r of rows) ws.addRow(r);
    widths.forEach((w, i) => (ws.getColumn(i + 1).width = w));
  };
  sheet('Device Tracing', DEVICE_TRACING_HEADERS, deviceTracingRows(doc), [22, 60, 8, 10, 10, 10, 10, 12, 12, 18, 18, 18, 60]);
  sheet('Trace Histograms', ['Histogram', 'Bucket Low', 'Bucket High', 'Count'], traceHistogramRows(doc), [22, 14, 14, 12]);
}
