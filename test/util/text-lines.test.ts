// A text file's lines streamed (moved out of workload/burstgpt.ts so a new trace source can reuse it):
// line ends, a last line without one, and each problem handed to the reader's `fail`; the same lines
// in batches (a read chunk's at a time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { readTextLineBatches, readTextLines, splitTextLineBatches, splitTextLines } from '../../src/util/text-lines.js';
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

async function batchesOf(file: string, chunkBytes: number): Promise<string[][]> {
  const out: string[][] = [];
  for await (const b of readTextLineBatches(file, { chunkBytes, maxLineChars: 100, fail: (p) => new Stopped(p) })) out.push(b);
  return out;
}

test('text-lines in batches: the same lines as one at a time, never an empty batch, at any chunk size', () =>
  withTempDir(async (dir) => {
    const file = join(dir, 't.txt');
    await writeFile(file, 'a,b\r\n\ncé\r\n\rx\nlast');
    for (const chunk of [1, 2, 5, 64 * 1024]) {
      const batches = await batchesOf(file, chunk);
      assert.deepEqual(batches.flat(), ['a,b', '', 'cé', '\rx', 'last'], `chunk ${chunk}`);
      assert.ok(
        batches.every((b) => b.length > 0),
        `chunk ${chunk}`,
      );
    }
    assert.deepEqual((await batchesOf(file, 64 * 1024)).length, 2); // the chunk's complete lines, then the last line
    await writeFile(file, `ok\nfine\n${'x'.repeat(50)}\n`);
    const seen: string[] = [];
    const problem = await problemOf(
      (async () => {
        for await (const b of readTextLineBatches(file, { chunkBytes: 4, maxLineChars: 10, fail: (p) => new Stopped(p) })) seen.push(...b);
      })(),
    );
    assert.deepEqual(problem, { kind: 'too-long', line: 3, maxLineChars: 10 });
    assert.deepEqual(seen, ['ok', 'fine']);
  }));

test('property: any text cut into any chunks gives its lines, in batches and one at a time', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom('a', 'é', ' ', '\n', '\r', '\r\n', '{"x": 1}'), { maxLength: 40 }).map((parts) => parts.join('')),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
      async (text, cuts) => {
        async function* chunks(): AsyncGenerator<string> {
          let at = 0;
          for (let i = 0; at < text.length; i++) {
            const n = cuts[i % cuts.length];
            yield text.slice(at, at + n);
            at += n;
          }
        }
        const pieces = text.split('\n');
        if (pieces.at(-1) === '') pieces.pop(); // a last line end ends the last line, it does not start one
        const expected = pieces.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
        const got: string[] = [];
        for await (const b of splitTextLineBatches(chunks(), { maxLineChars: 1000, fail: (p) => new Stopped(p) })) got.push(...b);
        assert.deepEqual(got, expected);
        const one: string[] = [];
        for await (const l of splitTextLines(chunks(), { maxLineChars: 1000, fail: (p) => new Stopped(p) })) one.push(l);
        assert.deepEqual(one, expected);
      },
    ),
    { numRuns: 300 },
  );
});
