import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launcherArgv, planLines, planSequence, shellQuote } from '../../src/mlperf/plan.js';
import type { LaunchContext } from '../../src/mlperf/plan.js';
import { parseSubcommandArgs } from '../../src/cli/sub-args.js';
import { MLPERF_ARGS } from '../../src/cli/subcommand-args.js';
import { mlperfRequest } from '../../src/mlperf/request.js';
import type { MlperfRequest } from '../../src/mlperf/request.js';

const CTX: LaunchContext = { node: '/usr/bin/node', bin: '/opt/kv/bin/kv-cache.cjs', cores: 2, isRoot: false, stamp: '20260101_120000' };

function request(argv: readonly string[]): MlperfRequest {
  const p = parseSubcommandArgs(MLPERF_ARGS, ['--results-dir', '/res', '--cache-dir', '/mnt/nvme', ...argv]);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  const r = mlperfRequest(p.args);
  assert.deepEqual(r.problems, []);
  return r.request;
}

const KV = '/usr/bin/node /opt/kv/bin/kv-cache.cjs';
const TAIL =
  '--seed-base 42 --rank-output-base /res/kvcache_20260101_120000/option_OPT/trial_1 --rank-cache-base /mnt/nvme --barrier-timeout 300 --no-progress';

test('--dry-run prints the exact command of each option (CLOSED, one rank: no mpirun)', () => {
  const expected: Record<string, string> = {
    '1': `${KV} --model llama3.1-8b --num-users 200 --cpu-mem-gb 0 --gpu-mem-gb 0 --max-concurrent-allocs 16 --generation-mode none --duration 300`,
    '2': `${KV} --model llama3.1-8b --num-users 100 --cpu-mem-gb 4 --gpu-mem-gb 0 --max-concurrent-allocs 16 --generation-mode none --duration 300`,
    '3': `${KV} --model llama3.1-70b-instruct --num-users 70 --cpu-mem-gb 0 --gpu-mem-gb 0 --max-concurrent-allocs 4 --generation-mode none --duration 300`,
  };
  for (const opt of ['1', '2', '3']) {
    const lines = planLines(planSequence(request(['--option', opt]), CTX));
    const commands = lines.filter((l) => !l.startsWith('#') && !l.startsWith('sleep'));
    assert.equal(commands.length, 4, 'preconditioning + 3 trials');
    assert.equal(commands[1], `${expected[opt]} ${TAIL.replace('OPT', opt)}`);
    assert.equal(commands[3], `${expected[opt]} ${TAIL.replace('OPT', opt).replace('trial_1', 'trial_3')}`);
    assert.equal(
      commands[0],
      `${KV} --model ${opt === '3' ? 'llama3.1-70b-instruct' : 'llama3.1-8b'} --precondition --num-users 1 --gpu-mem-gb 0 --cpu-mem-gb 0 --generation-mode none --duration 86400 --max-requests 1 --seed-base 42 --rank-output-base /res/kvcache_20260101_120000/precondition --rank-cache-base /mnt/nvme --barrier-timeout 300 --no-progress`,
    );
    assert.deepEqual(
      lines.filter((l) => l.startsWith('sleep')),
      [1, 1, 2, 2, 3, 3].map((t, i) => `sleep 90  # ${i % 2 === 0 ? 'before' : 'after'} option ${opt} trial ${t}`),
    );
  }
});

test('the sequence: 90 s before and after every trial and between options; 75 minutes of CLOSED', () => {
  const plan = planSequence(request([]), CTX);
  const sleeps = plan.steps.filter((s) => s.kind === 'sleep');
  const trials = plan.steps.filter((s) => s.kind === 'trial');
  assert.equal(trials.length, 9);
  assert.equal(sleeps.length, 9 * 2 + 2);
  assert.equal(sleeps.reduce((a, s) => a + (s.kind === 'sleep' ? s.seconds : 0), 0) + trials.length * 300, 75 * 60);
});

test('mpirun: -np, hosts with their slots, --oversubscribe past the cores, --allow-run-as-root only as root, MPI parameters passed through', () => {
  const r = request(['--hosts', 'n1,n2', '--npernode', '3', '--mpi-params', '--bind-to none']);
  assert.deepEqual(launcherArgv(r, CTX, 3, 2), [
    'mpirun',
    '--oversubscribe',
    '-np',
    '6',
    '--host',
    'n1:3,n2:3',
    '--npernode',
    '3',
    '--bind-to',
    'none',
  ]);
  assert.deepEqual(launcherArgv(request(['--num-processes', '2']), { ...CTX, isRoot: true }, 2, 1), [
    'mpirun',
    '--allow-run-as-root',
    '-np',
    '2',
  ]);
  assert.deepEqual(launcherArgv(request([]), CTX, 1, 1), []);
  const probe = planSequence(r, CTX).steps[0];
  assert.equal(probe.kind, 'probe');
  assert.equal(
    probe.argv.join(' '),
    `mpirun -np 2 --host n1:1,n2:1 --npernode 1 --bind-to none ${KV} mlperf --probe-dir /res/kvcache_20260101_120000/probe --barrier-timeout 30`,
  );
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
});

test('a results dir with a newline cannot put a bare command into the --dry-run script', () => {
  const p = parseSubcommandArgs(MLPERF_ARGS, ['--results-dir', "res\nid #'x", '--cache-dir', '/mnt/nvme', '--option', '1']);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  const r = mlperfRequest(p.args);
  assert.deepEqual(r.problems, []);
  const lines = planLines(planSequence(r.request, CTX));
  assert.equal(lines[0], "# run directory: res\\nid #'x/kvcache_20260101_120000");
  // Every line is a comment, a sleep or a full command: none is the bare `id` the name smuggled in.
  for (const l of lines) assert.match(l, /^(# |sleep |\/usr\/bin\/node )/);
  assert.ok(lines.at(-1)?.includes("kv-cache merge $'res\\x0aid #\\'x/kvcache_20260101_120000'"));
});

test('shellQuote: plain words bare, spaces in single quotes, control characters as $-quoted escapes', () => {
  assert.equal(shellQuote('/res/a_b-1'), '/res/a_b-1');
  assert.equal(shellQuote("it's here"), `'it'\\''s here'`);
  assert.equal(shellQuote("a\nb'\\\u001b\u202e"), "$'a\\x0ab\\'\\\\\\x1b\\u202e'");
});

test('OPEN with --storage-backend s3 and no --cache-dir: every run gets the backend and its flags, none --rank-cache-base (issue 35)', () => {
  const p = parseSubcommandArgs(MLPERF_ARGS, [
    '--results-dir',
    '/res',
    '--open',
    '--storage-backend',
    's3',
    '--s3-args',
    '--s3-bucket kvc --storage-capacity-gb 10',
    '--option',
    '1',
    '--trials',
    '1',
  ]);
  assert.ok(!p.help);
  assert.deepEqual(p.problems, []);
  const r = mlperfRequest(p.args);
  assert.deepEqual(r.problems, []);
  const runs = planSequence(r.request, CTX).steps.filter((s) => s.kind === 'precondition' || s.kind === 'trial');
  assert.equal(runs.length, 2);
  for (const s of runs) {
    assert.ok(!s.argv.includes('--rank-cache-base'), s.argv.join(' '));
    assert.ok(s.argv.join(' ').includes('--storage-backend s3 --s3-bucket kvc --storage-capacity-gb 10'));
  }
});
