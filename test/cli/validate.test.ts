// Input validation (the reference's validation tests, docs/reference-compat.md#rc-2): every rejected value carries the reference's message
// fragment, accepted edges pass, all problems are reported together, plus the checks the reference
// has but does not test (GPUs, tensor parallel, disaggregated modes, cache directory safety).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateRunConfig } from '../../src/cli/validate.js';
import type { RunConfig } from '../../src/settings/run-config.js';
import { cacheDirProblems, isSystemDir } from '../../src/cli/cache-dir.js';
import type { FsProbe } from '../../src/cli/cache-dir.js';
import { configError, parse, rejection, tempDir } from './helpers.js';

interface Row {
  readonly flag: string;
  readonly rejected: readonly string[];
  readonly fragment: string;
}

const ROWS: readonly Row[] = [
  { flag: 'num-users', rejected: ['0', '-1'], fragment: 'num-users must be positive' },
  { flag: 'num-users', rejected: ['100001'], fragment: 'num-users exceeds limit' },
  { flag: 'duration', rejected: ['0', '-1'], fragment: 'duration must be positive' },
  { flag: 'duration', rejected: ['86401'], fragment: 'duration exceeds 24 hours' },
  { flag: 'gpu-mem-gb', rejected: ['-1', '-0.5'], fragment: 'gpu-mem-gb cannot be negative' },
  { flag: 'gpu-mem-gb', rejected: ['65537'], fragment: 'gpu-mem-gb exceeds limit' },
  { flag: 'cpu-mem-gb', rejected: ['-1'], fragment: 'cpu-mem-gb cannot be negative' },
  { flag: 'cpu-mem-gb', rejected: ['131073'], fragment: 'cpu-mem-gb exceeds limit' },
  { flag: 'target-saturation', rejected: ['-0.1', '1.1'], fragment: 'target-saturation must be between 0.0 and 1.0' },
  { flag: 'rag-num-docs', rejected: ['-1'], fragment: 'rag-num-docs cannot be negative' },
  { flag: 'max-conversations', rejected: ['0', '-1'], fragment: 'max-conversations must be positive' },
  { flag: 'max-concurrent-allocs', rejected: ['-1'], fragment: 'max-concurrent-allocs cannot be negative' },
  { flag: 'request-rate', rejected: ['-1'], fragment: 'request-rate cannot be negative' },
  { flag: 'max-requests', rejected: ['-1'], fragment: 'max-requests cannot be negative' },
  { flag: 'storage-capacity-gb', rejected: ['-1'], fragment: 'storage-capacity-gb cannot be negative' },
  { flag: 'precondition-size-gb', rejected: ['-1'], fragment: 'precondition-size-gb cannot be negative' },
  { flag: 'precondition-threads', rejected: ['-1'], fragment: 'precondition-threads cannot be negative' },
  { flag: 'trace-speedup', rejected: ['-1'], fragment: 'trace-speedup cannot be negative' },
  { flag: 'replay-cycles', rejected: ['-1'], fragment: 'replay-cycles cannot be negative' },
  { flag: 'mfu', rejected: ['0', '-0.5'], fragment: 'mfu must be positive' },
  { flag: 'mfu', rejected: ['1.01'], fragment: 'mfu cannot exceed 1.0' },
  { flag: 'gpu-profile', rejected: ['h100'], fragment: 'gpu-profile' },
];

for (const row of ROWS) {
  for (const value of row.rejected) {
    test(`--${row.flag} ${value} is rejected with "${row.fragment}"`, () => {
      assert.match(rejection([`--${row.flag}`, value]), new RegExp(row.fragment.replace(/\./g, '\\.')));
    });
  }
}

const ACCEPTED: ReadonlyArray<readonly [string, string]> = [
  ['num-users', '100'],
  ['num-users', '1'],
  ['num-users', '100000'],
  ['duration', '60'],
  ['duration', '86400'],
  ['gpu-mem-gb', '0'],
  ['gpu-mem-gb', '65536'],
  ['cpu-mem-gb', '0'],
  ['cpu-mem-gb', '131072'],
  ['target-saturation', '0.0'],
  ['target-saturation', '1.0'],
  ['mfu', '1'],
  ['mfu', '0.05'],
  ['gpu-profile', 'none'],
  ['rag-num-docs', '0'],
  ['max-conversations', '1'],
  ['max-concurrent-allocs', '0'],
  ['request-rate', '0'],
  ['max-requests', '0'],
  ['storage-capacity-gb', '0'],
  ['storage-capacity-gb', '100'],
  ['precondition-size-gb', '0'],
  ['precondition-threads', '0'],
  ['trace-speedup', '0'],
  ['trace-speedup', '100'],
  ['replay-cycles', '0'],
  ['replay-cycles', '5'],
];

