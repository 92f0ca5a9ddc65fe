// The --xlsx-output export (as the reference's spreadsheet tests, docs/reference-compat.md#rc-46): the one-row CSV, the four-sheet XLSX read
// back with the same library, the column names and order, the QoS rows under both profiles, CSV
// quoting, atomic writing, and the command's wiring (startup check, "Spreadsheet saved to").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import type { Worksheet } from 'exceljs';
import { parseRunArgs } from '../../src/cli/run-args.js';
import type { RunConfig } from '../../src/settings/run-config.js';
import {
  csvField,
  formatTimestamp,
  metricColumns,
  qosRows,
  runParameterColumns,
  summaryCsv,
  writeSpreadsheet,
} from '../../src/report/spreadsheet.js';
import type { Column } from '../../src/report/spreadsheet.js';
import type { Cell } from '../../src/report/spreadsheet-cell.js';
import { buildResultsJson, machineJson } from '../../src/report/results-json.js';
import type { LatencyBlock, ResultsDocument } from '../../src/report/results-schema.js';
import type { CacheStats } from '../../src/metrics/cache-stats.js';
import { PERCENTILES } from '../../src/metrics/cache-stats-schema.js';
import { FIXTURE_MACHINE, runResultFixture } from './fixtures.js';
import { assertValidResults, readValidResults } from './validate-results.js';
import { runCli } from '../e2e/run-cli.js';
import { parseCsv } from '../util/csv.js';
import { withTempDir as withDir } from '../util/temp-dir.js';

const withTempDir = <T>(fn: (dir: string) => Promise<T>): Promise<T> => withDir(fn, 'kvcache-sheet-');

function config(...extra: string[]): RunConfig {
  return parseRunArgs(['--model', 'llama3.1-8b', ...extra], new Date()).config;
}

const latency = (base: number): LatencyBlock => ({
  mean: base,
  p50: base * 0.9,
  p95: base * 2,
  p99: base * 3,
  p999: base * 4,
  p9999: base * 5,
});

/** A results document as `buildResultsJson` makes it, with figures set here. No storage write latencies, no device. */
function fakeResults(): ResultsDocument {
  const doc = buildResultsJson(runResultFixture());
  const cacheStats: CacheStats = {
    ...doc.summary.cache_stats,
    cache_hit_rate: 0.4,
    read_write_ratio: 1.5,
    total_read_gb: 3,
    total_write_gb: 2,
    gpu_entries: 0,
    cpu_entries: 7,
    storage_entries: 42,
    tier_storage_kv_bytes_written_gb: 1.25,
    tier_storage_kv_bytes_read_gb: 2.5,
    tier_storage_read_bandwidth_gbps: 0.25,
    tier_storage_write_bandwidth_gbps: 0.125,
  };
  for (const part of ['', '_device', '_host'] as const) {
    for (const [p] of PERCENTILES) {
      cacheStats[`storage_read${part}_${p}_ms`] = 1.5;
      Reflect.deleteProperty(cacheStats, `storage_write${part}_${p}_ms`);
    }
  }
  return {
    ...doc,
    requests_completed: 120,
    summary: {
      ...doc.summary,
      total_requests: 120,
      total_tokens: 4567,
      elapsed_time: 10.5,
      avg_throughput_tokens_per_sec: 434.9523809523809,
      total_storage_io_time: 3.7,
      storage_throughput_tokens_per_sec: 1234.3243243243244,
      requests_per_second: 11.428571428571429,
      end_to_end_latency_ms: latency(100),
      storage_io_latency_ms: latency(10),
      generation_latency_ms: latency(50),
      cache_stats: cacheStats,
      qos_metrics: {
        interactive: {
          total_requests: 30,
          latency_ms: { mean: 80, p50: 70, p95: 150, p99: 190, max: 200 },
          sla: { target_p95_ms: 50, actual_p95_ms: 150, compliance: 0.5, met: false },
          violations: 15,
        },
        responsive: {
          total_requests: 90,
          latency_ms: { mean: 60, p50: 55, p95: 90, p99: 99, max: 120 },
          sla: { target_p95_ms: 100, actual_p95_ms: 90, compliance: 0.99, met: true },
          violations: 1,
        },
        batch: { no_data: true },
      },
      multi_turn_stats: { cache_hits: 1, cache_misses: 3, hit_rate: 0.25 },
    },
    kvcache_bench: {
      ...doc.kvcache_bench,
      version: '0.1.0',
      stop_reason: 'duration',
      measured_window_sec: 10.5,
      storage_bytes: {
        read_bytes: 2684354560,
        written_bytes: 1342177280,
        read_bytes_per_sec: 255652815.2,
        write_bytes_per_sec: 127826407.6,
        read_gib_per_sec: 0.238,
        write_gib_per_sec: 0.119,
      },
      device_io: null,
    },
  };
}

