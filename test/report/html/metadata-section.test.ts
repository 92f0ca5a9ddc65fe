// The HTML report's metadata section and the compare table's metadata rows (issue 34): exact rows per
// class used and the sum, a run column when several files are compared, a file without the block named
// in a note (never drawn as zeros), and per GiB / p95 side by side with ratios. Beside them the
// calibration's table: bytes per new file before and after the window, the verdict's allowance, the
// files it was allowed for and the bytes that makes, older files' gaps said in words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataStats } from '../../../src/metrics/metadata-stats.js';
import type { MetadataCalibration } from '../../../src/metrics/result.js';
import { formatCompareTable } from '../../../src/report/html/compare-table.js';
import { metadataFigures } from '../../../src/report/html/metadata-figures.js';
import { buildReportModel } from '../../../src/report/html/model.js';
import { buildResultsJson } from '../../../src/report/results-json.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';
import { runResultFixture } from '../fixtures.js';
import { fixtureDoc, loaded } from './docs.js';

/** The fixture run (10 s, 7 GiB moved) with `creates` creates of 1 ms and `unlinks` unlinks of 0.5 ms, and a calibration if given. */
function docWith(creates: number, unlinks: number, calibration?: MetadataCalibration): ResultsDocument {
  const s = new MetadataStats();
  for (let i = 0; i < creates; i++) s.record('create', 1, true);
  for (let i = 0; i < unlinks; i++) s.record('unlink', 0.5, true);
  const run = {
    ...runResultFixture(),
    metadataOps: s.snapshot(),
    ...(calibration !== undefined ? { metadataCalibration: calibration } : {}),
  };
  return JSON.parse(JSON.stringify(buildResultsJson(run))) as ResultsDocument;
}

/** A flat calibration of 8 KiB per new file before the window, 12 KiB among the run's entries after it. */
const GROWN: MetadataCalibration = {
  layout: 'flat',
  filesPerRound: 128,
  fileBytes: 16_384,
  roundsBytesPerFile: [9216, 8192, 8704],
  bytesPerNewFile: 8192,
  roundsBytesPerFileInNewDir: null,
  bytesPerNewDir: null,
  disturbed: false,
  seconds: 0.3,
  afterWindow: { fileBytes: 16_384, roundsBytesPerFile: [12_288, 13_312, 12_800], bytesPerNewFile: 12_288, disturbed: false, seconds: 0.4 },
};

const NOT_CALIBRATED =
  'File-system metadata calibration: not recorded (made for the flat and fanout layouts on a block device, by files of schema 2.8.0 or later).';

const sectionOf = (docs: ReadonlyArray<[ResultsDocument, string]>) => {
  const s = buildReportModel(docs.map(([d, name]) => loaded(d, name))).sections.find((x) => x.id === 'metadata-ops');
  assert.ok(s !== undefined);
  return s;
};

test('one run: a row per class used and their sum, latencies per class', () => {
  const s = sectionOf([[docWith(70, 14), 'a.json']]);
  assert.equal(s.tables.length, 1);
  const t = s.tables[0];
  assert.deepEqual(t.header, ['operation', 'count', 'failed', 'per second', 'per GiB moved', 'p50', 'p95', 'p99', 'p99.9', 'max']);
  assert.deepEqual(t.rows, [
    ['create', '70', '0', '7.0', '10.0', '1.000', '1.000', '1.000', '1.000', '1.000'],
    ['unlink', '14', '0', '1.4', '2.0', '0.500', '0.500', '0.500', '0.500', '0.500'],
    ['all', '84', '0', '8.4', '12.0', '', '', '', '', ''],
  ]);
  assert.equal(s.notes.length, 2);
  assert.equal(s.notes[1], NOT_CALIBRATED, 'a run without a calibration says so in one line, no table');
});

test('several runs: a run column; a file before 2.8.0 and a run without calls are named, not drawn as zeros', () => {
  const s = sectionOf([
    [docWith(7, 0), 'flat.json'],
    [docWith(0, 0), 'slab.json'],
    [fixtureDoc(), 'old.json'],
  ]);
  assert.deepEqual(
    s.tables[0]?.rows.map((r) => r.slice(0, 3)),
    [
      ['flat.json', 'create', '7'],
      ['flat.json', 'all', '7'],
    ],
  );
  assert.equal(s.tables[0]?.header[0], 'run');
  assert.deepEqual(s.notes.slice(1), [
    'No metadata call in the measured window: slab.json (a slab pool, the memory backend).',
    'Metadata operations not recorded in old.json.',
    NOT_CALIBRATED,
  ]);
});

test('no file records them: a note and no table', () => {
  const s = sectionOf([[fixtureDoc(), 'old.json']]);
  assert.deepEqual(s.tables, []);
  assert.deepEqual(s.notes, ['Metadata operations: not recorded (trace mode, or a results file before schema 2.8.0).', NOT_CALIBRATED]);
});