for (const [flag, value] of ACCEPTED) {
  test(`--${flag} ${value} is accepted`, () => {
    assert.doesNotThrow(() => parse([`--${flag}`, value]));
  });
}

test('three simultaneous errors all appear in one message', () => {
  const e = configError(() => parse(['--num-users', '-1', '--duration', '-1', '--gpu-mem-gb', '-1']));
  assert.equal(e.problems.length, 3);
  for (const fragment of ['num-users must be positive', 'duration must be positive', 'gpu-mem-gb cannot be negative']) {
    assert.ok(e.message.includes(fragment), `message lists "${fragment}"`);
  }
});

test('a valid config passes validateRunConfig unchanged', () => {
  const { config } = parse(['--cache-dir', tempDir()]);
  const before = JSON.stringify(config.effective);
  assert.doesNotThrow(() => validateRunConfig(config));
  assert.equal(JSON.stringify(config.effective), before);
});

test('validateRunConfig collects problems of a hand-built config', () => {
  const { config } = parse([]);
  const bad: RunConfig = { ...config, numUsers: -1, durationSec: 1.5, storageCapacityGb: -2, targetSaturation: Number.NaN };
  const e = configError(() => validateRunConfig(bad));
  assert.match(e.message, /num-users must be positive/);
  assert.match(e.message, /duration must be an integer/);
  assert.match(e.message, /storage-capacity-gb cannot be negative/);
  assert.match(e.message, /target-saturation must be a finite number/);
});

test('num-gpus below 1 is rejected', () => {
  assert.match(rejection(['--num-gpus', '0']), /num-gpus must be at least 1/);
});

test('tensor-parallel below 1 or above num-gpus is rejected; a non-power of 2 only warns', () => {
  assert.match(rejection(['--tensor-parallel', '0']), /tensor-parallel must be at least 1/);
  assert.match(rejection(['--num-gpus', '4', '--tensor-parallel', '8']), /tensor-parallel \(8\) cannot exceed num-gpus \(4\)/);
  const { warnings } = parse(['--num-gpus', '4', '--tensor-parallel', '3']);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /not a power of 2/);
  assert.deepEqual(parse(['--num-gpus', '8', '--tensor-parallel', '8']).warnings, []);
});

test('--prefill-only with --decode-only is rejected as mutually exclusive', () => {
  assert.match(rejection(['--prefill-only', '--decode-only']), /mutually exclusive/);
  assert.equal(parse(['--prefill-only']).config.prefillOnly, true);
});

test('a run replays one workload source: two picked sources are one problem, in the words the list gives', () => {
  assert.equal(
    rejection(['--dataset-path', 'd.json', '--use-burst-trace']),
    'Invalid configuration: --dataset-path (ShareGPT replay) and --use-burst-trace (BurstGPT replay) are mutually exclusive: a run replays one workload source; drop one of them',
  );
});

