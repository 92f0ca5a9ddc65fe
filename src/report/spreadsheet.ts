// The `--xlsx-output` export (spec §6.7): the reference's run-parameter and metric columns, in its
// order and with its names, read from the results object and the RunConfig, followed by a few honest
// columns of ours. A `.csv` path gets the one-row table (header + one row); any other path gets an
// XLSX workbook with the sheets Summary, Run Parameters, Performance Metrics and QoS Metrics. The
// column builders are pure; only `writeSpreadsheet` touches the file system, writing atomically.
import { writeFileAtomically } from '../util/files.js';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import type { Workbook } from 'exceljs';
import type { RunConfig } from '../settings/run-config.js';
import type { PerformanceProfile } from '../settings/choices.js';
import { columnStamp } from '../util/dates.js';

/** One spreadsheet cell. `null` is an empty cell. */
export type Cell = string | number | boolean | null;

/** A named column of the one-row Summary table. */
export interface Column {
  readonly header: string;
  readonly value: Cell;
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

/** The results object as `buildResultsJson` returns it (or as read back from the results file). */
export type ResultsJson = Readonly<Record<string, unknown>>;

const QOS_HEADERS = ['QoS Level', 'Total Requests', 'Latency P95 (ms)', 'Latency P99 (ms)', 'SLA Met', 'SLA Compliance'] as const;
const THROUGHPUT_MODE_NA = 'N/A (throughput mode)';

/** The value at `path` inside nested plain objects, or undefined. */
function at(root: unknown, ...path: readonly string[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Readonly<Record<string, unknown>>)[key];
  }
  return v;
}

/** A JSON leaf as a cell; anything else (absent, object, non-finite number) is an empty cell. */
function cell(v: unknown): Cell {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  return null;
}


/** `YYYY-MM-DD HH:MM:SS` in local time, as the reference's Timestamp column. */
export const formatTimestamp: (d: Date) => string = columnStamp;

/** The reference's run-parameter columns; `now` is the export time (the reference's Timestamp). */
export function runParameterColumns(cfg: RunConfig, now: Date = new Date()): Column[] {
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
    c('Precondition Threads', cfg.preconditionThreads > 0 ? cfg.preconditionThreads : availableParallelism()),
    c('Trace Speedup', cfg.traceSpeedup),
    c('Replay Cycles', cfg.replayCycles),
  ];
}

/** A metric column: its header and where its value sits in the results object. */
type MetricSpec = readonly [header: string, path: readonly string[]];

const LATENCY_STATS: ReadonlyArray<readonly [string, string]> = [
  ['Mean', 'mean'],
  ['P50', 'p50'],
  ['P95', 'p95'],
  ['P99', 'p99'],
  ['P99.9', 'p999'],
  ['P99.99', 'p9999'],
];

function latencySpecs(label: string, block: string, stats: number): MetricSpec[] {
  return LATENCY_STATS.slice(0, stats).map(([name, key]) => [`${label} ${name} (ms)`, ['summary', block, key]]);
}

/** Storage Tier Read|Write × Total|Device|Host × P50…P99.99: 30 columns, in the reference's order. */
function storageTierSpecs(): MetricSpec[] {
  const out: MetricSpec[] = [];
  for (const [part, infix] of [['Total', ''], ['Device', '_device'], ['Host', '_host']] as const) {
    for (const [op, key] of [['Read', 'read'], ['Write', 'write']] as const) {
      for (const [name, p] of LATENCY_STATS.slice(1)) {
        out.push([`Storage Tier ${op} ${part} ${name} (ms)`, ['summary', 'cache_stats', `storage_${key}${infix}_${p}_ms`]]);
      }
    }
  }
  return out;
}

const TIERS: ReadonlyArray<readonly [string, string]> = [
  ['GPU', 'gpu'],
  ['CPU', 'cpu'],
  ['Storage', 'storage'],
];

function tierSpecs(): MetricSpec[] {
  const cs = (key: string): readonly string[] => ['summary', 'cache_stats', key];
  return [
    ...TIERS.map(([n, t]): MetricSpec => [`Tier ${n} KV Bytes Written (GiB)`, cs(`tier_${t}_kv_bytes_written_gb`)]),
    ...TIERS.map(([n, t]): MetricSpec => [`Tier ${n} KV Bytes Read (GiB)`, cs(`tier_${t}_kv_bytes_read_gb`)]),
    ...TIERS.flatMap(([n, t]): MetricSpec[] => [
      [`Tier ${n} Read Bandwidth (GiB/s)`, cs(`tier_${t}_read_bandwidth_gbps`)],
      [`Tier ${n} Write Bandwidth (GiB/s)`, cs(`tier_${t}_write_bandwidth_gbps`)],
    ]),
    ...TIERS.map(([n, t]): MetricSpec => [`${n} Entries`, cs(`${t}_entries`)]),
  ];
}

