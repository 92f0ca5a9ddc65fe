// The Mooncake source: --trace-block-tokens says how many tokens one hash id covers (issue 35), for
// the check at open, the chains of the requests and the results block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mooncakeBlockTokens, mooncakeSource } from '../../../src/engine/sources/mooncake.js';
import { parse, tempDir } from '../../cli/helpers.js';
import { drain, usersContext } from './helpers.js';

function trace(...records: object[]): string {
  const path = join(tempDir(), 't.jsonl');
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

const ATC = [
  { timestamp: 0, input_length: 40, output_length: 2, hash_ids: [1, 2, 3] },
  { timestamp: 10, input_length: 33, output_length: 2, hash_ids: [1, 2, 4] },
];

test('mooncake source: --trace-block-tokens 16 reads a 16-token-block trace; blocks of 16 unless --kv-block-tokens', async () => {
  const path = trace(...ATC);
  const { config } = parse(['--mooncake-trace', path, '--trace-block-tokens', '16', '--trace-speedup', '0', '--replay-cycles', '1']);
  assert.equal(config.traceBlockTokens, 16);
  assert.equal(mooncakeBlockTokens(config), 16);
  assert.equal(mooncakeSource.blockTokens?.(config), 16);
  const opened = await mooncakeSource.open(config);
  const users = opened.users(usersContext(1));
  const steps = await drain(users.pool(0));
  assert.deepEqual(
    steps.map((s) => s.request.blocks?.map((b) => `${b.key}:${b.tokens}`)),
    [
      ['mc_1_16:16', 'mc_2_16:16', 'mc_3_8:8'],
      ['mc_1_16:16', 'mc_2_16:16', 'mc_4_1:1'],
    ],
  );
  assert.equal(opened.describe().trace_block_tokens, 16);
  assert.equal(opened.describe().block_tokens, 16);
  assert.equal(mooncakeBlockTokens(parse(['--mooncake-trace', path, '--trace-block-tokens', '16', '--kv-block-tokens', '8']).config), 8);
});

test('mooncake source: the same trace read with the default 512 tokens per id has no usable record', async () => {
  const path = trace(...ATC);
  await assert.rejects(mooncakeSource.open(parse(['--mooncake-trace', path]).config), {
    name: 'MooncakeTraceError',
    message: new RegExp(
      'has no usable record: all 2 lines were skipped \\(line 1: "hash_ids" has 3 ids for input_length 40 \\(expected 1, one per 512 tokens\\)',
    ),
  });
});

test('--trace-block-tokens must be 1 or more', () => {
  assert.throws(() => parse(['--trace-block-tokens', '0']), /trace-block-tokens/);
});
