// Atomic file writes: the whole new content or the old one, and no temp file left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomically } from '../../src/util/files.js';
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
