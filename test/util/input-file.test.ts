// The regular-file check every input reader uses (issue 12): refuses a FIFO, a directory, a device,
// a missing path and a file over the limit without opening anything, each with its own words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkInputFile, checkInputFileAsync, formatBytes } from '../../src/util/input-file.js';
import { withTempDir } from './temp-dir.js';

test('regular files pass with their size; everything else is named', () =>
  withTempDir(async (dir) => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'abc');
    mkdirSync(join(dir, 'sub'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const cases: ReadonlyArray<readonly [string, ReturnType<typeof checkInputFile>]> = [
      [file, { ok: true, size: 3 }],
      [join(dir, 'sub'), { ok: false, problem: 'is a directory, not a regular file' }],
      [join(dir, 'fifo'), { ok: false, problem: 'is a FIFO (named pipe), not a regular file' }],
      ['/dev/null', { ok: false, problem: 'is a character device, not a regular file' }],
      [join(dir, 'none'), { ok: false, problem: 'file not found' }],
      [join(file, 'x'), { ok: false, problem: 'file not found (a component of the path is not a directory)' }],
    ];
    for (const [path, expected] of cases) {
      assert.deepEqual(checkInputFile(path), expected, path);
      assert.deepEqual(await checkInputFileAsync(path), expected, path);
    }
    assert.deepEqual(checkInputFile(file, { maxBytes: 2 }), { ok: false, problem: 'is 3 bytes; at most 2 bytes are accepted' });
    assert.deepEqual(checkInputFile(file, { maxBytes: 3 }), { ok: true, size: 3 });
  }));

test('formatBytes: binary units with the exact count', () => {
  assert.equal(formatBytes(1023), '1023 bytes');
  assert.equal(formatBytes(1024 * 1024), '1 MiB (1048576 bytes)');
  assert.equal(formatBytes(50_000_008), '47.7 MiB (50000008 bytes)');
});