/** The cells of row `n` (1-based), from column 1 to the sheet's last column. */
function rowCells(ws: Worksheet | undefined, n: number): unknown[] {
  assert.ok(ws !== undefined);
  const out: unknown[] = [];
  for (let i = 1; i <= ws.columnCount; i++) out.push(ws.getRow(n).getCell(i).value);
  return out;
}

const summaryOf = (r: ResultsDocument): ResultsDocument['summary'] => r.summary;
const valueOf = (cols: readonly Column[], header: string): Cell | undefined => cols.find((c) => c.header === header)?.value;

const RUN_PARAMETER_HEADERS = [
  'Timestamp',
  'Model',
  'Num Users',
  'Duration (s)',
  'GPU Memory per Card (GiB)',
  'Num GPUs',
  'Tensor Parallel',
  'Total GPU Memory (GiB)',
  'CPU Memory (GiB)',
  'Generation Mode',
  'Performance Profile',
  'Multi-turn',
  'Prefix Caching',
  'RAG Enabled',
  'Autoscaling',
  'Seed',
  'Max Concurrent Allocs',
  'Request Rate',
  'Max Requests',
  'Dataset Path',
  'Cache Dir',
  'Storage Capacity (GiB)',
  'Precondition',
  'Precondition Size (GiB)',
  'Precondition Threads',
  'Trace Speedup',
  'Replay Cycles',
];

test('a .csv path gets a one-row table with Model and the two throughput columns from the summary', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'summary.csv');
    const results = fakeResults();
    assert.equal(await writeSpreadsheet(path, results, config()), 'csv');
    const rows = parseCsv(await readFile(path, 'utf8'));
    assert.equal(rows.length, 2, 'header + one data row');
    const [header, data] = rows as [string[], string[]];
    assert.equal(header.length, data.length);
    const field = (name: string): string => {
      const i = header.indexOf(name);
      assert.ok(i >= 0, `column ${name}`);
      return data[i];
    };
    assert.equal(field('Model'), 'llama3.1-8b');
    // Rates to 3 significant digits (434.952… and 1,234.32… in the results).
    assert.equal(field('Avg Throughput (tok/s)'), '435');
    assert.equal(field('Storage Throughput (tok/s)'), '1230');
    assert.deepEqual(header.slice(0, RUN_PARAMETER_HEADERS.length), RUN_PARAMETER_HEADERS, 'run parameters first, then metrics');
    assert.equal(field('Multi-turn'), 'True');
    assert.equal(field('Storage Tier Write Total P95 (ms)'), '', 'absent figure → empty field');
    assert.deepEqual(await readdir(dir), ['summary.csv'], 'no temp file left');
  });
});

