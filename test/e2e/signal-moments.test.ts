// SIGINT/SIGTERM at random moments of `kv-cache` and `kv-cache replay`: whenever the signal lands,
// the command either had not started its work (a message, exit 130/143, nothing created) or saves
// valid partial results marked interrupted and leaves no entry file. Then SIGKILL, and a second run
// in the same cache directory. The moments are printed, so a failure can be replayed by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inTempDir, pacedTrace, runCli, QUICK_RUN } from './run-cli.js';
import type { CliRun } from './run-cli.js';
import { readValidReplayResults, readValidResults } from '../report/validate-results.js';

const RUN = QUICK_RUN;
const MOMENTS = 5;
const NOT_STARTED = /^kv-cache( replay)?: SIG(INT|TERM) before the work started: exiting; nothing was created or written$/m;

/** A moment in [0.2, 3) s and a signal, drawn at random. */
function draw(): { ms: number; signal: NodeJS.Signals } {
  return { ms: Math.round(200 + Math.random() * 2800), signal: Math.random() < 0.5 ? 'SIGINT' : 'SIGTERM' };
}

/**
 * A signal that lands before Node has run the bootstrap's first lines (bin/kv-cache.cjs) takes the
 * default action: the process dies by it, with no exit code. Nothing can have been created then; that
 * is checked like a clean early exit. Otherwise the exit code is 130 (SIGINT) or 143 (SIGTERM).
 */
function diedBeforeBootstrap(r: CliRun, signal: NodeJS.Signals, what: string): boolean {
  if (r.code === null && r.signal === signal && r.stderr === '') return true;
  assert.equal(r.code, signal === 'SIGINT' ? 130 : 143, what);
  return false;
}

const signalled = (args: string[], ms: number, signal: NodeJS.Signals): Promise<CliRun> =>
  runCli(args, { onStart: (kill) => void setTimeout(() => kill(signal), ms) });

test(`run: SIGINT/SIGTERM at ${MOMENTS} random moments: valid partial results or a clean early exit, never an entry file left`, async () => {
  for (let i = 0; i < MOMENTS; i++) {
    const { ms, signal } = draw();
    await inTempDir(async (dir) => {
      const cache = join(dir, 'c');
      await mkdir(cache);
      const out = join(dir, 'out', 'r.json');
      const r = await signalled([...RUN, '--duration', '30', '--cache-dir', cache, '--output', out], ms, signal);
      const what = `${signal} after ${ms} ms: ${r.stderr}`;
      if (diedBeforeBootstrap(r, signal, what) || NOT_STARTED.test(r.stderr)) assert.equal(existsSync(join(dir, 'out')), false, what);
      else {
        const doc = await readValidResults(out);
        assert.equal(doc.kvcache_bench.stop_reason, 'interrupted', what);
        assert.equal(doc.kvcache_bench.interrupted, true, what);
      }
      assert.deepEqual(readdirSync(cache), [], `no entry file left (${what})`);
    });
  }
});

test(`replay: SIGINT/SIGTERM at ${MOMENTS} random moments: valid partial results or a clean early exit, never an entry file left`, async () => {
  await inTempDir(async (dir) => {
    const trace = join(dir, 'paced.csv');
    await writeFile(trace, pacedTrace());
    for (let i = 0; i < MOMENTS; i++) {
      const { ms, signal } = draw();
      const cache = join(dir, `c${i}`);
      await mkdir(cache);
      const out = join(dir, `out${i}`, 'r.json');
      const r = await signalled(['replay', trace, '--paced', '--cache-dir', cache, '--output', out], ms, signal);
      const what = `${signal} after ${ms} ms: ${r.stderr}`;
      if (diedBeforeBootstrap(r, signal, what) || NOT_STARTED.test(r.stderr)) assert.equal(existsSync(join(dir, `out${i}`)), false, what);
      else {
        const doc = await readValidReplayResults(out);
        assert.equal(doc.kvcache_bench.stop_reason, 'interrupted', what);
        assert.equal(doc.kvcache_bench.interrupted, true, what);
        assert.ok(doc.replay.rows < 2100, `stopped before the end of the trace (${what})`);
      }
      assert.deepEqual(readdirSync(cache), [], `no entry file left (${what})`);
    }
  });
});

test('SIGKILL leaves what it leaves; a second run in the same cache directory still succeeds', async () => {
  await inTempDir(async (dir) => {
    const cache = join(dir, 'c');
    await mkdir(cache);
    const killed = await signalled([...RUN, '--duration', '30', '--cache-dir', cache, '--output', join(dir, 'k.json')], 2500, 'SIGKILL');
    assert.equal(killed.signal, 'SIGKILL');
    const out = join(dir, 'r.json');
    const again = await runCli([...RUN, '--duration', '2', '--cache-dir', cache, '--output', out]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await readValidResults(out)).kvcache_bench.stop_reason, 'duration');
  });
});

test('SIGTERM during RAG ingestion of a million documents stops it: interrupted results, no document file left', async () => {
  await inTempDir(async (dir) => {
    const cache = join(dir, 'c');
    await mkdir(cache);
    const out = join(dir, 'r.json');
    let sent = false;
    let kill: (s: NodeJS.Signals) => void = () => undefined;
    const r = await runCli(
      [...RUN, '--enable-rag', '--rag-num-docs', '1000000', '--duration', '60', '--cache-dir', cache, '--output', out],
      {
        onStart: (k) => (kill = k),
        // Ingestion begins right after the memory check's status line.
        onStdout: (soFar) => {
          if (sent || !soFar.includes('Status:')) return;
          sent = true;
          setTimeout(() => kill('SIGTERM'), 500);
        },
      },
    );
    assert.equal(r.code, 143, r.stderr);
    const doc = await readValidResults(out);
    assert.equal(doc.kvcache_bench.stop_reason, 'interrupted');
    assert.equal(doc.requests_completed, 0, 'the measured phase never ran');
    assert.match(r.stdout, /RAG: ingested \d+ documents/);
    assert.deepEqual(readdirSync(cache), []);
  });
});
