// The HTML report's metadata section and the compare table's metadata rows (issue 34): exact rows per
// class used and the sum, a run column when several files are compared, a file without the block named
// in a note (never drawn as zeros), and per GiB / p95 side by side with ratios.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataStats } from '../../../src/metrics/metadata-stats.js';
import { formatCompareTable } from '../../../src/report/html/compare-table.js';
import { metadataFigures } from '../../../src/report/html/metadata-figures.js';
import { buildReportModel } from '../../../src/report/html/model.js';
import { buildResultsJson } from '../../../src/report/results-json.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';
import { runResultFixture } from '../fixtures.js';
import { fixtureDoc, loaded } from './docs.js';

/** The fixture run (10 s, 7 GiB moved) with `creates` creates of 1 ms and `unlinks` unlinks of 0.5 ms. */
function docWith(creates: number, unlinks: number): ResultsDocument {
  const s = new MetadataStats();
  for (let i = 0; i < creates; i++) s.record('create', 1, true);
  for (let i = 0; i < unlinks; i++) s.record('unlink', 0.5, true);
  return JSON.parse(JSON.stringify(buildResultsJson({ ...runResultFixture(), metadataOps: s.snapshot() }))) as ResultsDocument;
}

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
  assert.equal(s.notes.length, 1);
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
  ]);
});

test('no file records them: a note and no table', () => {
  const s = sectionOf([[fixtureDoc(), 'old.json']]);
  assert.deepEqual(s.tables, []);
  assert.deepEqual(s.notes, ['Metadata operations: not recorded (trace mode, or a results file before schema 2.8.0).']);
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