test("the smallest entry that must fit is the templates' smallest context for synthetic users, 1 token for a recorded source", () => {
  const tiny = ['--model', 'tiny-1b', '--storage-capacity-gb', '0.000001', '--cpu-mem-gb', '0', '--gpu-mem-gb', '0'];
  assert.match(rejection(tiny), /one entry of the smallest request \(\d+ tokens × /);
  for (const source of [['--dataset-path', 'd.json'], ['--use-burst-trace']])
    assert.match(rejection([...tiny, ...source]), /one entry of the smallest request \(1 token × /, source.join(' '));
});

test('--storage-backend memory needs --storage-capacity-gb (no free-space probe), except in trace mode', () => {
  assert.match(
    rejection(['--storage-backend', 'memory']),
    /--storage-backend memory needs --storage-capacity-gb > 0: RAM has no free space to take a share of/,
  );
  assert.equal(parse(['--storage-backend', 'memory', '--storage-capacity-gb', '2']).config.storageBackend, 'memory');
  assert.equal(parse(['--storage-backend', 'memory', '--io-trace-log', 'trace.csv']).config.storageBackend, 'memory');
  assert.equal(parse([]).config.storageBackend, 'file');
  const dir = tempDir();
  assert.deepEqual(parse(['--storage-backend', 'memory', '--storage-capacity-gb', '2', '--cache-dir', dir]).warnings, [
    `--cache-dir ${dir} is not used: --storage-backend memory keeps no files`,
  ]);
});

test('gpu-bandwidth-gbs must be positive', () => {
  assert.match(rejection(['--gpu-bandwidth-gbs', '0']), /gpu-bandwidth-gbs must be positive/);
});

test('cache dir under a system directory is rejected', () => {
  for (const dir of [
    '/etc/kv_cache',
    '/dev/x',
    '/proc/1',
    '/sys/kv',
    '/boot/kv',
    '/bin/kv',
    '/sbin/kv',
    '/usr/bin/kv',
    '/usr/sbin/kv',
    '/etc',
  ]) {
    assert.match(rejection(['--cache-dir', dir]), /cannot be a system directory/, dir);
  }
});

test('/, /usr, /var, /home and /root themselves are rejected, their subdirectories are not', () => {
  for (const dir of ['/', '/usr', '/var', '/home', '/root', '/var/', '/usr/../var']) assert.ok(isSystemDir(join(dir)), dir);
  for (const dir of ['/var/tmp/x', '/home/me/kv', '/root/kv', '/usr/local/kv', '/mnt/nvme']) assert.equal(isSystemDir(dir), false, dir);
});

test('system directories are compared by path component, not by string prefix (/devdata is fine)', () => {
  for (const dir of ['/devdata', '/devdata/kv', '/etcetera/kv', '/procs', '/binaries/kv', '/usr/binx'])
    assert.equal(isSystemDir(dir), false, dir);
  const fakeFs: FsProbe = { kind: (p) => (p === '/' ? 'dir' : 'missing'), realpath: (p) => p, writable: () => true };
  assert.equal(parse(['--cache-dir', '/devdata/kv', '--create-cache-dir'], fakeFs).config.cacheDir, '/devdata/kv');
  assert.deepEqual(cacheDirProblems('/devdata/kv', fakeFs, true), []);
});

test('a temp cache dir is accepted and kept as given (absolute)', () => {
  const dir = join(tempDir(), 'kv_cache_test');
  mkdirSync(dir);
  assert.equal(parse(['--cache-dir', dir]).config.cacheDir, dir);
});

test('a missing cache dir is refused, naming it and both remedies; --create-cache-dir accepts it', () => {
  const base = tempDir();
  const dir = join(base, 'not', 'there');
  assert.match(
    rejection(['--cache-dir', dir]),
    new RegExp(`cache-dir '${dir}' does not exist; create it first \\(mkdir -p '${dir}'\\) or pass --create-cache-dir`),
  );
  assert.equal(parse(['--cache-dir', dir, '--create-cache-dir']).config.cacheDir, dir);
  assert.equal(existsSync(join(base, 'not')), false, 'the check creates nothing');
});

test('a relative cache dir is resolved against the working directory', () => {
  assert.equal(parse(['--cache-dir', 'kv_rel_dir', '--create-cache-dir']).config.cacheDir, join(process.cwd(), 'kv_rel_dir'));
});

test('a symlink into a system directory is rejected', () => {
  const base = tempDir();
  symlinkSync('/etc', join(base, 'link'));
  assert.match(
    rejection(['--cache-dir', join(base, 'link', 'kv'), '--create-cache-dir']),
    /\(resolves to \/etc\/kv\) cannot be a system directory/,
  );
});

test('a cache dir whose existing parent is not writable is rejected', () => {
  const fakeFs: FsProbe = {
    kind: (p) => (p === '/data' ? 'dir' : p === '/' ? 'dir' : 'missing'),
    realpath: (p) => p,
    writable: (p) => p !== '/data',
  };
  assert.match(rejection(['--cache-dir', '/data/kv', '--create-cache-dir'], fakeFs), /parent directory '\/data' is not writable/);
});

test('a cache dir that is an existing file is rejected', () => {
  const file = join(tempDir(), 'file');
  writeFileSync(file, 'x');
  assert.match(rejection(['--cache-dir', file]), /exists and is not a directory/);
});

test('an existing writable cache dir is accepted', () => {
  const dir = join(tempDir(), 'dir');
  mkdirSync(dir);
  assert.deepEqual(cacheDirProblems(dir), []);
});
