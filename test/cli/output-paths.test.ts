// Output paths checked at start (cache-dir.ts outputProblems, outputCollisions) and the fallback
// file when writing results fails at the end (util/files.ts writeResultsFile).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDirProblems, outputCollisions, outputProblems } from '../../src/cli/cache-dir.js';
import { fallbackName, UnsavedResultsError, writeResultsFile } from '../../src/util/files.js';
import { withTempDir } from '../util/temp-dir.js';

test('output: a directory, a path ending in /, a device node or a pseudo file system is refused', async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(outputProblems(dir), [`--output ${dir} is a directory; give a file path`]);
    assert.deepEqual(outputProblems(`${dir}/new/`, '--xlsx-output'), [
      `--xlsx-output ${dir}/new/ ends in '/' (a directory); give a file path`,
    ]);
    assert.deepEqual(outputProblems('/dev/null'), [
      '--output /dev/null is a device node; give a regular file path (it would be replaced by a file)',
    ]);
    assert.deepEqual(outputProblems('/proc/r.json'), [
      '--output /proc/r.json: cannot write there (/proc is a pseudo file system); give a path on a real file system',
    ]);
    assert.deepEqual(outputProblems(''), ['--output is empty; give a file path']);
    assert.deepEqual(outputProblems(join(dir, 'a', 'b', 'r.json')), [], 'missing directories are made when written');
    assert.equal(existsSync(join(dir, 'a')), false, 'checked without side effects');
  });
});

test('output: a FIFO is refused', async (t) => {
  await withTempDir(async (dir) => {
    const fifo = join(dir, 'fifo');
    try {
      execFileSync('mkfifo', [fifo]);
    } catch {
      t.skip('mkfifo is not available here');
      return;
    }
    assert.deepEqual(outputProblems(fifo), [
      `--output ${fifo} is a FIFO (named pipe); give a regular file path (it would be replaced by a file)`,
    ]);
  });
});

test('output: never one of the inputs, also through a symlink; never another output', async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, 'c.yaml');
    writeFileSync(config, 'x: 1\n');
    const link = join(dir, 'link.yaml');
    symlinkSync(config, link);
    const inputs = [{ flag: '--config', path: config }];
    assert.deepEqual(outputProblems(config, '--output', inputs), [
      `--output ${config} is the same file as --config ${config}; writing it would overwrite the input`,
    ]);
    assert.deepEqual(outputProblems(link, '--output', inputs), [
      `--output ${link} is the same file as --config ${config}; writing it would overwrite the input`,
    ]);
    assert.deepEqual(outputProblems(join(dir, 'r.json'), '--output', inputs), []);
    const r = join(dir, 'r.json');
    assert.deepEqual(
      outputCollisions([
        { flag: '--output', path: r },
        { flag: '--xlsx-output', path: `${dir}/./r.json` },
      ]),
      [`--xlsx-output ${dir}/./r.json is the same file as --output ${r}; give them different paths`],
    );
  });
});

test('cache dir: an empty path is refused, not taken as the working directory', () => {
  assert.deepEqual(cacheDirProblems(''), [
    "cache-dir '' is empty: give a directory path (or leave the flag out for a temporary directory)",
  ]);
});

test('results file: written where asked, missing directories made', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'x', 'r.json');
    assert.deepEqual(writeResultsFile(path, '{}\n', [dir]), { path });
    assert.equal(readFileSync(path, 'utf8'), '{}\n');
  });
});

test('results file: when its path fails, the first fallback directory that works gets a new file', async () => {
  await withTempDir(async (dir) => {
    const blocker = join(dir, 'file');
    writeFileSync(blocker, 'not a directory');
    const path = join(blocker, 'r.json'); // its "directory" is a file: fails even as root
    const fallbackDir = join(dir, 'fb');
    mkdirSync(fallbackDir);
    const existing = join(fallbackDir, fallbackName(path));
    const saved = writeResultsFile(path, '{"a":1}\n', [join(blocker, 'nope'), fallbackDir]);
    assert.equal(saved.path, existing);
    assert.equal(saved.failure, `EEXIST: file already exists, mkdir '${blocker}'`);
    assert.equal(readFileSync(existing, 'utf8'), '{"a":1}\n');
    // A second failure never replaces the first fallback file: it goes to the next directory.
    const other = join(dir, 'fb2');
    mkdirSync(other);
    const again = writeResultsFile(path, '{"a":2}\n', [fallbackDir, other]);
    assert.equal(again.path, join(other, fallbackName(path)));
    assert.equal(readFileSync(existing, 'utf8'), '{"a":1}\n', 'the existing file is untouched');
    assert.throws(
      () => writeResultsFile(path, '{}', [join(blocker, 'x')]),
      (e: unknown) => e instanceof UnsavedResultsError && e.attempts.length === 2,
    );
    assert.deepEqual(readdirSync(dir).sort(), ['fb', 'fb2', 'file']);
  });
});
