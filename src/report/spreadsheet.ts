// The `--xlsx-output` export (docs/reference-compat.md#rc-46): the reference's run-parameter and metric columns, in its
// order and with its names, read from the results document and the RunConfig, followed by a few honest
// columns of ours. A `.csv` path gets the one-row table (header + one row); any other path gets an
// XLSX workbook: first Overview (a vertical Figure | Value | Unit list of the headline figures and the
// validity verdict, ours), then the reference's sheets Summary (its one row of every column), Run
// Parameters, Performance Metrics and QoS Metrics. Metric values are rounded to their precision and
// carry a number format (rounding.ts). The column builders are pure; only `writeSpreadsheet` touches
// the file system, writing atomically.
import { writeFileAtomically } from '../util/files.js';
import { extname } from 'node:path';
import type { Workbook } from 'exceljs';
import { addTracingSheets } from './spreadsheet-tracing.js';
import type { RunConfig } from '../settings/run-config.js';
import type { PerformanceProfile } from '../settings/choices.js';
import { columnStamp } from '../util/dates.js';
import type { CacheStats } from '../metrics/cache-stats.js';
import type { LatencyBlock, MachineJson, ResultsDocument } from './results-schema.js';
import { kindOfHeader, numberFormatFor, roundFor } from './rounding.js';
import type { ValueKind } from './rounding.js';
import { overviewRows } from './spreadsheet-overview.js';
import type { Cell } from './spreadsheet-cell.js';

/** A named column of the one-row Summary table; `kind` (metrics only) decides its rounding and cell format. */
export interface Column {
  readonly header: string;
  readonly value: Cell;
  readonly kind?: ValueKind;
}

/** One row of the QoS Metrics sheet. */
export interface QosRow {
  readonly level: string;
  readonly totalRequests: Cell;
  readonly latencyP95Ms: Cell;
  readonly latencyP99Ms: Cell;
  readonly slaMet: Cell;
  readonly slaCompliance: Cell;
}

const QOS_HEADERS = ['QoS Level', 'Total Requests', 'Latency P95 (ms)', 'Latency P99 (ms)', 'SLA Met', 'SLA Compliance'] as const;
const THROUGHPUT_MODE_NA = 'N/A (throughput mode)';

/** A figure as a cell; an absent one or a non-finite number is an empty cell. */
function cell(v: Cell | undefined): Cell {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  return v ?? null;
}

/** `YYYY-MM-DD HH:MM:SS` in local time, as the reference's Timestamp column. */
export const formatTimestamp: (d: Date) => string = columnStamp;

/**
 * The reference's run-parameter columns; `machine` is the host the run measured on (from the
 * results), `now` the export time (the reference's Timestamp).
 */
export function runParameterColumns(cfg: RunConfig, machine: MachineJson, now: Date = new Date()): Column[] {
  const c = (header: string, value: Cell): Column => ({ header, value });
  return [
    c('Timestamp', formatTimestamp(now)),
    c('Model', cfg.model.key),
    c('Num Users', cfg.numUsers),
    c('Duration (s)', cfg.durationSec),
    c('GPU Memory per Card (GiB)', cfg.gpuMemGb),
    c('Num GPUs', cfg.numGpus),
    c('Tensor Parallel', cfg.tensorParallel),
    c('Total GPU Memory (GiB)', cfg.gpuMemGb * cfg.numGpus),
    c('CPU Memory (GiB)', cfg.cpuMemGb),
    c('Generation Mode', cfg.generationMode),
    c('Performance Profile', cfg.performanceProfile),
    c('Multi-turn', !cfg.disableMultiTurn),
    c('Prefix Caching', !cfg.disablePrefixCaching),
    c('RAG Enabled', cfg.enableRag),
    c('Autoscaling', cfg.enableAutoscaling),
    c('Seed', cfg.seed),
    c('Max Concurrent Allocs', cfg.maxConcurrentAllocs),
    c('Request Rate', cfg.requestRate),
    c('Max Requests', cfg.maxRequests),
    c('Dataset Path', cfg.datasetPath ?? 'N/A'),
    c('Cache Dir', cfg.cacheDir ?? 'temp'),
    c('Storage Capacity (GiB)', cfg.storageCapacityGb),
    c('Precondition', cfg.precondition),
    c('Precondition Size (GiB)', cfg.preconditionSizeGb),
    // As the reference: 0 means "one per CPU".
    c('Precondition Threads', cfg.preconditionThreads > 0 ? cfg.preconditionThreads : machine.cpu_count),
    c('Trace Speedup', cfg.traceSpeedup),
    c('Replay Cycles', cfg.replayCycles),
  ];
}

