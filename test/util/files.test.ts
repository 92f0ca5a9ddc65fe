// Atomic file writes: the whole new content or the old one, and no temp file left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempNameBeside, writeFileAtomically, writeNewFile } from '../../src/util/files.js';
import { withTempDir } from './temp-dir.js';

test('writes a new file and replaces an existing one, leaving only the target', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'out.json');
    writeFileAtomically(path, 'first');
    assert.equal(readFileSync(path, 'utf8'), 'first');
    writeFileAtomically(path, new Uint8Array([0x6f, 0x6b]));
    assert.equal(readFileSync(path, 'utf8'), 'ok');
    assert.deepEqual(readdirSync(dir), ['out.json']);
  }));

test('a failed rename removes the temp file and leaves what was there', () =>
  withTempDir(async (dir) => {
    const taken = join(dir, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'inside'), 'old');
    // The temp file is written beside the target, then cannot be renamed over a directory.
    assert.throws(() => writeFileAtomically(taken, 'new'), /EISDIR|ENOTEMPTY|EEXIST/);
    assert.deepEqual(readdirSync(dir), ['taken']);
    assert.equal(readFileSync(join(taken, 'inside'), 'utf8'), 'old');
  }));

test('a symlink planted at the old predictable temp name is never written through', () =>
  withTempDir(async (dir) => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    const path = join(dir, 'report.html');
    // Today's main wrote `${path}.tmp-${pid}`; a hostile user plants links there (and for the next pids).
    for (let pid = process.pid; pid < process.pid + 4; pid++) symlinkSync(victim, `${path}.tmp-${pid}`);
    writeFileAtomically(path, 'report');
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.equal(readFileSync(path, 'utf8'), 'report');
    assert.equal(lstatSync(path).isSymbolicLink(), false);
  }));

test('temp names beside a path are new every time and hidden', () => {
  const a = tempNameBeside('/d/out.json');
  const b = tempNameBeside('/d/out.json');
  assert.notEqual(a, b);
  assert.match(a, /^\/d\/\.out\.json\.tmp-[0-9a-f]{16}$/);
});

test('writeNewFile refuses an existing name and a planted (even dangling) link, leaving both alone', () =>
  withTempDir(async (dir) => {
    const existing = join(dir, 'existing');
    writeFileSync(existing, 'old');
    assert.throws(() => writeNewFile(existing, 'new'), /EEXIST/);
    assert.equal(readFileSync(existing, 'utf8'), 'old');
    const link = join(dir, 'link');
    symlinkSync(join(dir, 'nowhere'), link);
    assert.throws(() => writeNewFile(link, 'new'), /EEXIST/);
    assert.equal(existsSync(join(dir, 'nowhere')), false);
    assert.equal(readlinkSync(link), join(dir, 'nowhere'));
  }));
