// The regular-file check every input reader uses (issue 12): refuses a FIFO, a directory, a device,
// a missing path and a file over the limit without opening anything, each with its own words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkInputFile, checkInputFileAsync, formatBytes, readInputText, readInputTextAsync } from '../../src/util/input-file.js';
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

// Issue 35: procfs (like sysfs and some FUSE file systems) gives 0 as the size of files that hold data.
const PSEUDO = '/proc/self/status';
const noProc =
  existsSync(PSEUDO) && statSync(PSEUDO).size === 0 ? false : `${PSEUDO} is missing or has a real size here (not Linux procfs)`;
if (noProc !== false) console.log(`# skipping the pseudo-file tests: ${noProc}`);

test('a file whose size stat gives as 0 but which holds data is read to its end', { skip: noProc }, async () => {
  for (const read of [readInputText(PSEUDO, { maxBytes: 1024 * 1024 }), await readInputTextAsync(PSEUDO, { maxBytes: 1024 * 1024 })]) {
    assert.ok(read.ok);
    assert.match(read.text, /^Name:\t/);
    assert.match(read.text, /\nPid:\t\d+\n/);
  }
});

test('a pseudo-file holding more than the cap is refused, not cut short at the cap', { skip: noProc }, async () => {
  const refused = { ok: false, problem: 'holds more than 16 bytes, the most accepted' };
  assert.deepEqual(readInputText(PSEUDO, { maxBytes: 16 }), refused);
  assert.deepEqual(await readInputTextAsync(PSEUDO, { maxBytes: 16 }), refused);
});

test('regular files are read whole up to the cap, exactly at it, and an empty file is empty text', () =>
  withTempDir(async (dir) => {
    const big = join(dir, 'big.txt');
    const text = 'x'.repeat(200_000) + 'end';
    writeFileSync(big, text);
    writeFileSync(join(dir, 'empty.txt'), '');
    for (const read of [readInputText, readInputTextAsync]) {
      assert.deepEqual(await read(big, { maxBytes: text.length }), { ok: true, text });
      assert.deepEqual(await read(big, { maxBytes: text.length - 1 }), {
        ok: false,
        problem: `is ${formatBytes(text.length)}; at most ${formatBytes(text.length - 1)} are accepted`,
      });
      assert.deepEqual(await read(join(dir, 'empty.txt'), { maxBytes: 10 }), { ok: true, text: '' });
    }
  }));