test('an .xlsx path gets the four sheets, read back with numbers as numbers', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'summary.xlsx');
    const results = fakeResults();
    const cfg = config('--cache-dir', join(dir, 'cache'), '--create-cache-dir');
    assert.equal(await writeSpreadsheet(path, results, cfg), 'xlsx');
    assert.deepEqual(await readdir(dir), ['summary.xlsx'], 'no temp file left');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    assert.deepEqual(
      wb.worksheets.map((w) => w.name),
      ['Overview', 'Summary', 'Run Parameters', 'Performance Metrics', 'QoS Metrics'],
    );

    const sheet = (name: string): Worksheet => {
      const ws = wb.getWorksheet(name);
      assert.ok(ws !== undefined, name);
      return ws;
    };
    const summary = sheet('Summary');
    assert.equal(summary.rowCount, 2);
    const headers = rowCells(summary, 1);
    const at = (name: string): unknown => summary.getRow(2).getCell(headers.indexOf(name) + 1).value;
    assert.equal(at('Model'), 'llama3.1-8b');
    assert.equal(at('Avg Throughput (tok/s)'), 435);
    assert.equal(typeof at('Storage Throughput (tok/s)'), 'number');
    assert.equal(at('Storage Throughput (tok/s)'), 1230);
    // Number formats on the cells, so Excel shows the precision too.
    const fmt = (name: string): string => summary.getRow(2).getCell(headers.indexOf(name) + 1).numFmt;
    assert.equal(fmt('Storage Throughput (tok/s)'), '#,##0.0####');
    assert.equal(fmt('E2E Latency P95 (ms)'), '#,##0.0##');
    assert.equal(fmt('Cache Hit Rate'), '0.0000');
    assert.equal(fmt('Total Requests'), '#,##0');
    assert.equal(fmt('Total Read (GiB)'), '#,##0.000');
    assert.equal(typeof at('Num Users'), 'number');
    assert.equal(at('Total Requests'), 120);
    assert.equal(at('Multi-turn'), true);
    assert.equal(at('Cache Dir'), join(dir, 'cache'));
    assert.equal(at('Storage Tier Write Total P95 (ms)'), null, 'absent figure → empty cell');
    assert.equal(at('Storage Written (bytes)'), 1342177280);

    const params = sheet('Run Parameters');
    assert.deepEqual(rowCells(params, 1), ['Parameter', 'Value']);
    assert.equal(params.rowCount, 1 + RUN_PARAMETER_HEADERS.length);
    assert.deepEqual(rowCells(params, 3), ['Model', 'llama3.1-8b']);

    const metrics = sheet('Performance Metrics');
    assert.deepEqual(rowCells(metrics, 1), ['Metric', 'Value']);
    assert.equal(metrics.rowCount, 1 + metricColumns(results).length);
    assert.deepEqual(rowCells(metrics, 5), ['Avg Throughput (tok/s)', 435]);
    assert.equal(metrics.getRow(5).getCell(2).numFmt, '#,##0.0####');

    // The first sheet: the headline figures, one per row, with their units and the verdict first.
    const overview = sheet('Overview');
    assert.deepEqual(rowCells(overview, 1), ['Figure', 'Value', 'Unit']);
    const figure = (name: string): unknown[] => {
      for (let r = 2; r <= overview.rowCount; r++) if (overview.getRow(r).getCell(1).value === name) return rowCells(overview, r);
      return assert.fail(`no figure ${name}`);
    };
    assert.equal(overview.getRow(2).getCell(1).value, 'Validity');
    assert.deepEqual(figure('Wall-clock throughput'), ['Wall-clock throughput', 435, 'tokens/s']);
    assert.deepEqual(figure('Requests completed'), ['Requests completed', 120, 'requests']);
    assert.deepEqual(figure('Storage written (tool)'), ['Storage written (tool)', 1.25, 'GiB']);

    const qos = sheet('QoS Metrics');
    assert.deepEqual(rowCells(qos, 1), [
      'QoS Level',
      'Total Requests',
      'Latency P95 (ms)',
      'Latency P99 (ms)',
      'SLA Met',
      'SLA Compliance',
    ]);
    assert.equal(qos.rowCount, 3, 'header + the two classes that saw requests');
    assert.deepEqual(rowCells(qos, 2), ['interactive', 30, 150, 190, false, 0.5]);
    assert.deepEqual(rowCells(qos, 3), ['responsive', 90, 90, 99, true, 0.99]);
  });
});

test('run-parameter columns: the reference names and order, its N/A and temp placeholders', () => {
  const when = new Date(2026, 0, 2, 3, 4, 5);
  const machine = machineJson(FIXTURE_MACHINE);
  const cols = runParameterColumns(config('--num-gpus', '2', '--gpu-mem-gb', '24', '--tensor-parallel', '2'), machine, when);
  assert.deepEqual(
    cols.map((c) => c.header),
    RUN_PARAMETER_HEADERS,
  );
  assert.equal(valueOf(cols, 'Timestamp'), '2026-01-02 03:04:05');
  assert.equal(formatTimestamp(when), '2026-01-02 03:04:05');
  assert.equal(valueOf(cols, 'Model'), 'llama3.1-8b');
  assert.equal(valueOf(cols, 'Total GPU Memory (GiB)'), 48);
  assert.equal(valueOf(cols, 'Dataset Path'), 'N/A');
  assert.equal(valueOf(cols, 'Cache Dir'), 'temp');
  assert.equal(valueOf(cols, 'Prefix Caching'), true);
  assert.equal(valueOf(cols, 'RAG Enabled'), false);
  assert.equal(valueOf(cols, 'Precondition Threads'), 6, "0 threads reported as the run machine's CPU count");
  assert.equal(valueOf(runParameterColumns(config('--precondition-threads', '3'), machine, when), 'Precondition Threads'), 3);
});

