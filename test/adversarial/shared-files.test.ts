// Siblings of issue 21's classes found after it: an entry file of ours replaced by a link in a shared
// cache directory, input files checked by path and then opened again by path (swap in a FIFO between
// the two and the open blocks), and an input error quoting the file raw on the console.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { FileBackend } from '../../src/tiers/file.js';
import { openInputFile, openInputFileAsync } from '../../src/util/input-file.js';
import { hasControl } from '../../src/util/safe-text.js';
import { inTempDir, QUICK_RUN, runCli } from '../e2e/run-cli.js';
import { withTempDir } from '../util/temp-dir.js';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function bytesSource(text: string): ChunkSource {
  const buf = Buffer.from(text);
  return {
    size: buf.length,
    async *chunks() {
      yield buf;
    },
  };
}

test('file tier: rewriting an entry of ours whose file was replaced by a link never writes through the link', () =>
  withTempDir(async (dir) => {
    const outside = join(dir, 'precious');
    writeFileSync(outside, 'not yours');
    const cache = join(dir, 'cache');
    execFileSync('mkdir', [cache]);
    const backend = await FileBackend.create({ dir: cache, ioMode: 'buffered' });
    try {
      await backend.write('k', bytesSource('first'));
      const file = backend.pathFor('k');
      rmSync(file);
      symlinkSync(outside, file); // a colleague's link in place of our entry
      await assert.rejects(backend.write('k', bytesSource('second write')));
      assert.equal(readFileSync(outside, 'utf8'), 'not yours');
    } finally {
      await backend.close();
    }
    assert.equal(readFileSync(outside, 'utf8'), 'not yours');
  }));

test('openInputFile judges what it opened: a FIFO is refused at once (a plain open would wait for a writer), a file gives its size', () =>
  withTempDir(async (dir) => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    assert.deepEqual(openInputFile(fifo), { ok: false, problem: 'is a FIFO (named pipe), not a regular file' });
    assert.deepEqual(await openInputFileAsync(fifo), { ok: false, problem: 'is a FIFO (named pipe), not a regular file' });
    writeFileSync(join(dir, 'f'), '12345');
    const opened = openInputFile(join(dir, 'f'), { maxBytes: 4 });
    assert.deepEqual(opened, { ok: false, problem: 'is 5 bytes; at most 4 bytes are accepted' });
    const link = join(dir, 'l');
    symlinkSync(join(dir, 'f'), link);
    assert.deepEqual(openInputFile(link, { noFollow: true }), { ok: false, problem: 'is a symbolic link (not followed)' });
  }));

/** Every .ts file under src/, relative to it. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [relative(SRC, join(dir, e.name))] : [],
  );
}

test('input files are opened once, through util/input-file.ts: no readFileSync of an input, no blocking open by path', () => {
  // Files the tool reads that no one else supplies: its own package.json and uPlot, /proc and /sys.
  const OWN_FILES = ['cli/main.ts', 'data/huge-pages.ts', 'engine/memory-check.ts', 'report/html/html-writer.ts'];
  const readers = sources().filter((f) => /\breadFileSync\(/.test(readFileSync(join(SRC, f), 'utf8')));
  assert.deepEqual(readers.sort(), OWN_FILES);
  const blockingOpens = sources().filter((f) => /\bopen(Sync)?\([^()]*,\s*'r'\s*\)/.test(readFileSync(join(SRC, f), 'utf8')));
  assert.deepEqual(blockingOpens, []);
});

test('a validation trace that is not JSON: the parser quotes it, the console gets it inert (one message, exit 2)', () =>
  inTempDir(async (dir) => {
    const trace = join(dir, 'v.json');
    writeFileSync(trace, '[{"a": 1}, \u001b]52;c;aWQ=\u0007 ]');
    const r = await runCli([
      ...QUICK_RUN,
      '--duration',
      '1',
      '--validation-trace',
      trace,
      '--cache-dir',
      join(dir, 'c'),
      '--create-cache-dir',
    ]);
    assert.equal(r.code, 2);
    assert.equal(hasControl(r.stderr.replaceAll('\n', '')), false, r.stderr);
    assert.match(r.stderr, /^kv-cache: error: validation trace '.*v\.json': not valid JSON \(Unexpected token '\\e'/);
    assert.deepEqual(readdirSync(dir), ['v.json']);
  }));
