import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { SCHEMA_VERSION } from '../../../src/report/results-schema.js';
import { parseRunText, ReportInputError, runLabel, schemaVersionProblem } from '../../../src/report/html/run-input.js';
import { isRun, loadInputs } from '../../../src/report/html/inputs.js';
import { withTempDir } from '../../util/temp-dir.js';
import { fixtureDoc, fixtureDocWithSeries } from './docs.js';

const problemOf = (text: string): string => {
  try {
    parseRunText(text, 'x.json');
  } catch (e) {
    assert.ok(e instanceof ReportInputError);
    return e.message;
  }
  assert.fail('parsed');
};

test('schema versions: same major up to ours are read; newer or another major are refused, saying what is valid', () => {
  assert.equal(schemaVersionProblem('2.0.0', '2.1.0'), undefined);
  assert.equal(schemaVersionProblem('2.1.0', '2.1.0'), undefined);
  assert.equal(
    schemaVersionProblem('2.2.0', '2.1.0'),
    'schema_version 2.2.0 is newer than this kvcache-bench knows; this kvcache-bench reads schema 2.x up to 2.1.0 (update kvcache-bench to read it)',
  );
  assert.equal(
    schemaVersionProblem('2.1.1', '2.1.0'),
    'schema_version 2.1.1 is newer than this kvcache-bench knows; this kvcache-bench reads schema 2.x up to 2.1.0 (update kvcache-bench to read it)',
  );
  assert.equal(
    schemaVersionProblem('1.4.0', '2.1.0'),
    'schema_version 1.4.0 has another major version; this kvcache-bench reads schema 2.x up to 2.1.0',
  );
  assert.equal(schemaVersionProblem('two', '2.1.0'), "schema_version 'two' is not a version (expected MAJOR.MINOR.PATCH)");
});

test('a results file of this version loads, with and without the per-second series', () => {
  const plain = parseRunText(JSON.stringify(fixtureDoc()), 'a.json');
  assert.equal(plain.kvcache_bench.timeline, undefined);
  assert.equal(plain.kvcache_bench.device_telemetry, undefined);
  assert.equal(plain.kvcache_bench.storage_bytes.read_bytes, 4 * 2 ** 30); // 3 GiB of hits + 1 GiB demoted out
  const series = parseRunText(JSON.stringify(fixtureDocWithSeries({ seconds: 5, lastDurationSec: 0.5 })), 'b.json');
  assert.equal(series.kvcache_bench.timeline?.points.length, 5);
  assert.equal(series.kvcache_bench.timeline?.points[4]?.duration_sec, 0.5);
  assert.equal(series.kvcache_bench.device_telemetry?.device, 'vda');
  const noDevice = parseRunText(JSON.stringify(fixtureDocWithSeries({ seconds: 2 }, false)), 'c.json');
  assert.equal(noDevice.kvcache_bench.device_telemetry, null);
});

test('fields the report does not read are ignored (files with fields added by later minor versions)', () => {
  const doc = fixtureDoc() as unknown as { kvcache_bench: Record<string, unknown> };
  doc.kvcache_bench.some_future_block = { x: 1 };
  assert.equal(parseRunText(JSON.stringify(doc), 'a.json').kvcache_bench.model, 'tiny-1b');
});

test('bad input: one message naming the file, the problem and what is expected', () => {
  assert.match(problemOf('{"a": '), /^x\.json: not JSON \(.+\); expected a kv-cache results file$/);
  assert.equal(
    problemOf('{"a": 1}'),
    'x.json: not a kv-cache results file (no kvcache_bench.tool / schema_version); expected the results JSON of a kv-cache run (--output)',
  );
  assert.equal(
    problemOf('{"replay": {}, "kvcache_bench": {"tool": "kvcache-bench"}}'),
    'x.json: a kv-cache replay results file; expected the results JSON of a kv-cache run (--output)',
  );
  const future = fixtureDoc() as unknown as { kvcache_bench: { schema_version: string } };
  future.kvcache_bench.schema_version = '99.0.0';
  assert.equal(
    problemOf(JSON.stringify(future)),
    `x.json: schema_version 99.0.0 has another major version; this kvcache-bench reads schema 2.x up to ${SCHEMA_VERSION}`,
  );
  const broken = fixtureDoc() as unknown as { summary: { requests_per_second: unknown } };
  broken.summary.requests_per_second = 'fast';
  assert.equal(
    problemOf(JSON.stringify(broken)),
    'x.json: not a valid kv-cache run results file: summary.requests_per_second: Invalid input: expected number, received string',
  );
});

test('loadInputs reports every bad file at once and labels runs by file name, I/O mode and users', async () => {
  await withTempDir(async (dir) => {
    const good = join(dir, 'good.json');
    await writeFile(good, JSON.stringify(fixtureDoc()));
    await writeFile(join(dir, 'bad.json'), 'nope');
    assert.throws(
      () => loadInputs([join(dir, 'missing.json'), join(dir, 'bad.json'), dir]),
      (e: unknown) =>
        e instanceof ReportInputError &&
        e.message.split('\n').length === 3 &&
        e.message.startsWith(`${join(dir, 'missing.json')}: file not found\n`) &&
        e.message.includes(`${dir}: is a directory, not a regular file`),
    );
    const runs = loadInputs([good, good]);
    assert.deepEqual(
      runs.map((r) => r.label),
      ['#1 good.json (direct, 4 users)', '#2 good.json (direct, 4 users)'],
    );
    const first = runs[0];
    assert.ok(isRun(first));
    assert.equal(runLabel('/x/y/a.json', first.doc), 'a.json (direct, 4 users)');
  });
});

test('the report schema is the results schema: a run without write or read percentiles loads, unknown keys deep inside too', () => {
  const doc = fixtureDoc() as unknown as {
    summary: { cache_stats: Record<string, unknown> };
    kvcache_bench: { machine: Record<string, unknown> };
  };
  // A decode-only run writes no storage_write_* percentiles; a trace-mode run no storage_read_* ones.
  doc.summary.cache_stats = Object.fromEntries(
    Object.entries(doc.summary.cache_stats).filter(([k]) => !/^storage_(read|write)(_device|_host)?_p\d+_ms$/.test(k)),
  );
  doc.kvcache_bench.machine.added_by_a_later_minor = { anything: 1 };
  const run = parseRunText(JSON.stringify(doc), 'd.json');
  assert.equal(run.summary.cache_stats.storage_write_p95_ms, undefined);
  assert.equal(run.summary.cache_stats.storage_read_device_p95_ms, undefined);
  assert.deepEqual((run.kvcache_bench.machine as Record<string, unknown>).added_by_a_later_minor, { anything: 1 });
});
