// Every bench script, given an option it does not know or a bad value, says so in one line and exits
// 2, with no stack trace (bench/lib/clean-exit.ts, imported first by each).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isUsageError, scriptName, UsageError } from '../../../bench/lib/clean-exit.js';

const BENCH_SRC = fileURLToPath(new URL('../../../../bench/', import.meta.url));
const BENCH_DIST = fileURLToPath(new URL('../../../bench/', import.meta.url));
const scripts = readdirSync(BENCH_SRC).filter((n) => n.endsWith('.ts'));

test('every bench script imports clean-exit before anything else', () => {
  assert.ok(scripts.length >= 15, scripts.join(' '));
  for (const s of scripts) {
    const firstImport = readFileSync(join(BENCH_SRC, s), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('import '));
    assert.match(firstImport ?? '', /from '\.\/lib\/clean-exit\.js'|^import '\.\/lib\/clean-exit\.js'/, s);
  }
});

// Scripts whose options are parsed before they touch anything (no root, no device, no child process).
for (const [script, args, message] of [
  ['block-ops', ['--no-such-flag'], /^bench:block-ops: Unknown option '--no-such-flag'/],
  ['block-ops', ['--dir', '/tmp', '--rounds', 'x'], /^bench:block-ops: --rounds must be a positive integer, got 'x'$/],
  ['datagen', ['--bogus', '1'], /^bench:datagen: Unknown option '--bogus'/],
  ['fast-device', ['--kv-layout', 'zz'], /^bench:fast-device: --kv-layout: 'zz' is not flat or slab$/],
  ['ttft', ['--nope'], /^bench:ttft: unknown option --nope; valid: /],
] as const)
  test(`bench:${script} ${args.join(' ')}: one line naming it, exit 2`, () => {
    const r = spawnSync(process.execPath, [join(BENCH_DIST, `${script}.js`), ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? '', message);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });

test('usage errors: ours and parseArgs refusals; anything else is not', () => {
  assert.equal(isUsageError(new UsageError('x')), true);
  assert.equal(isUsageError(Object.assign(new TypeError('Unknown option'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' })), true);
  assert.equal(isUsageError(new Error('EIO')), false);
  assert.equal(isUsageError(null), false);
  assert.equal(scriptName('/x/dist/bench/block-ops.js'), 'bench:block-ops');
});

test('an error thrown in a callback while timers still run: one line, exit 1, at once (as Node exits, without the stack)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kvc-clean-exit-'));
  try {
    const script = join(dir, 'late-throw.mjs');
    const cleanExit = pathToFileURL(join(BENCH_DIST, 'lib', 'clean-exit.js')).href;
    writeFileSync(
      script,
      `import '${cleanExit}';\nsetInterval(() => {}, 1000);\nsetTimeout(() => { throw new Error('the run failed'); }, 20);\n`,
    );
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, 'bench:late-throw: the run failed\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