/** A metric column: its header and how its value is read from the results document. */
type MetricSpec = readonly [header: string, value: (r: ResultsDocument) => Cell | undefined];

const PERCENTILE_STATS = [
  ['P50', 'p50'],
  ['P95', 'p95'],
  ['P99', 'p99'],
  ['P99.9', 'p999'],
  ['P99.99', 'p9999'],
] as const satisfies ReadonlyArray<readonly [string, keyof LatencyBlock]>;
/** A latency block's columns: the header's name of each statistic and its key in the block. */
export const LATENCY_STATS = [['Mean', 'mean'], ...PERCENTILE_STATS] as const;

type LatencyBlockName = 'end_to_end_latency_ms' | 'storage_io_latency_ms' | 'generation_latency_ms';

function latencySpecs(label: string, block: LatencyBlockName, stats: number): MetricSpec[] {
  return LATENCY_STATS.slice(0, stats).map(([name, key]): MetricSpec => [`${label} ${name} (ms)`, (r) => r.summary[block][key]]);
}

const cacheStat =
  (key: keyof CacheStats) =>
  (r: ResultsDocument): Cell | undefined => {
    const v = r.summary.cache_stats[key];
    return typeof v === 'object' ? undefined : v;
  };

/**
 * Storage Tier Read|Write × Total|Device|Host × P50…P99.99: 30 columns, in the reference's order, as
 * (header, cache_stats key); the per-run sheet and `kv-cache aggregate` both read them.
 */
export function storageTierColumnKeys(): Array<readonly [header: string, key: keyof CacheStats]> {
  const out: Array<readonly [string, keyof CacheStats]> = [];
  for (const [part, infix] of [
    ['Total', ''],
    ['Device', '_device'],
    ['Host', '_host'],
  ] as const) {
    for (const [op, key] of [
      ['Read', 'read'],
      ['Write', 'write'],
    ] as const) {
      for (const [name, p] of PERCENTILE_STATS) out.push([`Storage Tier ${op} ${part} ${name} (ms)`, `storage_${key}${infix}_${p}_ms`]);
    }
  }
  return out;
}

const TIERS = [
  ['GPU', 'gpu'],
  ['CPU', 'cpu'],
  ['Storage', 'storage'],
] as const;

function tierSpecs(): MetricSpec[] {
  return [
    ...TIERS.map(([n, t]): MetricSpec => [`Tier ${n} KV Bytes Written (GiB)`, cacheStat(`tier_${t}_kv_bytes_written_gb`)]),
    ...TIERS.map(([n, t]): MetricSpec => [`Tier ${n} KV Bytes Read (GiB)`, cacheStat(`tier_${t}_kv_bytes_read_gb`)]),
    ...TIERS.flatMap(([n, t]): MetricSpec[] => [
      [`Tier ${n} Read Bandwidth (GiB/s)`, cacheStat(`tier_${t}_read_bandwidth_gbps`)],
      [`Tier ${n} Write Bandwidth (GiB/s)`, cacheStat(`tier_${t}_write_bandwidth_gbps`)],
    ]),
    ...TIERS.map(([n, t]): MetricSpec => [`${n} Entries`, cacheStat(`${t}_entries`)]),
  ];
}

