// The list of workload sources: which source the flags pick, the one message when two are picked, the
// inputs and input errors the command line asks for; and the proof that a source is a plug-in: a test
// source in a copy of the list runs through the engine's source path (runBenchmark, trace mode) and is
// reported in the results, with no edit anywhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunArgs } from '../../../src/cli/run-args.js';
import { runBenchmark } from '../../../src/engine/run.js';
import { pulledUsers } from '../../../src/engine/sources/recorded.js';
import {
  isSourceInputError,
  openWorkloadSource,
  pickedSources,
  sourceFor,
  runBlockTokens,
  sourceInputs,
  sourceProblems,
  WORKLOAD_SOURCES,
} from '../../../src/engine/sources/registry.js';
import type { WorkloadSourceDef } from '../../../src/engine/sources/source.js';
import { buildResultsJson } from '../../../src/report/results-json.js';
import { flagByName } from '../../../src/settings/flags.js';
import { monotonicClock } from '../../../src/util/clock.js';
import { TraceError } from '../../../src/workload/burstgpt.js';
import { DatasetError } from '../../../src/workload/sharegpt.js';
import { ValidationTraceError } from '../../../src/workload/validation-trace.js';
import { parse } from '../../cli/helpers.js';
import { withTempDir } from '../../util/temp-dir.js';

test('registry: every source has its own kind, exactly one is the default, each pick and input flag is a real flag', () => {
  const kinds = WORKLOAD_SOURCES.map((s) => s.kind);
  assert.deepEqual(kinds, ['sharegpt', 'burstgpt', 'mooncake', 'synthetic']);
  assert.deepEqual(
    WORKLOAD_SOURCES.filter((s) => s.pick === undefined).map((s) => s.kind),
    ['synthetic'],
  );
  const all = { ...parse([]).config, datasetPath: 'd.json', useBurstTrace: true, mooncakeTrace: 'm.jsonl' }; // every source picked
  for (const s of WORKLOAD_SOURCES) {
    if (s.pick !== undefined) assert.ok(flagByName(s.pick.flag.slice(2)) !== undefined, s.pick.flag);
    for (const input of s.inputs(all)) assert.ok(flagByName(input.flag.slice(2)) !== undefined, input.flag);
  }
});

test('registry: the flags pick one source, else synthetic users', () => {
  const kindFor = (argv: string[]): string => sourceFor(parse(argv).config).kind;
  assert.equal(kindFor([]), 'synthetic');
  assert.equal(kindFor(['--dataset-path', 'd.json']), 'sharegpt');
  assert.equal(kindFor(['--use-burst-trace']), 'burstgpt');
  assert.equal(kindFor(['--burst-trace-path', 'b.csv']), 'synthetic', 'a trace path alone picks nothing');
  assert.equal(kindFor(['--mooncake-trace', 'm.jsonl']), 'mooncake');
  assert.deepEqual(sourceInputs(parse(['--use-burst-trace', '--burst-trace-path', 'b.csv']).config), [
    { flag: '--burst-trace-path', path: 'b.csv' },
  ]);
  assert.deepEqual(sourceInputs(parse(['--burst-trace-path', 'b.csv']).config), []);
});

test('registry: the block size of a run: --kv-block-tokens, else what the source implies (Mooncake: 512), else whole entries', () => {
  const blocks = (argv: string[]): number | undefined => runBlockTokens(parse(argv).config);
  assert.equal(blocks([]), undefined);
  assert.equal(blocks(['--kv-block-tokens', '16']), 16);
  assert.equal(blocks(['--mooncake-trace', 'm.jsonl']), 512);
  assert.equal(blocks(['--mooncake-trace', 'm.jsonl', '--kv-block-tokens', '256']), 256);
  assert.equal(blocks(['--use-burst-trace', '--kv-block-tokens', '64']), 64);
});

test('registry: two picked sources are one problem naming both flags (the message the CLI gives)', () => {
  assert.deepEqual(sourceProblems(parse([]).config), []);
  assert.deepEqual(sourceProblems(parse(['--dataset-path', 'd.json']).config), []);
  const both = { ...parse([]).config, datasetPath: 'd.json', useBurstTrace: true };
  assert.deepEqual(sourceProblems(both), [
    '--dataset-path (ShareGPT replay) and --use-burst-trace (BurstGPT replay) are mutually exclusive: a run replays one workload source; drop one of them',
  ]);
  assert.deepEqual(
    pickedSources(both).map((s) => s.kind),
    ['sharegpt', 'burstgpt'],
  );
  const third: WorkloadSourceDef = {
    ...WORKLOAD_SOURCES[0],
    kind: 'third',
    pick: { flag: '--third', what: 'a third replay', picked: () => true },
  };
  assert.deepEqual(sourceProblems(both, [...WORKLOAD_SOURCES, third]), [
    '--dataset-path (ShareGPT replay) and --use-burst-trace (BurstGPT replay) and --third (a third replay) are mutually exclusive: a run replays one workload source; drop all but one',
  ]);
});

