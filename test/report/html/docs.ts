// Results documents for the report tests: the hand-made run of test/report/fixtures.ts as the plain
// JSON a results file holds, optionally with contract-exact per-second series, and a loader for them.
import { buildResultsJson } from '../../../src/report/results-json.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';
import { parseRunText } from '../../../src/report/html/run-input.js';
import type { LoadedRun } from '../../../src/report/html/run-input.js';
import { runResultFixture } from '../fixtures.js';
import { withSyntheticSeries } from './synthetic-series.js';
import type { SyntheticOptions, WithSeries } from './synthetic-series.js';

/** The fixture run as a results file's JSON (parsed back, so it holds only what a file can). */
/** The fixture run as a file of a version before the per-second series (no `timeline`, no `device_telemetry`). */
export function fixtureDoc(): ResultsDocument {
  const doc = JSON.parse(JSON.stringify(buildResultsJson(runResultFixture()))) as ResultsDocument;
  delete doc.kvcache_bench.timeline;
  delete doc.kvcache_bench.device_telemetry;
  return doc;
}

/** The fixture run with a timeline (and device telemetry unless `device` is false). */
export function fixtureDocWithSeries(o: SyntheticOptions, device = true): ResultsDocument & WithSeries {
  return withSyntheticSeries(fixtureDoc(), o, device);
}

/** A document loaded as `kv-cache report` loads a file. */
export function loaded(doc: unknown, path = 'run.json', label = path): LoadedRun {
  return { path, label, doc: parseRunText(JSON.stringify(doc), path) };
}