/** The reference's metric columns (docs/reference-compat.md#rc-46), then ours, each named for what it is. */
const METRIC_SPECS: readonly MetricSpec[] = [
  ['Total Requests', (r) => r.summary.total_requests],
  ['Total Tokens', (r) => r.summary.total_tokens],
  ['Elapsed Time (s)', (r) => r.summary.elapsed_time],
  ['Avg Throughput (tok/s)', (r) => r.summary.avg_throughput_tokens_per_sec],
  ['Storage Throughput (tok/s)', (r) => r.summary.storage_throughput_tokens_per_sec],
  ['Requests/sec', (r) => r.summary.requests_per_second],
  ...latencySpecs('E2E Latency', 'end_to_end_latency_ms', 6),
  ...latencySpecs('Storage Latency', 'storage_io_latency_ms', 6),
  ...latencySpecs('Gen Latency', 'generation_latency_ms', 4),
  ...storageTierColumnKeys().map(([header, key]): MetricSpec => [header, cacheStat(key)]),
  ['Cache Hit Rate', cacheStat('cache_hit_rate')],
  ['Read/Write Ratio', cacheStat('read_write_ratio')],
  ['Total Read (GiB)', cacheStat('total_read_gb')],
  ['Total Write (GiB)', cacheStat('total_write_gb')],
  ...tierSpecs(),
  ['Multi-turn Hit Rate', (r) => r.summary.multi_turn_stats.hit_rate],
  // Ours (not in the reference): exact bytes and wall-clock rates, and how the run ended.
  ['Measured Window (s)', (r) => r.kvcache_bench.measured_window_sec],
  ['Storage Read (bytes)', (r) => r.kvcache_bench.storage_bytes.read_bytes],
  ['Storage Written (bytes)', (r) => r.kvcache_bench.storage_bytes.written_bytes],
  ['Storage Read (bytes/s)', (r) => r.kvcache_bench.storage_bytes.read_bytes_per_sec],
  ['Storage Write (bytes/s)', (r) => r.kvcache_bench.storage_bytes.write_bytes_per_sec],
  ['Device Read (bytes)', (r) => r.kvcache_bench.device_io?.read_bytes],
  ['Device Written (bytes)', (r) => r.kvcache_bench.device_io?.written_bytes],
  ['Stop Reason', (r) => r.kvcache_bench.stop_reason],
  ['Tool Version', (r) => r.kvcache_bench.version],
];

/** Every metric column, rounded to its precision; a figure missing from the results (e.g. no storage writes) is an empty cell. */
export function metricColumns(results: ResultsDocument): Column[] {
  return METRIC_SPECS.map(([header, value]) => {
    const kind = kindOfHeader(header);
    return { header, value: roundFor(kind, cell(value(results))), kind };
  });
}

/** One row per QoS class that saw requests; SLA columns are "N/A (throughput mode)" under that profile. */
export function qosRows(results: ResultsDocument, profile: PerformanceProfile): QosRow[] {
  const throughput = profile === 'throughput';
  const rows: QosRow[] = [];
  for (const [level, data] of Object.entries(results.summary.qos_metrics)) {
    if ('no_data' in data) continue;
    rows.push({
      level,
      totalRequests: cell(data.total_requests),
      latencyP95Ms: roundFor('latency_ms', cell(data.latency_ms.p95)),
      latencyP99Ms: roundFor('latency_ms', cell(data.latency_ms.p99)),
      slaMet: throughput ? THROUGHPUT_MODE_NA : data.sla.met,
      slaCompliance: throughput ? THROUGHPUT_MODE_NA : roundFor('ratio', cell(data.sla.compliance)),
    });
  }
  return rows;
}