test('registry: the sources bad-input errors are exit-2 errors; anything else is not', () => {
  assert.ok(isSourceInputError(new DatasetError('d.json', 'file not found')));
  assert.ok(isSourceInputError(new TraceError('bad', 'b.csv')));
  assert.ok(!isSourceInputError(new ValidationTraceError('v.json', 'bad')), '--validation-trace is not a workload source');
  assert.ok(!isSourceInputError(new Error('boom')));
  assert.ok(!isSourceInputError('text'));
});

// ---- a source as a plug-in ----------------------------------------------------------------------

/** The test source's bad input. */
class InMemoryError extends Error {}

const REQUESTS = [
  { contextTokens: 300, generationTokens: 4 },
  { contextTokens: 100, generationTokens: 2 },
  { contextTokens: 200, generationTokens: 3 },
] as const;

/** Three requests held in memory, issued at once; more than two users is its "bad input". */
const inMemorySource: WorkloadSourceDef = {
  kind: 'in-memory',
  pick: { flag: '--in-memory', what: 'in-memory replay', picked: () => true },
  recorded: true,
  inputs: () => [],
  inputErrors: [InMemoryError],
  open: (cfg) => {
    if (cfg.numUsers > 2) return Promise.reject(new InMemoryError(`in-memory source: at most 2 users (got ${cfg.numUsers})`));
    return Promise.resolve({
      describe: () => ({ kind: 'in-memory', requests: REQUESTS.length }),
      logLines: () => [`In-memory: ${REQUESTS.length} requests`],
      users: ({ cfg: switches, parts, rng, stop }) => {
        async function* items(): AsyncGenerator<number> {
          yield* REQUESTS.keys();
        }
        const context = { ...parts, rng: rng.fork('trace'), multiTurn: !switches.disableMultiTurn };
        const shape = (k: number) => ({
          id: `mem_${k}`,
          userId: 'mem_user',
          ...REQUESTS[k],
          cacheKey: `mem_${k}`,
          turn: 1,
          previousTurnKeys: [],
          scheduledAtMs: 0,
        });
        const pool = pulledUsers(items(), shape, context, () => stop.stopWith('failed'));
        return { pool, conversationsLost: () => 0, sourceFailure: () => undefined };
      },
    });
  },
};

/** A trace-mode run (null tiers) of `users` users with the test source first in a copy of the list. */
function trialArgs(dir: string, users: number): string[] {
  return [
    ...['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--seed', '3', '--duration', '60'],
    ...['--num-users', String(users), '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--io-trace-log', join(dir, 'trace.csv')],
  ];
}

test('plug-in: a source added to a copy of the list runs through the engine and is reported as itself', () =>
  withTempDir(async (dir) => {
    const sources = [inMemorySource, ...WORKLOAD_SOURCES];
    const { config } = parseRunArgs(trialArgs(dir, 2), new Date());
    assert.equal(sourceFor(config, sources).kind, 'in-memory');
    const lines: string[] = [];
    const result = await runBenchmark(config, { clock: monotonicClock, toolVersion: 'test', log: (l) => lines.push(l), sources });
    assert.ok(lines.includes('In-memory: 3 requests'), lines.join('\n'));
    assert.equal(result.stopReason, 'workload_complete');
    assert.equal(result.requests.requestsCompleted, 3);
    assert.equal(result.requests.tokensGenerated, 9);
    assert.deepEqual(result.workloadSource, { kind: 'in-memory', requests: 3 });
    // The results document carries the block as described (a real source also adds its shape to
    // WorkloadSourceSchema in report/results-schema.ts, or the published schema refuses it).
    assert.deepEqual(buildResultsJson(result).kvcache_bench.workload_source, { kind: 'in-memory', requests: 3 });
  }));

test('plug-in: its bad input fails before anything is set up, and is an exit-2 error of that list only', () =>
  withTempDir(async (dir) => {
    const sources = [inMemorySource, ...WORKLOAD_SOURCES];
    const { config } = parseRunArgs(trialArgs(dir, 3), new Date());
    const opening = openWorkloadSource(config, sources);
    await assert.rejects(opening, InMemoryError);
    const failed = await opening.catch((e: unknown) => e);
    assert.ok(isSourceInputError(failed, sources));
    assert.ok(!isSourceInputError(failed), 'the real list does not know the test source');
    await assert.rejects(
      runBenchmark(config, { clock: monotonicClock, toolVersion: 'test', log: () => undefined, sources }),
      /in-memory source: at most 2 users \(got 3\)/,
    );
    assert.equal(existsSync(join(dir, 'trace.csv')), false, 'no tier, no trace file: nothing was set up');
  }));
