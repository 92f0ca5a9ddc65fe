// Globs and path expansion (moved out of workload/burstgpt.ts so a new trace source can reuse them):
// fnmatch rules, and each way a path names files or none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { expandPath, globToRegExp, hasGlobChars } from '../../src/util/glob.js';
import { withTempDir } from './temp-dir.js';

test('glob: rules follow fnmatch (classes, negation, hidden files, literal specials)', () => {
  assert.ok(globToRegExp('*.csv').test('a.csv'));
  assert.ok(!globToRegExp('*.csv').test('.a.csv'));
  assert.ok(globToRegExp('.*.csv').test('.a.csv'));
  assert.ok(!globToRegExp('*.csv').test('a.csvx'));
  assert.ok(globToRegExp('x[!0-4].csv').test('x7.csv'));
  assert.ok(!globToRegExp('x[!0-4].csv').test('x3.csv'));
  assert.ok(globToRegExp('a[]]b').test('a]b'));
  assert.ok(globToRegExp('a[b').test('a[b'));
  assert.ok(globToRegExp('f(1)+.csv').test('f(1)+.csv'));
  assert.ok(!globToRegExp('f.csv').test('fxcsv'));
  assert.deepEqual(['a*', 'b?', 'c[', 'plain'].map(hasGlobChars), [true, true, true, false]);
});

test('glob: a file, a directory (its matching regular files, links followed, sorted), a glob in the last component', () =>
  withTempDir(async (dir) => {
    for (const name of ['b.csv', 'a.csv', 'c.txt', '.h.csv']) await writeFile(join(dir, name), '');
    await mkdir(join(dir, 'sub.csv'));
    await symlink(join(dir, 'a.csv'), join(dir, 'link.csv'));
    await symlink(join(dir, 'missing'), join(dir, 'dangling.csv'));
    assert.deepEqual(await expandPath(join(dir, 'c.txt'), '*.csv'), { ok: true, files: [join(dir, 'c.txt')] });
    const csvs = ['a.csv', 'b.csv', 'link.csv'].map((n) => join(dir, n));
    assert.deepEqual(await expandPath(dir, '*.csv'), { ok: true, files: csvs });
    assert.deepEqual(await expandPath(join(dir, '[ab].csv'), '*.csv'), { ok: true, files: csvs.slice(0, 2) });
    await writeFile(join(dir, '[x].csv'), '');
    assert.deepEqual(await expandPath(join(dir, '[x].csv'), '*.csv'), { ok: true, files: [join(dir, '[x].csv')] }, 'taken literally');
  }));

test('glob: each way a path names no files', () =>
  withTempDir(async (dir) => {
    await mkdir(join(dir, 'empty'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const problem = async (spec: string): Promise<unknown> => {
      const r = await expandPath(spec, '*.csv');
      return r.ok ? r : r.problem;
    };
    assert.deepEqual(await problem(join(dir, 'empty')), { kind: 'empty-directory' });
    assert.deepEqual(await problem(join(dir, 'fifo')), { kind: 'not-file-or-directory' });
    assert.deepEqual(await problem(join(dir, 'nothing.csv')), { kind: 'not-found' });
    assert.deepEqual(await problem(join(dir, 'e*', 'x.csv')), { kind: 'glob-in-directory' });
    assert.deepEqual(await problem(join(dir, 'none', '*.csv')), { kind: 'glob-directory-missing', dir: join(dir, 'none') });
    assert.deepEqual(await problem(join(dir, 'empty', '*.csv')), { kind: 'no-match' });
  }));