function qosCells(r: QosRow): Cell[] {
  return [r.level, r.totalRequests, r.latencyP95Ms, r.latencyP99Ms, r.slaMet, r.slaCompliance];
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote, line break or edge spaces. */
export function csvField(v: Cell): string {
  if (v === null) return '';
  // Booleans as the reference's CSV (pandas) spells them.
  const s = typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v);
  return /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Header line + one data line. */
export function summaryCsv(columns: readonly Column[]): string {
  const line = (cells: readonly Cell[]): string => cells.map(csvField).join(',');
  return `${line(columns.map((c) => c.header))}\n${line(columns.map((c) => c.value))}\n`;
}

/** The number format of a cell, by its 0-based row and column among the data rows (undefined: General). */
type FormatOf = (row: number, col: number) => string | undefined;

export function addSheet(
  wb: Workbook,
  name: string,
  header: readonly string[],
  rows: ReadonlyArray<readonly Cell[]>,
  widths: readonly number[],
  formatOf: FormatOf = () => undefined,
): void {
  const ws = wb.addWorksheet(name);
  ws.addRow([...header]);
  ws.getRow(1).font = { bold: true };
  rows.forEach((r, i) => {
    const row = ws.addRow([...r]);
    r.forEach((v, j) => {
      const fmt = typeof v === 'number' ? formatOf(i, j) : undefined;
      if (fmt !== undefined) row.getCell(j + 1).numFmt = fmt;
    });
  });
  widths.forEach((w, i) => (ws.getColumn(i + 1).width = w));
}

const formatOfColumn = (c: Column | undefined): string | undefined => (c?.kind !== undefined ? numberFormatFor(c.kind) : undefined);
const QOS_FORMATS: ReadonlyArray<string | undefined> = [undefined, '#,##0', '#,##0.0##', '#,##0.0##', undefined, '0.0000'];

/** The workbook (Overview first, then the reference's four sheets), as bytes. */
async function summaryWorkbook(
  results: ResultsDocument,
  params: readonly Column[],
  metrics: readonly Column[],
  qos: readonly QosRow[],
): Promise<Uint8Array> {
  // Loaded here, not at startup: it takes ~0.3 s and only runs that ask for a workbook need it.
  const { default: ExcelJS } = await import('exceljs');
  const wb = new ExcelJS.Workbook();
  wb.creator = 'kvcache-bench';
  // First: what a person opening the file wants to read. No tool of the reference reads this workbook
  // (json_to_xlsx.py reads the JSON files), so a new first sheet breaks nothing; the reference's one-row
  // sheet keeps its name, Summary, for scripts that open it by name.
  const overview = overviewRows(results);
  addSheet(
    wb,
    'Overview',
    ['Figure', 'Value', 'Unit'],
    overview.map((r) => [r.figure, r.value, r.unit]),
    [40, 28, 12],
    (i, j) => (j === 1 && overview[i]?.kind !== undefined ? numberFormatFor(overview[i].kind) : undefined),
  );
  const all = [...params, ...metrics];
  addSheet(
    wb,
    'Summary',
    all.map((c) => c.header),
    [all.map((c) => c.value)],
    [],
    (_i, j) => formatOfColumn(all[j]),
  );
  const pairs = (cols: readonly Column[]): Cell[][] => cols.map((c) => [c.header, c.value]);
  addSheet(wb, 'Run Parameters', ['Parameter', 'Value'], pairs(params), [32, 40]);
  addSheet(wb, 'Performance Metrics', ['Metric', 'Value'], pairs(metrics), [40, 24], (i, j) =>
    j === 1 ? formatOfColumn(metrics[i]) : undefined,
  );
  addSheet(wb, 'QoS Metrics', QOS_HEADERS, qos.map(qosCells), [14, 16, 18, 18, 22, 22], (_i, j) => QOS_FORMATS[j]);
  addTracingSheets(wb, results); // block-layer tracing (issue 13): Device Tracing, Trace Histograms
  const bytes = await wb.xlsx.writeBuffer();
  return new Uint8Array(bytes);
}

/** Writes the summary to `path`: a one-row CSV when it ends in `.csv`, else an XLSX workbook. */
export async function writeSpreadsheet(
  path: string,
  results: ResultsDocument,
  cfg: RunConfig,
  now: Date = new Date(),
): Promise<'csv' | 'xlsx'> {
  const params = runParameterColumns(cfg, results.kvcache_bench.machine, now);
  const metrics = metricColumns(results);
  if (extname(path).toLowerCase() === '.csv') {
    writeFileAtomically(path, summaryCsv([...params, ...metrics]));
    return 'csv';
  }
  writeFileAtomically(path, await summaryWorkbook(results, params, metrics, qosRows(results, cfg.performanceProfile)));
  return 'xlsx';
}
