// End-to-end: `kv-cache aggregate` over a directory holding a real short run's results (twice, under
// two names), a replay-like file and a broken one; its bad inputs (exit 2, nothing written); and the
// reference's json_to_xlsx.py reading of the same results file, reproduced by a standard-library
// Python script (test/fixtures/json_to_xlsx_reader.py): every key it reads is there with a number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { inTempDir, QUICK_RUN, runCli, SMALL_USERS } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';
import { parseCsv } from '../util/csv.js';
import { roundFor } from '../../src/report/rounding.js';
import { SCHEMA_VERSION } from '../../src/report/results-schema.js';

const READER = fileURLToPath(new URL('../../../test/fixtures/json_to_xlsx_reader.py', import.meta.url));

function python3(): string | undefined {
  const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? 'python3' : undefined;
}

test('aggregate: one row per run (sorted), skipped files with reasons; json_to_xlsx.py reads the JSON unchanged', async () => {
  await inTempDir(async (dir) => {
    const config = join(dir, 'small.yaml');
    await writeFile(config, SMALL_USERS);
    const runs = join(dir, 'runs');
    const out = join(runs, 'b-run.json');
    const run = await runCli([...QUICK_RUN, '--config', config, '--duration', '2', '--seed', '3', '--output', out]);
    assert.equal(run.code, 0, run.stderr);
    const doc = await readValidResults(out);
    await copyFile(out, join(runs, 'a-run.json'));
    await writeFile(join(runs, 'broken.json'), '{"summary": {');
    await writeFile(join(runs, 'notes.txt'), 'not a json file: not looked at');

    const csvPath = join(dir, 'out', 'summary.csv');
    const r = await runCli(['aggregate', runs, '-o', csvPath]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Skipped .*broken\.json: not JSON: /m);
    assert.match(r.stdout, /Aggregated 2 results file\(s\) \(1 skipped\) into .*summary\.csv\n$/);
    const cells = parseCsv(await readFile(csvPath, 'utf8')).filter((r) => r.length > 1);
    assert.equal(cells.length, 3);
    assert.deepEqual(
      cells.slice(1).map((c) => c[0]),
      [join(runs, 'a-run.json'), join(runs, 'b-run.json')],
    );
    const col = (h: string): string => cells[1][cells[0].indexOf(h)];
    // json_to_xlsx.py's Storage Throughput: root-level tokens ÷ summed I/O time, here to 3 significant digits.
    assert.equal(Number(col('Storage Throughput (tok/s)')), roundFor('rate', doc.total_tokens_generated / doc.total_storage_io_latency));
    assert.equal(Number(col('Total Requests')), doc.summary.total_requests);
    assert.equal(col('I/O Mode'), 'direct');
    assert.equal(col('Validity'), doc.kvcache_bench.validity.valid ? 'VALID' : 'NOT VALID');
    assert.equal(col('Schema Version'), SCHEMA_VERSION);

    const xlsxPath = join(dir, 'summary.xlsx');
    assert.equal((await runCli(['aggregate', runs, '-o', xlsxPath])).code, 0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsxPath);
    const ws = wb.getWorksheet('Summary');
    assert.ok(ws !== undefined);
    assert.equal(ws.rowCount, 3);
    assert.equal(ws.getRow(3).getCell(1).value, join(runs, 'b-run.json'));
    assert.equal(ws.getRow(2).getCell(8).value, doc.summary.total_requests); // Total Requests, a number

    const py = python3();
    if (py === undefined) {
      console.log('# skipped the json_to_xlsx.py reading: python3 is not installed here (CI has it)');
      return;
    }
    const reading = JSON.parse(execFileSync(py, [READER, out], { encoding: 'utf8' })) as {
      missing: string[];
      row: Record<string, number | string | null>;
    };
    assert.deepEqual(reading.missing, [], 'every key json_to_xlsx.py reads is there with a number');
    assert.equal(Object.keys(reading.row).length, 75);
    assert.equal(reading.row['Storage Throughput (tok/s)'], doc.total_tokens_generated / doc.total_storage_io_latency);
    assert.equal(reading.row['Tier Storage Read Bandwidth (GiB/s)'], doc.summary.cache_stats.tier_storage_read_bandwidth_gbps);
  });
});

test('aggregate: bad arguments and no results are exit 2 with one message, nothing written', async () => {
  await inTempDir(async (dir) => {
    const missing = await runCli(['aggregate', join(dir, 'nope'), '-o', join(dir, 's.ods')]);
    assert.equal(missing.code, 2);
    assert.equal(
      missing.stderr,
      [
        'kv-cache aggregate: error: Invalid configuration (2 problems):',
        `  - ${join(dir, 'nope')}: no such directory`,
        `  - --output ${join(dir, 's.ods')}: give a path ending in .xlsx or .csv`,
        'Usage: kv-cache aggregate DIR… [-o FILE]',
        '',
      ].join('\n'),
    );
    const none = await runCli(['aggregate']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /give at least one directory \(DIR\), got 0\nUsage: kv-cache aggregate DIR… \[-o FILE\]\n$/);
    await writeFile(join(dir, 'x.json'), '{"a": 1}');
    const empty = await runCli(['aggregate', dir, '-o', join(dir, 's.xlsx')]);
    assert.equal(empty.code, 2);
    assert.equal(empty.stdout, `Skipped ${join(dir, 'x.json')}: not a kv-cache results file (no 'summary' object)\n`);
    assert.equal(empty.stderr, `kv-cache aggregate: error: no run results found in ${dir} (*.json files with a 'summary')\n`);
    const flag = await runCli(['aggregate', dir, '--bogus']);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /unknown option '--bogus'/);
    assert.deepEqual(await readdir(dir), ['x.json'], 'nothing written');
  });
});
