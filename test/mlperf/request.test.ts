import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MLPERF_OPTIONS } from '../../src/mlperf/options.js';
import { effectiveValues } from '../../src/mlperf/plan.js';
import { parseSubcommandArgs } from '../../src/cli/sub-args.js';
import { MLPERF_ARGS } from '../../src/cli/subcommand-args.js';
import { mlperfRequest } from '../../src/mlperf/request.js';
import type { MlperfRequest } from '../../src/mlperf/request.js';

const BASE = ['--results-dir', '/r', '--cache-dir', '/c'];

/** The request of `kv-cache mlperf` argv, with the problems of the declared syntax (cli/subcommands.ts) first. */
function parsed(argv: readonly string[]): { request: MlperfRequest; problems: string[] } {
  const p = parseSubcommandArgs(MLPERF_ARGS, argv);
  assert.ok(!p.help);
  const r = mlperfRequest(p.args);
  return { request: r.request, problems: [...p.problems, ...r.problems] };
}

test('CLOSED is the default and uses seed 42, 3 trials, 90 s delays, preconditioning and every option value', () => {
  const { request, problems } = parsed(BASE);
  assert.deepEqual(problems, []);
  assert.equal(request.division, 'closed');
  assert.deepEqual(
    [request.seed, request.trials, request.startDelaySec, request.endDelaySec, request.interOptionDelaySec, request.skipPrecondition],
    [42, 3, 90, 90, 90, false],
  );
  assert.deepEqual(request.options, [1, 2, 3]);
  assert.deepEqual(request.overrides, {});
});

test('CLOSED refuses every locked flag, each with what CLOSED uses instead', () => {
  const locked: Array<[string[], string]> = [
    [['--trials', '5'], '--trials is locked in CLOSED (it uses 3); run with --open to change it'],
    [['--seed', '7'], '--seed is locked in CLOSED (it uses 42); run with --open to change it'],
    [['--start-delay', '0'], '--start-delay is locked in CLOSED (it uses 90 s); run with --open to change it'],
    [['--end-delay', '0'], '--end-delay is locked in CLOSED (it uses 90 s); run with --open to change it'],
    [['--inter-option-delay', '0'], '--inter-option-delay is locked in CLOSED (it uses 90 s); run with --open to change it'],
    [['--config', 'x.yaml'], '--config is locked in CLOSED (it uses the built-in settings); run with --open to change it'],
    [
      ['--skip-precondition'],
      '--skip-precondition is locked in CLOSED (it uses preconditioning before the sequence); run with --open to change it',
    ],
    [
      ['--num-users', '5'],
      "--num-users is locked in CLOSED (it uses the option's value (Rules table KVCache-1)); run with --open to change it",
    ],
    [
      ['--model', 'tiny-1b'],
      "--model is locked in CLOSED (it uses the option's value (Rules table KVCache-1)); run with --open to change it",
    ],
    [
      ['--duration', '3'],
      "--duration is locked in CLOSED (it uses the option's value (Rules table KVCache-1)); run with --open to change it",
    ],
  ];
  for (const [flags, message] of locked) assert.deepEqual(parsed([...BASE, ...flags]).problems, [message], flags.join(' '));
  // What a CLOSED run may vary.
  const free = parsed([
    ...BASE,
    '--system-name',
    'sut',
    '--hosts',
    'a,b',
    '--npernode',
    '2',
    '--mpi-params',
    '--bind-to core',
    '--option',
    '2',
  ]);
  assert.deepEqual(free.problems, []);
  assert.deepEqual(
    [free.request.numProcesses, free.request.npernode, free.request.mpiParams, free.request.options],
    [4, 2, ['--bind-to', 'core'], [2]],
  );
});

