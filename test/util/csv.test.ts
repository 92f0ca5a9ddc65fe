// One CSV record's fields (moved out of workload/burstgpt.ts so a new trace source can reuse it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitCsvLine } from '../../src/util/csv.js';

test('csv: fields split with RFC 4180 quoting', () => {
  assert.deepEqual(splitCsvLine('a,b,,c'), ['a', 'b', '', 'c']);
  assert.deepEqual(splitCsvLine('a,'), ['a', '']);
  assert.deepEqual(splitCsvLine(''), ['']);
  assert.deepEqual(splitCsvLine('"x,y","say ""hi""",z'), ['x,y', 'say "hi"', 'z']);
  assert.deepEqual(splitCsvLine('""'), ['']);
  assert.deepEqual(splitCsvLine(' "a b" ,c'), ['a b', 'c']);
  assert.equal(splitCsvLine('"open'), undefined);
  assert.equal(splitCsvLine('"a"b,c'), undefined);
});
