// A reader that quits early (`kv-cache schema | head -1`) closes the command's stdout. The command must
// not die of the write error (EPIPE) with a stack trace: it keeps its own exit code, and a run still
// saves its results file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN, inTempDir, smallWorkloadArgs } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Runs the command with the read end of its stdout closed before the command can write anything. */
function runIntoClosedReader(args: readonly string[]): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone long before node has started: every write fails
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

for (const args of [['schema'], ['schema', 'replay'], ['--help'], ['--version']]) {
  test(`kv-cache ${args.join(' ')} into a reader that closed: no stack trace, exit code 0`, async () => {
    const r = await runIntoClosedReader(args);
    assert.deepEqual(r, { code: 0, signal: null, stderr: '' });
  });
}

test('a run whose reader closed goes on, saves its results and exits 0', async () => {
  await inTempDir(async (dir) => {
    const common = await smallWorkloadArgs(dir);
    const out = join(dir, 'run.json');
    const r = await runIntoClosedReader([
      ...common,
      '--num-users',
      '2',
      '--duration',
      '30',
      '--max-requests',
      '10',
      '--io-trace-log',
      join(dir, 'trace.csv'),
      '--output',
      out,
    ]);
    assert.deepEqual(r, { code: 0, signal: null, stderr: '' });
    const results = await readValidResults(out);
    assert.ok(results.summary.total_requests >= 10, `${results.summary.total_requests} requests`);
  });
});
