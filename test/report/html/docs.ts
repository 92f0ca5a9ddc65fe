// Results documents for the report tests: the hand-made run of test/report/fixtures.ts as the plain
// JSON a results file holds, optionally with contract-exact per-second series, and a loader for them.
import { buildResultsJson } from '../../../src/report/results-json.js';
import { mergeRun } from '../../../src/mlperf/merge.js';
import type { RunSummary, TrialInput } from '../../../src/mlperf/merge.js';
import { buildReplayResultsJson } from '../../../src/report/replay-report.js';
import type { ReplayResultsDocument, ResultsDocument } from '../../../src/report/results-schema.js';
import { MiB } from '../../../src/util/units.js';
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

/** A replay's results document from the fixture run's recorder and machine: 4 writes of 4 MiB, 5 reads of 10 MiB in 2 s. */
export function replayDoc(): ReplayResultsDocument {
  const run = runResultFixture();
  const doc = buildReplayResultsJson(
    { tracePath: 'io.csv', concurrency: 16, paced: false, allTiers: false },
    {
      counts: {
        rows: 10,
        writes: 4,
        reads: 5,
        deletes: 1,
        writeBytes: 4 * MiB,
        readBytes: 10 * MiB,
        skippedOtherTiers: 0,
        missingKeys: 1,
        abortedAtStop: 0,
        hashedKeys: 0,
      },
      recorded: run.recorded,
      elapsedSec: 2,
      storage: { dir: '/cache', ioMode: 'direct', fileSystem: 'ext4' },
      machine: run.machine,
      stopReason: 'workload_complete',
    },
    '0.1.0',
  );
  return JSON.parse(JSON.stringify(doc)) as ReplayResultsDocument;
}

/** A rank's results: the fixture run with a ranks block (rank `rank` of 2 on host vm). */
function rankDoc(rank: number): ResultsDocument {
  const doc = structuredClone(buildResultsJson(runResultFixture()));
  doc.kvcache_bench.ranks = {
    rank,
    world_size: 2,
    launcher: 'openmpi',
    world_size_from: 'OMPI_COMM_WORLD_SIZE',
    host: 'vm',
    barrier: null,
    agreed_start_epoch_ms: 1000,
    agreed_end_epoch_ms: 3000,
    window_start_epoch_ms: 1000 + rank,
    window_end_epoch_ms: 3000 + rank,
    start_skew_ms: rank,
    end_skew_ms: rank,
    clock_source: 'test',
    peers: [],
  };
  return doc;
}

/** The merged summary of two ranks × one trial for each of options '1' and '2', as `kv-cache merge` writes it. */
export function summaryDoc(): RunSummary {
  const trial = (option: string): TrialInput => ({
    option,
    trial: 1,
    dir: `option_${option}/trial_1`,
    files: [0, 1].map((rank) => ({ rank, path: `option_${option}/trial_1/rank_${rank}/r.json`, doc: rankDoc(rank) })),
    missing: option === '2' ? ['option_2/trial_1/rank_2/kvcache_results_*.json: rank 2 wrote nothing'] : [],
  });
  const summary = mergeRun([trial('1'), trial('2')], {
    runDatetime: '2026-11-26T00:00:00.000Z',
    npernode: 2,
    hostCount: 1,
    totalRanks: 2,
    trialsPerOption: 1,
    division: 'open',
    systemName: null,
  });
  return JSON.parse(JSON.stringify(summary)) as RunSummary;
}