test('calibration, one run: KiB per new file before and after the window, the larger allowed for the files created, in MiB', () => {
  const s = sectionOf([[docWith(1280, 0, GROWN), 'flat.json']]);
  const t = s.tables.find((x) => x.id === 'metadata-calibration');
  assert.ok(t !== undefined);
  assert.deepEqual(t.header, [
    'layout',
    'per new file before the window (KiB)',
    'per new file after the window (KiB)',
    'allowed per new file by the verdict (KiB)',
    'new files in the window',
    'metadata allowed on the device (MiB)',
    'disturbed',
  ]);
  // 1,280 files × 12 KiB = 15 MiB.
  assert.deepEqual(t.rows, [['flat', '8.0', '12.0', '12.0', '1280', '15.00', 'no']]);
  assert.match(s.notes.at(-1) ?? '', /^Metadata calibration: .* the verdict allows the larger/);
});

test('calibration, several runs: disturbed, not made after the window, a file before 2.10.0, and a run without one named', () => {
  const busy: MetadataCalibration = {
    ...GROWN,
    roundsBytesPerFile: [204_800, 200_000, 250_000],
    bytesPerNewFile: 200_000,
    disturbed: true,
  };
  const { afterWindow: _after, ...noAfter } = GROWN;
  // Schema 2.9: no after_window, no allowed_bytes_per_new_file; fanout with its directories counted apart.
  const old = docWith(100, 0, { ...noAfter, layout: 'fanout', bytesPerNewDir: 4096, roundsBytesPerFileInNewDir: [12_288, 13_000, 12_500] });
  const oldBusy = docWith(100, 0, busy);
  for (const d of [old, oldBusy]) {
    const c = d.kvcache_bench.metadata_calibration;
    assert.ok(c !== undefined);
    delete c.after_window;
    delete c.allowed_bytes_per_new_file;
  }
  const s = sectionOf([
    [docWith(1280, 0, GROWN), 'flat.json'],
    [docWith(1280, 0, { ...busy, afterWindow: { ...GROWN.afterWindow!, bytesPerNewFile: 300_000, disturbed: true } }), 'busy.json'],
    [docWith(1280, 0, noAfter), 'full.json'],
    [old, 'old.json'],
    [oldBusy, 'old-busy.json'],
    [docWith(7, 0), 'slab.json'],
  ]);
  const t = s.tables.find((x) => x.id === 'metadata-calibration');
  assert.equal(t?.header[0], 'run');
  assert.deepEqual(t?.rows, [
    ['flat.json', 'flat', '8.0', '12.0', '12.0', '1280', '15.00', 'no'],
    ['busy.json', 'flat', '195.3', '293.0 (disturbed: not used)', '0.0', '1280', 'none (disturbed)', 'yes'],
    ['full.json', 'flat', '8.0', 'not made', '8.0', '1280', '10.00', 'no'],
    // The allowance of a file before 2.10.0 is the verdict's rule on what it records: the one figure.
    ['old.json', 'fanout', '8.0', 'not in this file (before 2.10.0)', '8.0', '100', '0.78', 'no'],
    ['old-busy.json', 'flat', '195.3', 'not in this file (before 2.10.0)', '0.0', '100', 'none (disturbed)', 'yes'],
  ]);
  assert.deepEqual(s.notes.slice(-2), [
    'old.json: also 4.0 KiB per new directory × 0 directories (before 2.10.0), within its allowed bytes.',
    'Metadata calibration not recorded in slab.json.',
  ]);
});

test('compare: per GiB and p95 of each class any file used, the sum per GiB, ratios against #1', () => {
  const runs = [loaded(docWith(70, 14), 'a.json'), loaded(docWith(140, 0), 'b.json'), loaded(fixtureDoc(), 'old.json')];
  assert.deepEqual(
    metadataFigures(runs).map((f) => f.key),
    ['metadata_create_per_gib', 'metadata_create_p95', 'metadata_unlink_per_gib', 'metadata_unlink_p95', 'metadata_per_gib'],
  );
  const text = formatCompareTable(runs).split('\n');
  const at = text.findIndex((l) => l.startsWith('Metadata operations (storage tier'));
  assert.ok(at > 0);
  const rows = text.slice(at + 2, at + 7).map((l) => l.split(/\s{2,}/));
  assert.deepEqual(rows, [
    ['Creates per GiB moved', '/GiB', '10.0', '20.0', 'n/a', '×2.00'],
    ['Create p95', 'ms', '1.000', '1.000', 'n/a', '×1.00'],
    ['Unlinks per GiB moved', '/GiB', '2.0', '0.0', 'n/a', '×0.00'],
    ['Unlink p95', 'ms', '0.500', 'n/a', 'n/a'],
    ['Metadata ops per GiB moved', '/GiB', '12.0', '20.0', 'n/a', '×1.67'],
  ]);
  assert.deepEqual(metadataFigures([loaded(fixtureDoc(), 'old.json')]), [], 'no table without a call');
});
