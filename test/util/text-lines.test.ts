// A text file's lines streamed (moved out of workload/burstgpt.ts so a new trace source can reuse it):
// line ends, a last line without one, and each problem handed to the reader's `fail`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readTextLines } from '../../src/util/text-lines.js';
import type { LineReadProblem } from '../../src/util/text-lines.js';
import { withTempDir } from './temp-dir.js';

class Stopped extends Error {
  constructor(readonly problem: LineReadProblem) {
    super(problem.kind);
  }
}

async function lines(file: string, chunkBytes = 3, maxLineChars = 100): Promise<string[]> {
  const out: string[] = [];
  for await (const l of readTextLines(file, { chunkBytes, maxLineChars, fail: (p) => new Stopped(p) })) out.push(l);
  return out;
}

async function problemOf(run: Promise<unknown>): Promise<LineReadProblem> {
  try {
    await run;
  } catch (e) {
    if (e instanceof Stopped) return e.problem;
    throw e;
  }
  assert.fail('expected a problem');
}

test('text-lines: LF and CRLF ends removed, blank lines kept, a last line without an end still read, at any chunk size', () =>
  withTempDir(async (dir) => {
    const file = join(dir, 't.txt');
    await writeFile(file, 'a,b\r\n\ncé\r\n\rx\nlast');
    for (const chunk of [1, 2, 5, 64 * 1024])
      assert.deepEqual(await lines(file, chunk), ['a,b', '', 'cé', '\rx', 'last'], `chunk ${chunk}`);
    await writeFile(file, '');
    assert.deepEqual(await lines(file), []);
  }));

test('text-lines: a line past maxLineChars stops at its 1-based number', () =>
  withTempDir(async (dir) => {
    const file = join(dir, 'long.txt');
    await writeFile(file, `ok\nfine\n${'x'.repeat(50)}\n`);
    assert.deepEqual(await problemOf(lines(file, 4, 10)), { kind: 'too-long', line: 3, maxLineChars: 10 });
  }));

test('text-lines: a missing file, a directory and a FIFO are refused before opening', () =>
  withTempDir(async (dir) => {
    await mkdir(join(dir, 'd'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    assert.deepEqual(await problemOf(lines(join(dir, 'none'))), { kind: 'unusable', problem: 'file not found' });
    assert.deepEqual(await problemOf(lines(join(dir, 'd'))), { kind: 'unusable', problem: 'is a directory, not a regular file' });
    assert.deepEqual(await problemOf(lines(join(dir, 'fifo'))), {
      kind: 'unusable',
      problem: 'is a FIFO (named pipe), not a regular file',
    });
  }));
