// The BurstGPT source: picked by --use-burst-trace, its files checked at open (a trace with no usable
// row is a TraceError naming the skipped rows), described and logged as before, rows as requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { burstGptSource, burstShape } from '../../../src/engine/sources/burstgpt.js';
import { TraceError } from '../../../src/workload/burstgpt.js';
import { parse, tempDir } from '../../cli/helpers.js';
import { drain, usersContext } from './helpers.js';

const HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

function trace(...rows: string[]): string {
  const path = join(tempDir(), 't.csv');
  writeFileSync(path, [HEADER, ...rows, ''].join('\n'));
  return path;
}

test('burstgpt source: picked by --use-burst-trace; its input is --burst-trace-path', () => {
  const { config } = parse(['--use-burst-trace', '--burst-trace-path', 'x.csv']);
  assert.equal(burstGptSource.pick?.picked(config), true);
  assert.equal(burstGptSource.pick?.picked(parse(['--burst-trace-path', 'x.csv']).config), false);
  assert.deepEqual(burstGptSource.inputs(config), [{ flag: '--burst-trace-path', path: 'x.csv' }]);
  assert.deepEqual(burstGptSource.inputErrors, [TraceError]);
});

test('burstgpt source: opened, its log line; its users replay the rows; the results block counts them', async () => {
  const path = trace('0,ChatGPT,100,20,120,Conversation log', 'oops', '1,ChatGPT,0,5,5,Conversation log');
  const opened = await burstGptSource.open(parse(['--use-burst-trace', '--burst-trace-path', path, '--trace-speedup', '2']).config);
  assert.deepEqual(opened.logLines(), ['BurstGPT: 1 file(s), speed-up 2, cycles unlimited']);
  const users = opened.users(
    usersContext(1, { cfg: { numUsers: 1, maxRequests: 0, requestRate: 0, replayCycles: 1, disableMultiTurn: false } }),
  );
  const steps = await drain(users.pool(0), 4); // unlimited cycles: the first two passes
  assert.deepEqual(
    steps.map((s) => [s.request.id, s.request.contextTokens, s.request.generationTokens, s.request.scheduledAtMs]),
    [
      ['trace_user_0_req_0000', 100, 20, 0],
      ['trace_user_1_req_0001', 1, 5, 500],
      ['trace_user_2_req_0002', 100, 20, 500],
      ['trace_user_3_req_0003', 1, 5, 1000],
    ],
  );
  assert.deepEqual(opened.describe(), {
    kind: 'burstgpt',
    files: [path],
    rows: 2,
    skipped_rows: 1,
    skipped_examples: [{ file: path, line: 3, reason: 'expected 6 fields, found 1' }],
  });
});

test('burstgpt source: a trace without a usable row is refused at open, naming the skipped rows', async () => {
  const path = trace('x,ChatGPT,1,2,3,Conversation log');
  await assert.rejects(burstGptSource.open(parse(['--use-burst-trace', '--burst-trace-path', path]).config), {
    name: 'TraceError',
    message: `BurstGPT trace file "${path}" has no usable row: all 1 data rows were skipped (line 2: Timestamp: "x" is not a number); expected rows like 5,ChatGPT,472,18,490,Conversation log under the header Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`,
  });
});

test('burstgpt rows as requests: the reference ids, 4-digit request numbers, at least 1 context token', () => {
  const row = { timestampS: 3, requestTokens: 0, responseTokens: 7, totalTokens: 7, file: 'f', line: 9 };
  assert.deepEqual(burstShape({ row, pass: 2, index: 12345, scheduledAtMs: 42 }), {
    id: 'trace_user_345_req_12345',
    userId: 'trace_user_345',
    contextTokens: 1,
    generationTokens: 7,
    cacheKey: 'trace_user_345_req_12345',
    turn: 1,
    previousTurnKeys: [],
    scheduledAtMs: 42,
  });
});