test('metric columns: the reference names and order, 30 storage-tier columns, then ours; absent → empty', () => {
  const results = fakeResults();
  assertValidResults(JSON.parse(JSON.stringify(results)));
  const cols = metricColumns(results);
  const headers = cols.map((c) => c.header);
  assert.deepEqual(headers.slice(0, 6), [
    'Total Requests',
    'Total Tokens',
    'Elapsed Time (s)',
    'Avg Throughput (tok/s)',
    'Storage Throughput (tok/s)',
    'Requests/sec',
  ]);
  assert.deepEqual(
    headers.slice(6, 12),
    ['Mean', 'P50', 'P95', 'P99', 'P99.9', 'P99.99'].map((s) => `E2E Latency ${s} (ms)`),
  );
  assert.deepEqual(
    headers.slice(18, 22),
    ['Mean', 'P50', 'P95', 'P99'].map((s) => `Gen Latency ${s} (ms)`),
  );
  const tier = headers.filter((h) => h.startsWith('Storage Tier '));
  assert.equal(tier.length, 30);
  assert.deepEqual(tier.slice(0, 2), ['Storage Tier Read Total P50 (ms)', 'Storage Tier Read Total P95 (ms)']);
  assert.equal(tier[5], 'Storage Tier Write Total P50 (ms)');
  assert.equal(tier[10], 'Storage Tier Read Device P50 (ms)');
  assert.equal(tier[29], 'Storage Tier Write Host P99.99 (ms)');
  const afterTier = headers.indexOf('Storage Tier Write Host P99.99 (ms)') + 1;
  assert.deepEqual(headers.slice(afterTier, afterTier + 4), [
    'Cache Hit Rate',
    'Read/Write Ratio',
    'Total Read (GiB)',
    'Total Write (GiB)',
  ]);
  assert.ok(headers.indexOf('Multi-turn Hit Rate') < headers.indexOf('Measured Window (s)'), 'our columns come after the reference ones');
  assert.deepEqual(headers.slice(-9), [
    'Measured Window (s)',
    'Storage Read (bytes)',
    'Storage Written (bytes)',
    'Storage Read (bytes/s)',
    'Storage Write (bytes/s)',
    'Device Read (bytes)',
    'Device Written (bytes)',
    'Stop Reason',
    'Tool Version',
  ]);
  assert.equal(new Set(headers).size, headers.length, 'no duplicate column');
  assert.equal(valueOf(cols, 'E2E Latency P99.9 (ms)'), 400);
  assert.equal(valueOf(cols, 'Storage Tier Read Device P95 (ms)'), 1.5);
  assert.equal(valueOf(cols, 'Storage Tier Write Device P95 (ms)'), null);
  assert.equal(valueOf(cols, 'Tier Storage Write Bandwidth (GiB/s)'), 0.125);
  assert.equal(valueOf(cols, 'Storage Entries'), 42);
  assert.equal(valueOf(cols, 'Multi-turn Hit Rate'), 0.25);
  assert.equal(valueOf(cols, 'Device Read (bytes)'), null);
  assert.equal(valueOf(cols, 'Stop Reason'), 'duration');
  assert.equal(valueOf(cols, 'Tool Version'), '0.1.0');
  const inf = metricColumns({ ...results, summary: { ...summaryOf(results), avg_throughput_tokens_per_sec: Infinity } });
  assert.equal(valueOf(inf, 'Avg Throughput (tok/s)'), null, 'a non-finite number is an empty cell');
});

