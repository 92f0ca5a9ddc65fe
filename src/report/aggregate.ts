// `kv-cache aggregate`: one row per run results file, as the reference's utils/json_to_xlsx.py builds
// its sheet (docs/reference-compat.md), followed by our columns. Pure: the CLI (src/cli/aggregate.ts)
// lists and reads the files; this module decides what each file is, builds the rows and writes the
// table (XLSX or CSV, both through exceljs). Files are read loosely (not against this build's schema):
// results of other versions, and the reference's own files, aggregate too; a missing figure is an
// empty cell. A replay's results are a row of the columns a replay records, and a merged MLPerf
// summary one row per option of the figures it records (FOREIGN_ROWS); their other cells stay empty.
//
// The reference's columns, in json_to_xlsx.py's order: Filename; Storage Throughput (tok/s), which it
// recomputes from the root-level totals (total_tokens_generated ÷ total_storage_io_latency), Storage
// Requests/sec (requests_completed ÷ total_storage_io_latency), Total I/O Time (s); then the summary
// figures, latency blocks, the 30 storage-tier percentiles, cache figures, per-tier bytes (written then
// read per tier), bandwidths, entries and the multi-turn hit rate. Rows are sorted by Filename.
import { basename, dirname, extname } from 'node:path';
import type { Cell } from './spreadsheet-cell.js';
import { LATENCY_STATS, storageTierColumnKeys } from './spreadsheet.js';
import { kindOfHeader, numberFormatFor, roundFor } from './rounding.js';
import { inertCell } from '../util/safe-text.js';
import { MANIFEST_PROBLEM, mlperfFileKind } from './html/summary-input.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value at a path of keys, or undefined where the path breaks. */
function at(o: unknown, ...keys: readonly string[]): unknown {
  let v = o;
  for (const k of keys) {
    if (!isObject(v)) return undefined;
    v = v[k];
  }
  return v;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A found file: its path as listed (the Filename column) and its text, or why it could not be read. */
export type FoundFile = { readonly path: string; readonly text: string } | { readonly path: string; readonly unreadable: string };

export interface SkippedFile {
  readonly path: string;
  readonly reason: string;
}

type ColumnSpec = readonly [header: string, value: (doc: Json, path: string) => Cell];

/** json_to_xlsx.py: a quotient of root-level totals, None (empty) when the I/O time is not positive. */
function perIoSecond(doc: Json, numerator: string): number | null {
  const io = num(doc.total_storage_io_latency) ?? 0;
  const n = num(doc[numerator]) ?? 0;
  return io > 0 ? n / io : null;
}

/** json_to_xlsx.py's `summary.get(key) or total`: the root-level total when the summary's figure is missing or 0. */
function summaryOrTotal(doc: Json, key: string, total: string): number {
  const own = num(at(doc, 'summary', key));
  return own !== null && own !== 0 ? own : (num(doc[total]) ?? 0);
}

const summary =
  (...keys: string[]) =>
  (doc: Json) =>
    num(at(doc, 'summary', ...keys));
const cacheStat = (key: string) => summary('cache_stats', key);

/** The first `stats` columns of a latency block (Mean, P50, …, P99.99), named as the per-run sheet names them. */
function latencyColumns(label: string, block: string, stats: number): ColumnSpec[] {
  return LATENCY_STATS.slice(0, stats).map(([name, key]): ColumnSpec => [`${label} ${name} (ms)`, summary(block, key)]);
}

const TIERS = [
  ['GPU', 'gpu'],
  ['CPU', 'cpu'],
  ['Storage', 'storage'],
] as const;

/** The reference's json_to_xlsx.py columns, in its order. */
const REFERENCE_COLUMNS: readonly ColumnSpec[] = [
  ['Filename', (_doc, path) => path],
  ['Storage Throughput (tok/s)', (doc) => perIoSecond(doc, 'total_tokens_generated')],
  ['Storage Requests/sec', (doc) => perIoSecond(doc, 'requests_completed')],
  ['Total I/O Time (s)', (doc) => num(doc.total_storage_io_latency) ?? 0],
  ['Avg Throughput (tok/s)', summary('avg_throughput_tokens_per_sec')],
  ['Requests/sec', summary('requests_per_second')],
  ['Total Tokens', (doc) => summaryOrTotal(doc, 'total_tokens', 'total_tokens_generated')],
  ['Total Requests', (doc) => summaryOrTotal(doc, 'total_requests', 'requests_completed')],
  ['Elapsed Time (s)', summary('elapsed_time')],
  ...latencyColumns('E2E Latency', 'end_to_end_latency_ms', 6),
  ...latencyColumns('Storage Latency', 'storage_io_latency_ms', 6),
  ...latencyColumns('Gen Latency', 'generation_latency_ms', 4),
  ...storageTierColumnKeys().map(([header, key]): ColumnSpec => [header, cacheStat(key)]),
  ['Cache Hit Rate', cacheStat('cache_hit_rate')],
  ['Read/Write Ratio', cacheStat('read_write_ratio')],
  ['Total Read (GiB)', cacheStat('total_read_gb')],
  ['Total Write (GiB)', cacheStat('total_write_gb')],
  ...TIERS.flatMap(([n, t]): ColumnSpec[] => [
    [`Tier ${n} KV Bytes Written (GiB)`, cacheStat(`tier_${t}_kv_bytes_written_gb`)],
    [`Tier ${n} KV Bytes Read (GiB)`, cacheStat(`tier_${t}_kv_bytes_read_gb`)],
  ]),
  ...TIERS.flatMap(([n, t]): ColumnSpec[] => [
    [`Tier ${n} Read Bandwidth (GiB/s)`, cacheStat(`tier_${t}_read_bandwidth_gbps`)],
    [`Tier ${n} Write Bandwidth (GiB/s)`, cacheStat(`tier_${t}_write_bandwidth_gbps`)],
  ]),
  ...TIERS.map(([n, t]): ColumnSpec => [`${n} Entries`, cacheStat(`${t}_entries`)]),
  ['Multi-turn Hit Rate', summary('multi_turn_stats', 'hit_rate')],
];

const bench =
  (...keys: string[]) =>
  (doc: Json) =>
    at(doc, 'kvcache_bench', ...keys);

/** The trials' CV of a headline figure (kvcache_bench.trials.stats.<figure>.cv); empty without trials. */
const trialCv = (figure: string) => (doc: Json) => num(bench('trials', 'stats', figure, 'cv')(doc));

function deviceText(doc: Json): string | null {
  const dir = bench('machine', 'cache_dir')(doc);
  if (dir === null) return 'none (trace mode)';
  const dev = str(at(dir, 'block_device'));
  if (dev === null) return isObject(dir) ? 'not resolvable' : null;
  const model = str(at(dir, 'device_model'));
  return model === null ? dev : `${dev} (${model})`;
}

function validity(doc: Json): string | null {
  const valid = bench('validity', 'valid')(doc);
  return typeof valid === 'boolean' ? (valid ? 'VALID' : 'NOT VALID') : null;
}

function reasonCodes(doc: Json): string | null {
  const reasons = bench('validity', 'reasons')(doc);
  if (!Array.isArray(reasons)) return null;
  return reasons
    .map((r) => str(at(r, 'code')))
    .filter((c): c is string => c !== null)
    .join(', ');
}

/** A metadata class's p95 at `at` (a run's or replay's block, a merged option's), empty when the class made no call. */
const metadataP95 =
  (op: string, block: (doc: Json) => unknown = bench('metadata_ops')) =>
  (doc: Json): number | null => {
    const m = block(doc);
    const count = num(at(m, op, 'count'));
    if (count === null || count === 0) return null;
    return num(at(m, op, 'latency_ms', 'p95')) ?? num(at(m, op, 'latency', 'p95_ms'));
  };

/** Ours, after the reference's: what was measured, how much the device moved, the verdict, the spread. */
const OUR_COLUMNS: readonly ColumnSpec[] = [
  ['I/O Mode', (doc) => str(bench('storage_io_mode')(doc))],
  ['File System', (doc) => str(bench('storage_file_system')(doc))],
  ['Device', deviceText],
  ['Storage Read (bytes/s)', (doc) => num(bench('storage_bytes', 'read_bytes_per_sec')(doc))],
  ['Storage Write (bytes/s)', (doc) => num(bench('storage_bytes', 'write_bytes_per_sec')(doc))],
  ['Device Read (bytes)', (doc) => num(bench('device_io', 'read_bytes')(doc))],
  ['Device Written (bytes)', (doc) => num(bench('device_io', 'written_bytes')(doc))],
  ['Validity', validity],
  ['Validity Reasons', reasonCodes],
  ['Stop Reason', (doc) => str(bench('stop_reason')(doc))],
  ['Trials Completed', (doc) => num(bench('trials', 'completed')(doc))],
  ['Storage Bytes/s CV', trialCv('storage_bytes_per_sec')],
  ['Requests/sec CV', trialCv('requests_per_second')],
  ['Avg Throughput CV', trialCv('avg_throughput_tokens_per_sec')],
  ['Storage Read Device P95 CV', trialCv('storage_read_device_p95_ms')],
  ['Storage Write Device P95 CV', trialCv('storage_write_device_p95_ms')],
  ['E2E P95 CV', trialCv('end_to_end_p95_ms')],
  // Block-granular runs (empty otherwise): the block size and token hit rates against the workload's ideal.
  ['KV Block Tokens', (doc) => num(bench('kv_blocks', 'block_tokens')(doc))],
  ['Token Hit Rate', (doc) => num(bench('kv_blocks', 'token_hit_rate', 'total')(doc))],
  ['Storage Token Hit Rate', (doc) => num(bench('kv_blocks', 'token_hit_rate', 'storage')(doc))],
  ['Ideal Token Hit Rate', (doc) => num(bench('kv_blocks', 'ideal', 'token_hit_rate')(doc))],
  ['Block Reads/sec', (doc) => num(bench('kv_blocks', 'block_reads_per_sec')(doc))],
  ['Block Writes/sec', (doc) => num(bench('kv_blocks', 'block_writes_per_sec')(doc))],
  // Shared pools and ranks dividing a trace (issue 32; empty otherwise).
  ['KV Pool', (doc) => str(bench('kv_pool', 'pool')(doc))],
  ['Route', (doc) => str(bench('kv_pool', 'route')(doc))],
  ["Trace's Own Token Hit Rate", (doc) => num(bench('kv_pool', 'trace_ideal', 'token_hit_rate')(doc))],
  ['Pool Hit Rate Own', (doc) => num(bench('kv_pool', 'shared', 'hits_by_origin', 'own', 'token_hit_rate')(doc))],
  ['Pool Hit Rate Other Rank', (doc) => num(bench('kv_pool', 'shared', 'hits_by_origin', 'other_rank', 'token_hit_rate')(doc))],
  ['Pool Hit Rate Earlier Run', (doc) => num(bench('kv_pool', 'shared', 'hits_by_origin', 'earlier_run', 'token_hit_rate')(doc))],
  ['Pool Lookups/sec', (doc) => num(bench('kv_pool', 'shared', 'lookups', 'per_sec')(doc))],
  ['Pool Lookup P95 ms', (doc) => num(bench('kv_pool', 'shared', 'lookups', 'latency_ms', 'p95')(doc))],
  ['Pool Publish Races', (doc) => num(bench('kv_pool', 'shared', 'publish_races')(doc))],
  // The storage tier's metadata calls (issue 34; empty in trace mode and before schema 2.8.0).
  ['Metadata Ops/sec', (doc) => num(bench('metadata_ops', 'per_second')(doc))],
  ['Metadata Ops/GiB', (doc) => num(bench('metadata_ops', 'per_gib_moved')(doc))],
  ['Metadata Create P95 (ms)', metadataP95('create')],
  ['Metadata Unlink P95 (ms)', metadataP95('unlink')],
  ['Schema Version', (doc) => str(bench('schema_version')(doc))],
  ['Tool Version', (doc) => str(bench('version')(doc))],
];

/** The modelled time to first token (issue 23, kvcache_bench.ttft_modelled): empty cells without the block. */
const ttft =
  (...keys: string[]) =>
  (doc: Json) =>
    bench('ttft_modelled', ...keys)(doc);
const TTFT_COLUMNS: readonly ColumnSpec[] = [
  ['Modelled TTFT GPU Profile', (doc) => str(ttft('gpu_profile')(doc))],
  ['Modelled TTFT MFU', (doc) => num(ttft('mfu')(doc))],
  ['Modelled TTFT Offload P50 (ms)', (doc) => num(ttft('overall', 'ttft_offload_ms', 'p50')(doc))],
  ['Modelled TTFT Offload P99 (ms)', (doc) => num(ttft('overall', 'ttft_offload_ms', 'p99')(doc))],
  ['Modelled TTFT Recompute P50 (ms)', (doc) => num(ttft('overall', 'ttft_recompute_ms', 'p50')(doc))],
  ['Modelled TTFT Recompute P99 (ms)', (doc) => num(ttft('overall', 'ttft_recompute_ms', 'p99')(doc))],
  ['Modelled TTFT Speedup P5 Ratio', (doc) => num(ttft('overall', 'speedup', 'p5')(doc))],
  ['Modelled TTFT Speedup P50 Ratio', (doc) => num(ttft('overall', 'speedup', 'p50')(doc))],
  ['Modelled TTFT Offload Lost Rate', (doc) => num(ttft('overall', 'load_slower_share')(doc))],
  ['Modelled TTFT Hits Read (bytes/s)', (doc) => num(ttft('overall', 'delivered_read_bytes_per_sec')(doc))],
  ['Modelled TTFT Break-even Read (bytes/s)', (doc) => num(ttft('overall', 'break_even_read_bytes_per_sec')(doc))],
];

export const AGGREGATE_COLUMNS: readonly ColumnSpec[] = [...REFERENCE_COLUMNS, ...OUR_COLUMNS, ...TTFT_COLUMNS];
export const REFERENCE_COLUMN_COUNT = REFERENCE_COLUMNS.length;

/** The cells a file that is not a run fills, by column header; every other column of its row is empty. */
type CellsByHeader = Readonly<Record<string, (doc: Json, path: string) => Cell>>;

const columnByHeader = new Map(AGGREGATE_COLUMNS.map(([h, value]) => [h, value]));
/** The run's own column, for the columns a replay records at the same place in its file. */
const sameAsRun = (header: string): ((doc: Json, path: string) => Cell) => columnByHeader.get(header) ?? (() => null);
const replayRate = (which: 'read_bytes' | 'write_bytes') => (doc: Json) => {
  const elapsed = num(doc.elapsed_time);
  const bytes = num(at(doc, 'replay', which));
  return elapsed === null || bytes === null || elapsed <= 0 ? null : bytes / elapsed;
};

/** A replay (kv-cache replay): its storage-tier figures and device counters; no request, token, hit-rate or verdict column. */
export const REPLAY_CELLS: CellsByHeader = Object.fromEntries([
  ['Filename', (_doc: Json, path: string) => path],
  ['Elapsed Time (s)', (doc: Json) => num(doc.elapsed_time)],
  ...storageTierColumnKeys().map(([header]) => [header, sameAsRun(header)] as const),
  ...[
    'Tier Storage KV Bytes Written (GiB)',
    'Tier Storage KV Bytes Read (GiB)',
    'Tier Storage Read Bandwidth (GiB/s)',
    'Tier Storage Write Bandwidth (GiB/s)',
    'I/O Mode',
    'File System',
    'Device',
    'Device Read (bytes)',
    'Device Written (bytes)',
    'Stop Reason',
    'Metadata Ops/sec',
    'Metadata Ops/GiB',
    'Metadata Create P95 (ms)',
    'Metadata Unlink P95 (ms)',
    'Schema Version',
    'Tool Version',
  ].map((h) => [h, sameAsRun(h)] as const),
  ['Storage Read (bytes/s)', replayRate('read_bytes')],
  ['Storage Write (bytes/s)', replayRate('write_bytes')],
]);

const pooled = (op: 'read' | 'write', p: string) => (o: Json) => num(at(o, 'kvcache_bench', `storage_${op}_device_latency`, `${p}_ms`));

/**
 * One option of a merged MLPerf summary (kv-cache merge), every rank as one system: upstream's sums of
 * the ranks' figures where the column is one of them, our pooled device percentiles (every rank's
 * samples, not a max of p95s) and all ranks' bytes ÷ the common window.
 */
export const SUMMARY_OPTION_CELLS: CellsByHeader = {
  'Avg Throughput (tok/s)': (o) => num(o.aggregated_avg_throughput_tokens_per_sec),
  'Tier Storage Read Bandwidth (GiB/s)': (o) => num(o.aggregated_read_bandwidth_gbps),
  'Tier Storage Write Bandwidth (GiB/s)': (o) => num(o.aggregated_write_bandwidth_gbps),
  'Storage Tier Read Device P50 (ms)': pooled('read', 'p50'),
  'Storage Tier Read Device P95 (ms)': pooled('read', 'p95'),
  'Storage Tier Read Device P99 (ms)': pooled('read', 'p99'),
  'Storage Tier Read Device P99.9 (ms)': pooled('read', 'p999'),
  'Storage Tier Write Device P50 (ms)': pooled('write', 'p50'),
  'Storage Tier Write Device P95 (ms)': pooled('write', 'p95'),
  'Storage Tier Write Device P99 (ms)': pooled('write', 'p99'),
  'Storage Tier Write Device P99.9 (ms)': pooled('write', 'p999'),
  'Storage Read (bytes/s)': (o) => num(at(o, 'kvcache_bench', 'storage_read_bytes_per_sec')),
  'Storage Write (bytes/s)': (o) => num(at(o, 'kvcache_bench', 'storage_write_bytes_per_sec')),
  Validity: (o) => {
    const valid = at(o, 'kvcache_bench', 'all_ranks_valid');
    return typeof valid === 'boolean' ? (valid ? 'VALID' : 'NOT VALID') : null;
  },
  'Trials Completed': (o) => num(o.trial_count),
  // Every rank's calls: rates summed, per GiB over their bytes, percentiles pooled (mlperf/merge-metadata.ts).
  'Metadata Ops/sec': (o) => num(at(o, 'kvcache_bench', 'metadata_ops', 'per_second')),
  'Metadata Ops/GiB': (o) => num(at(o, 'kvcache_bench', 'metadata_ops', 'per_gib_moved')),
  'Metadata Create P95 (ms)': metadataP95('create', (o) => at(o, 'kvcache_bench', 'metadata_ops')),
  'Metadata Unlink P95 (ms)': metadataP95('unlink', (o) => at(o, 'kvcache_bench', 'metadata_ops')),
};

export interface AggregateTable {
  readonly headers: readonly string[];
  /** One row per run or replay results file and per option of a merged summary, sorted by Filename; values rounded to their precision. */
  readonly rows: ReadonlyArray<readonly Cell[]>;
  /** How many files gave the rows. */
  readonly files: number;
  readonly skipped: readonly SkippedFile[];
}

/** The trial files a `--output` file with trials lists, as `dir/name` beside it. */
function trialFilesOf(path: string, doc: Json): string[] {
  const runs = bench('trials', 'runs')(doc);
  if (!Array.isArray(runs)) return [];
  return runs
    .map((r) => str(at(r, 'file')))
    .filter((f): f is string => f !== null)
    .map((f) => `${dirname(path)}/${basename(f)}`);
}

/** Trial files listed by a `--output` file with trials that is also among the files: `dir/name` → its parent. */
function listedTrials(runs: ReadonlyArray<{ path: string; trialFiles: readonly string[] }>): Map<string, string> {
  const listed = new Map<string, string>();
  for (const { path, trialFiles } of runs) for (const t of trialFiles) listed.set(t, path);
  return listed;
}

/** What a parsed file is, or the reason it is skipped. */
function kindOf(doc: unknown): 'run' | 'replay' | 'summary' | { skip: string } {
  if (!isObject(doc)) return { skip: 'not a kv-cache results file (the JSON is not an object)' };
  if (isObject(doc.replay)) return 'replay';
  const mlperf = mlperfFileKind(doc);
  if (mlperf === 'summary') return 'summary';
  if (mlperf === 'manifest') return { skip: MANIFEST_PROBLEM };
  if (!isObject(doc.summary)) return { skip: "not a kv-cache results file (no 'summary' object)" };
  return 'run';
}

/** A row of a file that is not a run: the cells `cells` gives, the others empty, each rounded as its column. */
function foreignRow(
  headers: readonly string[],
  kinds: Array<ReturnType<typeof kindOfHeader>>,
  cells: CellsByHeader,
  doc: Json,
  path: string,
): Cell[] {
  return headers.map((h, i) => roundFor(kinds[i], cells[h]?.(doc, path) ?? null));
}

/**
 * The table of `files`: a row per run, per replay and per option of a merged summary. Skipped, each
 * with its reason: unreadable files, text that is not JSON, JSON that is none of those (an mlperf
 * manifest is named as such), and trial files (`<stem>.trial-<k>.json`) whose `--output` file is
 * among the files: that file already holds the median trial and every trial's figures (the CV
 * columns), so its trials would count the same configuration several times. A trial file without its
 * `--output` file is a row of its own.
 */
export function aggregateTable(files: Iterable<FoundFile>): AggregateTable {
  const skipped: SkippedFile[] = [];
  const headers = AGGREGATE_COLUMNS.map(([h]) => h);
  const kinds = headers.map(kindOfHeader);
  // Each file becomes its row at once and its text and document are dropped: with a lazy `files`, one
  // file's document is in memory at a time, however many large files there are.
  const runs: Array<{ path: string; row: Cell[]; trialFiles: string[] }> = [];
  const others: Array<{ path: string; row: Cell[] }> = [];
  /** The replays and summaries that gave rows. */
  const otherFiles = new Set<string>();
  for (const f of files) {
    if ('unreadable' in f) {
      skipped.push({ path: f.path, reason: `unreadable: ${f.unreadable}` });
      continue;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(f.text);
    } catch (e) {
      skipped.push({ path: f.path, reason: `not JSON: ${(e as Error).message}` });
      continue;
    }
    const kind = kindOf(doc);
    const json = doc as Json;
    if (typeof kind === 'object') skipped.push({ path: f.path, reason: kind.skip });
    else if (kind === 'run') {
      const row = AGGREGATE_COLUMNS.map(([, value], i) => roundFor(kinds[i], value(json, f.path)));
      runs.push({ path: f.path, row, trialFiles: trialFilesOf(f.path, json) });
    } else if (kind === 'replay') {
      others.push({ path: f.path, row: foreignRow(headers, kinds, REPLAY_CELLS, json, f.path) });
      otherFiles.add(f.path);
    } else {
      const options = Object.entries(isObject(json.options) ? json.options : {});
      if (options.length === 0) skipped.push({ path: f.path, reason: 'a merged summary without any option' });
      for (const [id, option] of options) {
        const name = `${f.path} option ${id}`;
        const cells = { ...SUMMARY_OPTION_CELLS, Filename: () => name };
        others.push({ path: name, row: foreignRow(headers, kinds, cells, isObject(option) ? option : {}, f.path) });
        otherFiles.add(f.path);
      }
    }
  }
  const trials = listedTrials(runs);
  const kept = runs.filter(({ path }) => {
    const parent = trials.get(`${dirname(path)}/${basename(path)}`);
    if (parent === undefined || parent === path) return true;
    skipped.push({ path, reason: `a trial of ${parent}, which holds its figures (trials columns)` });
    return false;
  });
  const all = [...kept, ...others];
  // As json_to_xlsx.py: sorted by Filename (code-point order).
  all.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const rows = all.map(({ row }) => row);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { headers, rows, files: kept.length + otherFiles.size, skipped };
}

export type AggregateFormat = 'xlsx' | 'csv';

/** The format a path asks for, or undefined when its extension is neither. */
export function aggregateFormatOf(path: string): AggregateFormat | undefined {
  const ext = extname(path).toLowerCase();
  return ext === '.xlsx' ? 'xlsx' : ext === '.csv' ? 'csv' : undefined;
}

/** The table as file bytes: one sheet (header row bold and frozen, number formats) or CSV, both written by exceljs. */
export async function aggregateBytes(table: AggregateTable, format: AggregateFormat): Promise<Uint8Array> {
  const { default: ExcelJS } = await import('exceljs');
  const wb = new ExcelJS.Workbook();
  wb.creator = 'kvcache-bench';
  const ws = wb.addWorksheet('Summary', { views: [{ state: 'frozen', xSplit: 1, ySplit: 1 }] });
  ws.addRow([...table.headers]);
  ws.getRow(1).font = { bold: true };
  const formats = table.headers.map((h) => numberFormatFor(kindOfHeader(h)));
  for (const r of table.rows) {
    // A CSV cell is re-read by a spreadsheet, which would evaluate text such as =HYPERLINK(…) or =cmd|…
    // (the XLSX writer stores text as text).
    const row = ws.addRow(format === 'csv' ? r.map((v) => (typeof v === 'string' ? inertCell(v) : v)) : [...r]);
    r.forEach((v, j) => {
      const fmt = formats[j];
      if (typeof v === 'number' && fmt !== undefined) row.getCell(j + 1).numFmt = fmt;
    });
  }
  ws.getColumn(1).width = Math.min(80, Math.max(12, ...table.rows.map((r) => String(r[0]).length + 2)));
  const buffer = format === 'xlsx' ? await wb.xlsx.writeBuffer() : await wb.csv.writeBuffer();
  return new Uint8Array(buffer);
}