test('OPEN overrides only the values the user typed: no default stands in for an option value', () => {
  const { request, problems } = parsed([...BASE, '--open', '--num-users', '7', '--cpu-mem-gb', '0.5']);
  assert.deepEqual(problems, []);
  assert.deepEqual(request.overrides, { numUsers: 7, cpuMemGb: 0.5 });
  assert.deepEqual(effectiveValues(2, request.overrides), { ...MLPERF_OPTIONS[2].values, numUsers: 7, cpuMemGb: 0.5 });
  assert.deepEqual(effectiveValues(3, request.overrides), {
    model: 'llama3.1-70b-instruct',
    numUsers: 7,
    cpuMemGb: 0.5,
    gpuMemGb: 0,
    maxConcurrentAllocs: 4,
    generationMode: 'none',
    durationSec: 300,
  });
});

test('rank counts: hosts × npernode, an even division of --num-processes, and the contradictions', () => {
  assert.equal(parsed([...BASE, '--hosts', 'a,b,c', '--num-processes', '6']).request.npernode, 2);
  assert.deepEqual(parsed([...BASE, '--hosts', 'a,b', '--num-processes', '3']).problems, [
    '--num-processes 3 does not divide evenly by 2 hosts; give a multiple of 2',
  ]);
  assert.deepEqual(parsed([...BASE, '--num-processes', '3', '--npernode', '2']).problems, ['--num-processes 3 ≠ --npernode 2 × 1 host(s)']);
  assert.deepEqual(parsed([...BASE, '--closed', '--open', '--option', '4']).problems, [
    '--closed and --open exclude each other',
    "--option: invalid choice '4'; valid: 1, 2, 3, all (or a list such as 1,3)",
  ]);
  assert.deepEqual(parsed(['--results-dir', '', '--option', '1']).problems, [
    '--results-dir DIR is empty (where the results and the summary go)',
    '--cache-dir DIR is required (the storage under test), unless --storage-backend s3',
  ]);
});

test('--storage-backend s3: refused in CLOSED with the POSIX-gateway rule; in OPEN every run gets it and the --s3-args', () => {
  const closed = parsed([...BASE, '--storage-backend', 's3']);
  assert.deepEqual(closed.problems, [
    '--storage-backend s3 is not allowed in CLOSED: the rules admit object storage only through a POSIX gateway (s3fs, rclone, Mountpoint-S3) mounted as --cache-dir; run with --open for the native S3 tier',
  ]);
  const open = parsed([
    '--results-dir',
    '/r',
    '--open',
    '--storage-backend',
    's3',
    '--s3-args',
    '--s3-bucket kvc  --storage-capacity-gb 100',
  ]);
  assert.deepEqual(open.problems, []);
  assert.deepEqual(open.request.storageArgs, ['--storage-backend', 's3', '--s3-bucket', 'kvc', '--storage-capacity-gb', '100']);
  assert.deepEqual(parsed(BASE).request.storageArgs, []);
  assert.deepEqual(parsed([...BASE, '--open', '--s3-args', '--s3-bucket kvc']).problems, ['--s3-args needs --storage-backend s3']);
  assert.deepEqual(parsed([...BASE, '--open', '--storage-backend', 'nfs']).problems, [
    "--storage-backend: invalid choice 'nfs'; valid: file, s3",
  ]);
});

test('--storage-backend s3 (OPEN) needs no --cache-dir and refuses one; every other run still requires it (issue 35)', () => {
  const s3 = ['--open', '--storage-backend', 's3', '--s3-args', '--s3-bucket kvc --storage-capacity-gb 100'];
  const bare = parsed(['--results-dir', '/r', ...s3]);
  assert.deepEqual(bare.problems, []);
  assert.equal(bare.request.cacheDir, '');
  assert.deepEqual(parsed([...BASE, ...s3]).problems, [
    '--cache-dir is not used with --storage-backend s3 (the bucket given in --s3-args is the storage under test); leave it out',
  ]);
  assert.deepEqual(parsed(['--results-dir', '/r']).problems, [
    '--cache-dir DIR is required (the storage under test), unless --storage-backend s3',
  ]);
  assert.deepEqual(parsed(['--results-dir', '/r', '--cache-dir', '']).problems, ['--cache-dir DIR is empty (the storage under test)']);
});