test('QoS rows: classes with data only; SLA figures under latency, "N/A (throughput mode)" under throughput', () => {
  const results = fakeResults();
  assert.deepEqual(qosRows(results, 'latency'), [
    { level: 'interactive', totalRequests: 30, latencyP95Ms: 150, latencyP99Ms: 190, slaMet: false, slaCompliance: 0.5 },
    { level: 'responsive', totalRequests: 90, latencyP95Ms: 90, latencyP99Ms: 99, slaMet: true, slaCompliance: 0.99 },
  ]);
  const t = qosRows(results, 'throughput');
  assert.equal(t.length, 2);
  for (const r of t) {
    assert.equal(r.slaMet, 'N/A (throughput mode)');
    assert.equal(r.slaCompliance, 'N/A (throughput mode)');
  }
  assert.equal(t[0]?.latencyP95Ms, 150);
  assert.deepEqual(qosRows({ ...results, summary: { ...summaryOf(results), qos_metrics: {} } }, 'latency'), []);
});

test('the throughput profile writes N/A into the QoS sheet of the workbook', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 't.xlsx');
    await writeSpreadsheet(path, fakeResults(), config('--performance-profile', 'throughput'));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    assert.deepEqual(rowCells(wb.getWorksheet('QoS Metrics'), 2), [
      'interactive',
      30,
      150,
      190,
      'N/A (throughput mode)',
      'N/A (throughput mode)',
    ]);
  });
});

test('CSV quoting: commas, quotes, line breaks and edge spaces are quoted; booleans as True/False', async () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(csvField(' padded'), '" padded"');
  assert.equal(csvField(null), '');
  assert.equal(csvField(1.5), '1.5');
  assert.equal(csvField(false), 'False');
  const cols: Column[] = [
    { header: 'Cache Dir', value: '/mnt/a,b/"c"' },
    { header: 'Note', value: 'x\ny' },
    { header: 'N', value: 3 },
  ];
  assert.deepEqual(parseCsv(summaryCsv(cols)), [
    ['Cache Dir', 'Note', 'N'],
    ['/mnt/a,b/"c"', 'x\ny', '3'],
  ]);
  await withTempDir(async (dir) => {
    const cacheDir = join(dir, 'odd, "name"');
    const path = join(dir, 's.csv');
    await writeSpreadsheet(path, fakeResults(), config('--cache-dir', cacheDir, '--create-cache-dir'));
    const [header, data] = parseCsv(await readFile(path, 'utf8')) as [string[], string[]];
    assert.equal(header.length, data.length);
    assert.equal(data[header.indexOf('Cache Dir')], cacheDir);
  });
});

test('a failed write leaves no file and no temp file; an existing file is replaced whole', async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(writeSpreadsheet(join(dir, 'missing', 's.xlsx'), fakeResults(), config()));
    await assert.rejects(writeSpreadsheet(join(dir, 'missing', 's.csv'), fakeResults(), config()));
    assert.deepEqual(await readdir(dir), []);
    const path = join(dir, 's.csv');
    await writeFile(path, 'old content that is longer than nothing\n'.repeat(1000));
    await writeSpreadsheet(path, fakeResults(), config());
    assert.equal(parseCsv(await readFile(path, 'utf8')).length, 2);
    assert.deepEqual(await readdir(dir), ['s.csv']);
  });
});

test('kv-cache: an unwritable --xlsx-output is rejected at startup; a run writes the spreadsheet and says so', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const asDir = join(dir, 'a-directory.xlsx');
    await mkdir(asDir);
    const bad = await runCli(['--model', 'tiny-1b', '--output', out, '--xlsx-output', asDir]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--xlsx-output .* is a directory/);
    assert.doesNotMatch(bad.stderr, /not implemented/);

    const sheet = join(dir, 'sub', 's.xlsx');
    const args = [
      '--model',
      'tiny-1b',
      '--generation-mode',
      'none',
      '--no-progress',
      '--num-users',
      '2',
      '--duration',
      '1',
      '--max-requests',
      '4',
    ];
    const r = await runCli([
      ...args,
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0',
      '--cache-dir',
      join(dir, 'cache'),
      '--create-cache-dir',
      '--seed',
      '1',
      '--output',
      out,
      '--xlsx-output',
      sheet,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Spreadsheet saved to ${sheet.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(sheet);
    const results = await readValidResults(out);
    const summary = wb.getWorksheet('Summary');
    assert.ok(summary !== undefined);
    const headers = rowCells(summary, 1);
    assert.equal(summary.getRow(2).getCell(headers.indexOf('Model') + 1).value, 'tiny-1b');
    assert.equal(summary.getRow(2).getCell(headers.indexOf('Total Requests') + 1).value, results.summary.total_requests);
  });
});
