// `kv-cache aggregate`'s table: the reference's json_to_xlsx.py columns first, in its order, then ours;
// which files are rows and which are skipped, with their reasons.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ExcelJS from 'exceljs';
import {
  REPLAY_CELLS,
  SUMMARY_OPTION_CELLS,
  AGGREGATE_COLUMNS,
  aggregateBytes,
  aggregateFormatOf,
  aggregateTable,
  REFERENCE_COLUMN_COUNT,
} from '../../src/report/aggregate.js';
import type { FoundFile } from '../../src/report/aggregate.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { SCHEMA_VERSION } from '../../src/report/results-schema.js';
import { kindOfHeader, roundFor } from '../../src/report/rounding.js';
import { MetadataStats } from '../../src/metrics/metadata-stats.js';
import { runResultFixture } from './fixtures.js';
import { replayDoc, summaryDoc } from './html/docs.js';

/** The fixture run's results (4 requests, 400 tokens, 2 s of summed storage I/O time) as a file's text. */
function fixtureText(edit: (doc: Record<string, unknown> & ReturnType<typeof buildResultsJson>) => void = () => undefined): string {
  const doc = JSON.parse(JSON.stringify(buildResultsJson(runResultFixture()))) as Record<string, unknown> &
    ReturnType<typeof buildResultsJson>;
  edit(doc);
  return JSON.stringify(doc);
}

const headers = AGGREGATE_COLUMNS.map(([h]) => h);
const rounded = (header: string, v: number): unknown => roundFor(kindOfHeader(header), v);

test('columns: json_to_xlsx.py order (Filename, the three I/O-time columns, the summary), then ours', () => {
  assert.equal(REFERENCE_COLUMN_COUNT, 75);
  assert.deepEqual(headers.slice(0, 9), [
    'Filename',
    'Storage Throughput (tok/s)',
    'Storage Requests/sec',
    'Total I/O Time (s)',
    'Avg Throughput (tok/s)',
    'Requests/sec',
    'Total Tokens',
    'Total Requests',
    'Elapsed Time (s)',
  ]);
  // Per tier, bytes written then read (json_to_xlsx.py's order, unlike the per-run sheet's).
  const tierBytes = headers.indexOf('Tier GPU KV Bytes Written (GiB)');
  assert.deepEqual(headers.slice(tierBytes, tierBytes + 3), [
    'Tier GPU KV Bytes Written (GiB)',
    'Tier GPU KV Bytes Read (GiB)',
    'Tier CPU KV Bytes Written (GiB)',
  ]);
  assert.equal(headers[REFERENCE_COLUMN_COUNT - 1], 'Multi-turn Hit Rate');
  assert.deepEqual(headers.slice(REFERENCE_COLUMN_COUNT), [
    'I/O Mode',
    'File System',
    'Device',
    'Storage Read (bytes/s)',
    'Storage Write (bytes/s)',
    'Device Read (bytes)',
    'Device Written (bytes)',
    'Validity',
    'Validity Reasons',
    'Stop Reason',
    'Trials Completed',
    'Storage Bytes/s CV',
    'Requests/sec CV',
    'Avg Throughput CV',
    'Storage Read Device P95 CV',
    'Storage Write Device P95 CV',
    'E2E P95 CV',
    'KV Block Tokens',
    'Token Hit Rate',
    'Storage Token Hit Rate',
    'Ideal Token Hit Rate',
    'Block Reads/sec',
    'Block Writes/sec',
    'KV Pool',
    'Route',
    "Trace's Own Token Hit Rate",
    'Pool Hit Rate Own',
    'Pool Hit Rate Other Rank',
    'Pool Hit Rate Earlier Run',
    'Pool Lookups/sec',
    'Pool Lookup P95 ms',
    'Pool Publish Races',
    'Metadata Ops/sec',
    'Metadata Ops/GiB',
    'Metadata Create P95 (ms)',
    'Metadata Unlink P95 (ms)',
    'Schema Version',
    'Tool Version',
    'Modelled TTFT GPU Profile',
    'Modelled TTFT MFU',
    'Modelled TTFT Offload P50 (ms)',
    'Modelled TTFT Offload P99 (ms)',
    'Modelled TTFT Recompute P50 (ms)',
    'Modelled TTFT Recompute P99 (ms)',
    'Modelled TTFT Speedup P5 Ratio',
    'Modelled TTFT Speedup P50 Ratio',
    'Modelled TTFT Offload Lost Rate',
    'Modelled TTFT Hits Read (bytes/s)',
    'Modelled TTFT Break-even Read (bytes/s)',
  ]);
  assert.equal(new Set(headers).size, headers.length, 'no duplicate column');
});

