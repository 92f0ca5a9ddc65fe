// Property and fuzz tests of the dataset and trace readers (issue 12): any file content gives records
// or the reader's typed input error (DatasetError, TraceError) — never another exception — and the
// input classes that used to hang or explode are refused with one clear message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { DatasetError, loadShareGpt } from '../../src/workload/sharegpt.js';
import type { ShareGptLoadOptions } from '../../src/workload/sharegpt.js';
import { createBurstReadStats, readBurstRows, TraceError } from '../../src/workload/burstgpt.js';
import { tokenCounter } from '../../src/workload/tokens.js';
import { withTempDir } from '../util/temp-dir.js';

const OPTS: ShareGptLoadOptions = {
  maxConversations: 5,
  tokens: tokenCounter('chars'),
  maxContextTokens: 100,
  maxGenerationTokens: 100,
  chunkBytes: 7,
  maxRecordBytes: 4096,
};

const jsonPieces = fc.constantFrom(
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '"',
  '\\',
  '"conversations"',
  '"messages"',
  '"from"',
  '"human"',
  '"gpt"',
  '"role"',
  '"user"',
  '"assistant"',
  '"value"',
  '"content"',
  '"hi there"',
  '"id"',
  '1',
  '-0.5e3',
  'null',
  'true',
  ' ',
  '\n',
  '\uFEFF',
  '中',
  '\u0000',
);
const datasetText = fc.oneof(
  fc.array(jsonPieces, { maxLength: 60 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc
    .array(fc.tuple(fc.constantFrom('human', 'gpt', 'user', 'assistant', 'system', 'x'), fc.string({ maxLength: 30 })), { maxLength: 6 })
    .map((msgs) => JSON.stringify([{ id: 'a', conversations: msgs.map(([from, value]) => ({ from, value })) }])),
);

test('ShareGPT reader: any file gives conversations or a DatasetError', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'd.json');
    fc.assert(
      fc.property(datasetText, (text) => {
        writeFileSync(path, text);
        try {
          const { conversations } = loadShareGpt(path, OPTS);
          assert.ok(conversations.length > 0);
        } catch (e: unknown) {
          if (!(e instanceof DatasetError)) throw e;
          assert.ok(e.message.startsWith(`ShareGPT dataset '${path}': `), e.message);
        }
      }),
      { numRuns: 300 },
    );
  }));

test('ShareGPT reader: a FIFO is refused without opening it, an oversized record without buffering it', () =>
  withTempDir(async (dir) => {
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    assert.throws(() => loadShareGpt(fifo, OPTS), {
      name: 'DatasetError',
      message: `ShareGPT dataset '${fifo}': is a FIFO (named pipe), not a regular file. Expected a readable ShareGPT JSON file (--dataset-path)`,
    });
    const big = join(dir, 'big.json');
    writeFileSync(big, JSON.stringify([{ id: 'a', conversations: [{ from: 'human', value: 'x'.repeat(5000) }] }]));
    assert.throws(
      () => loadShareGpt(big, OPTS),
      /big\.json': record 1 \(which starts at line 1, column 2\) is larger than 4096 bytes \(no real conversation is that large\)\. A valid file/,
    );
  }));

const csvLine = fc.oneof(
  fc.constantFrom(
    'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type',
    '5,ChatGPT,472,18,490,Conversation log',
    ',ChatGPT,1,2,,x',
    '1e400,ChatGPT,1,2,3,x',
    '-1,ChatGPT,1,2,3,x',
    '1,ChatGPT,99999999999999999999,2,3,x',
    '"1",ChatGPT,"1""",2,3,x',
    '"unclosed,ChatGPT,1,2,3,x',
    '',
    '\r',
    '\uFEFFTimestamp',
  ),
  fc.string({ maxLength: 40 }),
  fc.array(fc.oneof(fc.integer().map(String), fc.double().map(String), fc.constant('"')), { maxLength: 8 }).map((f) => f.join(',')),
);

test('BurstGPT reader: any file gives rows or a TraceError', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 't.csv');
    await fc.assert(
      fc.asyncProperty(fc.array(csvLine, { maxLength: 12 }), async (lines) => {
        writeFileSync(path, lines.join('\n'));
        const stats = createBurstReadStats();
        let rows = 0;
        try {
          for await (const row of readBurstRows([path], stats)) {
            assert.ok(Number.isFinite(row.timestampS) && Number.isSafeInteger(row.requestTokens) && row.requestTokens >= 0);
            rows++;
          }
          assert.equal(stats.rows, rows);
        } catch (e: unknown) {
          if (!(e instanceof TraceError)) throw e;
          assert.ok(e.message.includes(path), e.message);
        }
      }),
      { numRuns: 200 },
    );
  }));

test('BurstGPT reader: a FIFO is refused before it is opened', () =>
  withTempDir(async (dir) => {
    const fifo = join(dir, 'fifo.csv');
    execFileSync('mkfifo', [fifo]);
    const rows = readBurstRows([fifo]);
    await assert.rejects(rows.next(), {
      name: 'TraceError',
      message: `cannot open BurstGPT trace file "${fifo}": is a FIFO (named pipe), not a regular file`,
    });
  }));