/** The reference's metric columns (spec §6.7), then ours, each named for what it is. */
const METRIC_SPECS: readonly MetricSpec[] = [
  ['Total Requests', ['summary', 'total_requests']],
  ['Total Tokens', ['summary', 'total_tokens']],
  ['Elapsed Time (s)', ['summary', 'elapsed_time']],
  ['Avg Throughput (tok/s)', ['summary', 'avg_throughput_tokens_per_sec']],
  ['Storage Throughput (tok/s)', ['summary', 'storage_throughput_tokens_per_sec']],
  ['Requests/sec', ['summary', 'requests_per_second']],
  ...latencySpecs('E2E Latency', 'end_to_end_latency_ms', 6),
  ...latencySpecs('Storage Latency', 'storage_io_latency_ms', 6),
  ...latencySpecs('Gen Latency', 'generation_latency_ms', 4),
  ...storageTierSpecs(),
  ['Cache Hit Rate', ['summary', 'cache_stats', 'cache_hit_rate']],
  ['Read/Write Ratio', ['summary', 'cache_stats', 'read_write_ratio']],
  ['Total Read (GiB)', ['summary', 'cache_stats', 'total_read_gb']],
  ['Total Write (GiB)', ['summary', 'cache_stats', 'total_write_gb']],
  ...tierSpecs(),
  ['Multi-turn Hit Rate', ['summary', 'multi_turn_stats', 'hit_rate']],
  // Ours (not in the reference): exact bytes and wall-clock rates, and how the run ended.
  ['Measured Window (s)', ['kvcache_bench', 'measured_window_sec']],
  ['Storage Read (bytes)', ['kvcache_bench', 'storage_bytes', 'read_bytes']],
  ['Storage Written (bytes)', ['kvcache_bench', 'storage_bytes', 'written_bytes']],
  ['Storage Read (bytes/s)', ['kvcache_bench', 'storage_bytes', 'read_bytes_per_sec']],
  ['Storage Write (bytes/s)', ['kvcache_bench', 'storage_bytes', 'write_bytes_per_sec']],
  ['Device Read (bytes)', ['kvcache_bench', 'device_io', 'read_bytes']],
  ['Device Written (bytes)', ['kvcache_bench', 'device_io', 'written_bytes']],
  ['Stop Reason', ['kvcache_bench', 'stop_reason']],
  ['Tool Version', ['kvcache_bench', 'version']],
];

/** Every metric column; a figure missing from the results (e.g. no storage writes) is an empty cell. */
export function metricColumns(results: ResultsJson): Column[] {
  return METRIC_SPECS.map(([header, path]) => ({ header, value: cell(at(results, ...path)) }));
}

/** One row per QoS class that saw requests; SLA columns are "N/A (throughput mode)" under that profile. */
export function qosRows(results: ResultsJson, profile: PerformanceProfile): QosRow[] {
  const metrics = at(results, 'summary', 'qos_metrics');
  if (metrics === null || typeof metrics !== 'object' || Array.isArray(metrics)) return [];
  const throughput = profile === 'throughput';
  const rows: QosRow[] = [];
  for (const [level, data] of Object.entries(metrics as Readonly<Record<string, unknown>>)) {
    if (data === null || typeof data !== 'object' || at(data, 'no_data') === true) continue;
    rows.push({
      level,
      totalRequests: cell(at(data, 'total_requests')),
      latencyP95Ms: cell(at(data, 'latency_ms', 'p95')),
      latencyP99Ms: cell(at(data, 'latency_ms', 'p99')),
      slaMet: throughput ? THROUGHPUT_MODE_NA : cell(at(data, 'sla', 'met')),
      slaCompliance: throughput ? THROUGHPUT_MODE_NA : cell(at(data, 'sla', 'compliance')),
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

function addSheet(wb: Workbook, name: string, header: readonly string[], rows: readonly (readonly Cell[])[], widths: readonly number[]): void {
  const ws = wb.addWorksheet(name);
  ws.addRow([...header]);
  ws.getRow(1).font = { bold: true };
  for (const r of rows) ws.addRow([...r]);
  widths.forEach((w, i) => (ws.getColumn(i + 1).width = w));
}

/** The four-sheet workbook of the reference, as bytes. */
async function summaryWorkbook(params: readonly Column[], metrics: readonly Column[], qos: readonly QosRow[]): Promise<Uint8Array> {
  // Loaded here, not at startup: it takes ~0.3 s and only runs that ask for a workbook need it.
  const { default: ExcelJS } = await import('exceljs');
  const wb = new ExcelJS.Workbook();
  wb.creator = 'kvcache-bench';
  const all = [...params, ...metrics];
  addSheet(wb, 'Summary', all.map((c) => c.header), [all.map((c) => c.value)], []);
  const pairs = (cols: readonly Column[]): Cell[][] => cols.map((c) => [c.header, c.value]);
  addSheet(wb, 'Run Parameters', ['Parameter', 'Value'], pairs(params), [32, 40]);
  addSheet(wb, 'Performance Metrics', ['Metric', 'Value'], pairs(metrics), [40, 24]);
  addSheet(wb, 'QoS Metrics', QOS_HEADERS, qos.map(qosCells), [14, 16, 18, 18, 22, 22]);
  const bytes = await wb.xlsx.writeBuffer();
  return new Uint8Array(bytes);
}

/** Writes the summary to `path`: a one-row CSV when it ends in `.csv`, else an XLSX workbook. */
export async function writeSpreadsheet(path: string, results: ResultsJson, cfg: RunConfig, now: Date = new Date()): Promise<'csv' | 'xlsx'> {
  const params = runParameterColumns(cfg, now);
  const metrics = metricColumns(results);
  if (extname(path).toLowerCase() === '.csv') {
    writeFileAtomically(path, summaryCsv([...params, ...metrics]));
    return 'csv';
  }
  writeFileAtomically(path, await summaryWorkbook(params, metrics, qosRows(results, cfg.performanceProfile)));
  return 'xlsx';
}