test('rows sorted by filename with rounded values; non-results, unreadable files and listed trials skipped', () => {
  const files: FoundFile[] = [
    {
      path: 'd/b.json',
      text: fixtureText((d) => {
        d.kvcache_bench.trials = {
          completed: 3,
          runs: [{ file: '/elsewhere/b.trial-1.json' }, { file: 'b.trial-2.json' }],
          stats: { storage_bytes_per_sec: { cv: 0.123456 }, end_to_end_p95_ms: { cv: null } },
        } as never;
      }),
    },
    { path: 'd/b.trial-1.json', text: fixtureText() },
    { path: 'e/b.trial-2.json', text: fixtureText() }, // another directory: not the listed trial
    { path: 'd/a.json', text: fixtureText((d) => (d.total_storage_io_latency = 0)) },
    { path: 'd/other.json', text: '[1, 2]' },
    { path: 'd/bad.json', text: '{"summary": ' },
    { path: 'd/locked.json', unreadable: 'EACCES: permission denied' },
  ];
  const t = aggregateTable(files);
  assert.deepEqual(
    t.rows.map((r) => r[0]),
    ['d/a.json', 'd/b.json', 'e/b.trial-2.json'],
  );
  assert.deepEqual(t.skipped, [
    { path: 'd/b.trial-1.json', reason: 'a trial of d/b.json, which holds its figures (trials columns)' },
    { path: 'd/bad.json', reason: `not JSON: ${errorOf('{"summary": ')}` },
    { path: 'd/locked.json', reason: 'unreadable: EACCES: permission denied' },
    { path: 'd/other.json', reason: 'not a kv-cache results file (the JSON is not an object)' },
  ]);
  const value = (row: number, header: string): unknown => t.rows[row][headers.indexOf(header)];
  // json_to_xlsx.py's formulas from the root-level totals: 400 tokens and 4 requests over 2 s of I/O.
  assert.deepEqual(
    ['Storage Throughput (tok/s)', 'Storage Requests/sec', 'Total I/O Time (s)'].map((h) => value(1, h)),
    [200, 2, 2],
  );
  // No I/O time: empty cells, as its None.
  assert.deepEqual(
    ['Storage Throughput (tok/s)', 'Storage Requests/sec', 'Total I/O Time (s)'].map((h) => value(0, h)),
    [null, null, 0],
  );
  assert.equal(value(1, 'Cache Hit Rate'), 0.75);
  assert.equal(value(1, 'E2E Latency P95 (ms)'), 1.5);
  assert.equal(value(1, 'Device'), 'nvme9n1 (Test NVMe 1TB)');
  assert.equal(value(1, 'I/O Mode'), 'direct');
  assert.equal(value(1, 'Validity'), 'NOT VALID');
  assert.equal(value(1, 'Validity Reasons'), 'run_too_short, too_few_samples');
  assert.equal(value(1, 'Trials Completed'), 3);
  assert.equal(value(1, 'Storage Bytes/s CV'), 0.1235, 'a ratio to 4 decimals');
  assert.equal(value(1, 'E2E P95 CV'), null);
  assert.equal(value(0, 'Trials Completed'), null, 'no trials: empty');
  assert.equal(value(1, 'Schema Version'), SCHEMA_VERSION);
});

