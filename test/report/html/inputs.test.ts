// Every file the tool writes goes into `kv-cache report` and `compare`: runs, replays (their own
// figures, n/a for what a replay does not record, no verdict) and each option of a merged MLPerf
// summary; the mlperf manifest and a summary of another major version are refused by name.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { SUMMARY_SCHEMA_VERSION } from '../../../src/mlperf/merge.js';
import { compareFigures, formatCompareTable } from '../../../src/report/html/compare-table.js';
import { entryVerdict } from '../../../src/report/html/headline.js';
import { isOption, isReplay, isRun, loadInputs, parseInputText, runsOf } from '../../../src/report/html/inputs.js';
import type { LoadedInput } from '../../../src/report/html/inputs.js';
import { ReportInputError } from '../../../src/report/html/run-input.js';
import { ReportSummarySchema, SUMMARY_VERSION_READ } from '../../../src/report/html/summary-input.js';
import { GiB, MiB } from '../../../src/util/units.js';
import { withTempDir } from '../../util/temp-dir.js';
import { fixtureDoc, replayDoc, summaryDoc } from './docs.js';

/** Writes each document as its own file and loads them as `kv-cache report` does. */
async function loadDocs(docs: Record<string, unknown>): Promise<LoadedInput[]> {
  return withTempDir(async (dir) => {
    const paths: string[] = [];
    for (const [name, doc] of Object.entries(docs)) {
      const path = join(dir, name);
      await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
      paths.push(path);
    }
    return loadInputs(paths).map((i) => ({ ...i, path: i.path.slice(dir.length + 1) }));
  });
}

const problemOf = (text: string): string => {
  try {
    parseInputText(text, 'x.json');
  } catch (e) {
    assert.ok(e instanceof ReportInputError);
    return e.message;
  }
  assert.fail('parsed');
};

test('the summary schema reads what kv-cache merge writes, at the version merge writes', () => {
  assert.equal(SUMMARY_VERSION_READ, SUMMARY_SCHEMA_VERSION);
  const parsed = ReportSummarySchema.parse(summaryDoc());
  assert.deepEqual(Object.keys(parsed.options), ['1', '2']);
  assert.equal(parsed.options['2'].missing_files.length, 1);
});

test('a run, a replay and a summary load as entries in order: the summary one per option, labelled by kind', async () => {
  const inputs = await loadDocs({ 'run.json': fixtureDoc(), 'replay.json': replayDoc(), 'sum.json': summaryDoc() });
  assert.deepEqual(
    inputs.map((i) => [i.label, isRun(i), isReplay(i), isOption(i)]),
    [
      ['run.json (direct, 4 users)', true, false, false],
      ['replay.json (replay, direct)', false, true, false],
      ['sum.json option 1 (2 ranks)', false, false, true],
      ['sum.json option 2 (3 ranks)', false, false, true],
    ],
  );
  // The run sections see the run with its place among all the entries (#1 here).
  assert.deepEqual(
    runsOf(inputs).map((r) => r.position),
    [0],
  );
});

test('compare: a replay has its bandwidth, latency and device figures; requests, tokens and hit rate are n/a, without a ratio', async () => {
  const inputs = await loadDocs({ 'run.json': fixtureDoc(), 'replay.json': replayDoc() });
  const byKey = new Map(compareFigures(inputs).map((f) => [f.figure.key, f.values[1]]));
  const replay = replayDoc();
  assert.equal(byKey.get('storage_read_gib_per_sec')?.value, (10 * MiB) / 2 / GiB);
  assert.equal(byKey.get('storage_write_gib_per_sec')?.value, (4 * MiB) / 2 / GiB);
  assert.equal(byKey.get('storage_read_device_p95_ms')?.value, replay.summary.cache_stats.storage_read_device_p95_ms);
  for (const key of ['requests_per_second', 'tokens_per_second', 'cache_hit_rate', 'device_read_gib', 'device_written_gib'])
    assert.deepEqual([key, byKey.get(key)?.value, byKey.get(key)?.ratio], [key, null, null]);
  assert.deepEqual(inputs.map(entryVerdict), [
    { valid: false, short: 'NOT VALID', text: 'NOT VALID: run_too_short, too_few_samples' },
    { valid: null, short: 'no verdict', text: 'a replay records no validity verdict' },
  ]);
  const text = formatCompareTable(inputs);
  assert.match(text, /^Validity {2,}NOT VALID {2}no verdict$/m);
  assert.match(text, /^Requests {2,}req\/s {2,}\S+ +n\/a$/m);
  assert.match(text, /^A replay issues trace rows, not requests: it has no request, token or hit-rate figure \(n\/a\)/m);
});

test("compare: a summary's options are all their ranks: pooled p95, bytes ÷ common window, summed tokens/s", async () => {
  const summary = summaryDoc();
  const inputs = await loadDocs({ 'sum.json': summary });
  const o = summary.options['1'];
  const figures = new Map(compareFigures(inputs).map((f) => [f.figure.key, f.values.map((v) => v.value)]));
  assert.deepEqual(figures.get('storage_read_gib_per_sec'), [
    o.kvcache_bench.storage_read_gib_per_sec,
    summary.options['2'].kvcache_bench.storage_read_gib_per_sec,
  ]);
  assert.deepEqual(figures.get('storage_read_device_p95_ms'), [1.25, 1.25]);
  assert.deepEqual(figures.get('tokens_per_second'), [80, 80]);
  assert.deepEqual(figures.get('requests_per_second'), [null, null]);
  assert.deepEqual(entryVerdict(inputs[0]), {
    valid: false,
    short: 'NOT VALID',
    text: 'NOT VALID (not every rank is VALID: see the rank table)',
  });
  assert.match(formatCompareTable(inputs), /^A merged summary's option is all its ranks/m);
});

test('refused by name: the mlperf manifest (no results), a summary of another major version, a replay of a newer schema', () => {
  assert.equal(
    problemOf(JSON.stringify({ run_datetime: 'x', total_ranks: 2, options: [1], hosts: ['vm'] })),
    'x.json: the plan manifest of a kv-cache mlperf run (run.json): it holds no results; give its kvcache_run_summary_*.json or its rank files (option_*/trial_*/rank_*/*.json)',
  );
  const future = { ...summaryDoc(), schema_version: '2.0.0' };
  assert.equal(
    problemOf(JSON.stringify(future)),
    'x.json: summary schema_version 2.0.0 has another major version; this kvcache-bench reads merged summaries 1.1.0',
  );
  const replay = replayDoc() as unknown as { kvcache_bench: { schema_version: string } };
  replay.kvcache_bench.schema_version = '99.0.0';
  assert.match(problemOf(JSON.stringify(replay)), /^x\.json: schema_version 99\.0\.0 has another major version; /);
  const broken = replayDoc() as unknown as { replay: Record<string, unknown> };
  broken.replay.reads = 'many';
  assert.equal(
    problemOf(JSON.stringify(broken)),
    'x.json: not a valid kv-cache replay results file: replay.reads: Invalid input: expected number, received string',
  );
});