function errorOf(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  return '';
}

test('a reference-written file (no kvcache_bench) is a row with our columns empty', () => {
  const t = aggregateTable([
    {
      path: 'ref.json',
      text: JSON.stringify({
        requests_completed: 10,
        total_tokens_generated: 500,
        total_storage_io_latency: 4,
        summary: { total_requests: 10 },
      }),
    },
  ]);
  const row = t.rows[0];
  assert.deepEqual(row.slice(0, 4), ['ref.json', 125, 2.5, 4]);
  assert.equal(row[headers.indexOf('Total Tokens')], 500, "json_to_xlsx.py's fallback to the root-level total");
  assert.ok(row.slice(REFERENCE_COLUMN_COUNT).every((v) => v === null));
});

test('the sheet: bold frozen header, numbers with formats; CSV through exceljs', async () => {
  const t = aggregateTable([{ path: 'd/a.json', text: fixtureText() }]);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load((await aggregateBytes(t, 'xlsx')).buffer as ArrayBuffer);
  const ws = wb.getWorksheet('Summary')!;
  assert.equal(ws.rowCount, 2);
  assert.equal(ws.getRow(1).getCell(2).value, 'Storage Throughput (tok/s)');
  assert.equal(ws.getRow(2).getCell(2).value, 200);
  assert.equal(ws.getRow(2).getCell(2).numFmt, '#,##0.0####');
  assert.equal(ws.getRow(2).getCell(headers.indexOf('Cache Hit Rate') + 1).numFmt, '0.0000');
  const csv = new TextDecoder().decode(await aggregateBytes(t, 'csv')).split('\n');
  assert.equal(csv[0].split(',').slice(0, 3).join(','), 'Filename,Storage Throughput (tok/s),Storage Requests/sec');
  assert.equal(csv[1].split(',').slice(0, 4).join(','), 'd/a.json,200,2,2');
  assert.deepEqual(['a.XLSX', 'a.csv', 'a.json', 'a'].map(aggregateFormatOf), ['xlsx', 'csv', undefined, undefined]);
});

test('every column a replay or a summary option fills is a column of the table', () => {
  for (const h of [...Object.keys(REPLAY_CELLS), ...Object.keys(SUMMARY_OPTION_CELLS)]) assert.ok(headers.includes(h), h);
});

test('a replay is a row of what it records; a merged summary a row per option; the mlperf manifest is skipped by name', () => {
  const replay = replayDoc();
  const summary = summaryDoc();
  const t = aggregateTable([
    { path: 'd/replay.json', text: JSON.stringify(replay) },
    { path: 'd/sum.json', text: JSON.stringify(summary) },
    { path: 'd/run.json', text: JSON.stringify({ run_datetime: 'x', total_ranks: 2, options: [1], hosts: ['vm'] }) },
  ]);
  assert.equal(t.files, 2);
  assert.deepEqual(
    t.rows.map((r) => r[0]),
    ['d/replay.json', 'd/sum.json option 1', 'd/sum.json option 2'],
  );
  assert.deepEqual(t.skipped, [
    {
      path: 'd/run.json',
      reason:
        'the plan manifest of a kv-cache mlperf run (run.json): it holds no results; give its kvcache_run_summary_*.json or its rank files (option_*/trial_*/rank_*/*.json)',
    },
  ]);
  const filled = (row: number): Record<string, unknown> =>
    Object.fromEntries(headers.flatMap((h, i) => (t.rows[row][i] === null ? [] : [[h, t.rows[row][i]]])));
  const cs = replay.summary.cache_stats;
  const r = filled(0);
  // 10 MiB read and 4 MiB written over 2 s; no request, token, hit-rate or verdict cell.
  assert.equal(r['Storage Read (bytes/s)'], rounded('Storage Read (bytes/s)', (10 * 1024 * 1024) / 2));
  assert.equal(r['Storage Write (bytes/s)'], rounded('Storage Write (bytes/s)', (4 * 1024 * 1024) / 2));
  assert.equal(r['Elapsed Time (s)'], 2);
  assert.equal(r['Storage Tier Read Device P95 (ms)'], cs.storage_read_device_p95_ms);
  assert.deepEqual(
    [r['I/O Mode'], r['File System'], r['Stop Reason'], r['Schema Version']],
    ['direct', 'ext4', 'workload_complete', SCHEMA_VERSION],
  );
  for (const h of ['Total I/O Time (s)', 'Total Requests', 'Avg Throughput (tok/s)', 'Cache Hit Rate', 'Validity'])
    assert.equal(r[h], undefined, h);
  const o = filled(1);
  assert.deepEqual(o, {
    Filename: 'd/sum.json option 1',
    'Avg Throughput (tok/s)': 80,
    'Storage Tier Read Device P50 (ms)': 1.25,
    'Storage Tier Read Device P95 (ms)': 1.25,
    'Storage Tier Read Device P99 (ms)': 1.25,
    'Storage Tier Read Device P99.9 (ms)': 1.25,
    'Storage Tier Write Device P50 (ms)': 1.5,
    'Storage Tier Write Device P95 (ms)': 1.5,
    'Storage Tier Write Device P99 (ms)': 1.5,
    'Storage Tier Write Device P99.9 (ms)': 1.5,
    'Tier Storage Read Bandwidth (GiB/s)': 0.8,
    'Tier Storage Write Bandwidth (GiB/s)': 0.6,
    'Storage Read (bytes/s)': rounded('Storage Read (bytes/s)', summary.options['1'].kvcache_bench.storage_read_bytes_per_sec),
    'Storage Write (bytes/s)': rounded('Storage Write (bytes/s)', summary.options['1'].kvcache_bench.storage_write_bytes_per_sec),
    Validity: 'NOT VALID',
    'Trials Completed': 1,
  });
});

test('metadata columns: calls per second and per GiB, create and unlink p95; empty without the block or without a call', () => {
  const stats = new MetadataStats();
  for (const ms of [0.5, 0.5, 1, 2]) stats.record('create', ms, true);
  for (const ms of [0.25, 0.75]) stats.record('unlink', ms, true);
  const doc = JSON.parse(JSON.stringify(buildResultsJson({ ...runResultFixture(), metadataOps: stats.snapshot() }))) as unknown;
  const lookups = new MetadataStats();
  lookups.record('lookup', 1, true);
  const noCreate = JSON.parse(JSON.stringify(buildResultsJson({ ...runResultFixture(), metadataOps: lookups.snapshot() }))) as unknown;
  const t = aggregateTable([
    { path: 'a.json', text: JSON.stringify(doc) },
    { path: 'b.json', text: fixtureText() },
    { path: 'c.json', text: JSON.stringify(noCreate) },
  ]);
  const cols = ['Metadata Ops/sec', 'Metadata Ops/GiB', 'Metadata Create P95 (ms)', 'Metadata Unlink P95 (ms)'];
  const values = t.rows.map((r) => cols.map((h) => r[headers.indexOf(h)]));
  // 6 calls over the 10 s window and the 7 GiB the fixture's storage tier moved.
  assert.deepEqual(values, [
    [0.6, 0.857, 2, 0.75],
    [null, null, null, null],
    [0.1, 0.143, null, null],
  ]);
  // A merged option's block (mlperf/merge-metadata.ts): pooled percentiles under latency.
  const option = {
    kvcache_bench: {
      metadata_ops: {
        per_second: 2,
        per_gib_moved: 3,
        create: { count: 1, latency: { p95_ms: 0.5 } },
        unlink: { count: 0, latency: { p95_ms: null } },
      },
    },
  };
  assert.deepEqual(
    cols.map((h) => SUMMARY_OPTION_CELLS[h]?.(option, 's.json')),
    [2, 3, 0.5, null],
  );
});
