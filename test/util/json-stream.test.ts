// The streaming JSON array reader and the syntax-error locator (moved out of workload/sharegpt.ts so a
// new source can reuse them): elements split at any chunk boundary, problems named at their place, an
// element size limit with the reader's own note, and the locator agreeing with JSON.parse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arrayElements, findJsonSyntaxError, parseElement } from '../../src/util/json-stream.js';
import type { JsonArraySource, JsonPlace, RawElement } from '../../src/util/json-stream.js';

/** A failure as plain data, so tests compare the problem and its place exactly. */
class Failure extends Error {
  constructor(
    readonly problem: string,
    readonly at: JsonPlace | undefined,
  ) {
    super(problem);
  }
}

/** A source over `text` handed out `chunk` bytes at a time. */
function source(text: string, chunk: number, extra: Partial<JsonArraySource> = {}): JsonArraySource {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  return {
    read: () => {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + chunk));
      at += piece.length;
      return piece;
    },
    fail: (problem, place) => new Failure(problem, place),
    ...extra,
  };
}

function failureOf(fn: () => unknown): { problem: string; at: JsonPlace | undefined } {
  try {
    fn();
  } catch (e) {
    if (e instanceof Failure) return { problem: e.problem, at: e.at };
    throw e;
  }
  assert.fail('expected a failure');
}

test('json-stream: elements come out whole, with index and place, whatever the chunk size (BOM, multi-byte, brackets in strings)', () => {
  const text = '\uFEFF[\n  {"a": "é]}\\"x"},\n  [1, 2],\n  3, "s,t", null\n]\n';
  const expected: RawElement[] = [
    { index: 0, text: '{"a": "é]}\\"x"}', line: 2, column: 3 },
    { index: 1, text: '[1, 2]', line: 3, column: 3 },
    { index: 2, text: '3', line: 4, column: 3 },
    { index: 3, text: '"s,t"', line: 4, column: 6 },
    { index: 4, text: 'null', line: 4, column: 13 },
  ];
  for (const chunk of [1, 2, 3, 7, 1024]) assert.deepEqual([...arrayElements(source(text, chunk))], expected, `chunk ${chunk}`);
  assert.deepEqual([...arrayElements(source(' [ ] ', 1))], []);
});

test('json-stream: problems outside elements are named at their line and column', () => {
  const cases: Array<[string, string, JsonPlace | undefined]> = [
    ['', 'the file is empty', undefined],
    ['{"a": 1}', 'the top level is an object, not an array (JSON Lines, one record per line, is not supported)', undefined],
    ['\n x', "unexpected character 'x'", { line: 2, column: 2 }],
    ['[1,]', "expected a record, found ']' (trailing comma?)", { line: 1, column: 4 }],
    ['[1 2]', "expected ',' or ']' after record 1", { line: 1, column: 4 }],
    ['[1] x', "unexpected text after the closing ']' of the array", { line: 1, column: 5 }],
    ['[1,', "unexpected end of file: the array is not closed with ']'; is the file truncated?", { line: 1, column: 4 }],
    [
      '[1, {"a":',
      'unexpected end of file inside record 2 (which starts at line 1, column 5); is the file truncated?',
      { line: 1, column: 10 },
    ],
  ];
  for (const [text, problem, at] of cases)
    assert.deepEqual(
      failureOf(() => [...arrayElements(source(text, 2))]),
      { problem, at },
      text,
    );
});

test('json-stream: an element past maxElementBytes is refused with the reader note; the rest is never read', () => {
  let reads = 0;
  const inner = source('[[1,2,3,4,5,6,7,8], 1, 2]', 4);
  const counted: JsonArraySource = {
    ...inner,
    read: () => (reads++, inner.read()),
    maxElementBytes: 8,
    maxElementNote: 'nothing real is that large',
  };
  assert.deepEqual(
    failureOf(() => [...arrayElements(counted)]),
    { problem: 'record 1 (which starts at line 1, column 2) is larger than 8 bytes (nothing real is that large)', at: undefined },
  );
  assert.equal(reads, 3, 'reading stops at the oversized element');
  const noNote = { ...source('[[1,2,3,4,5,6,7,8]]', 64), maxElementBytes: 8 };
  assert.equal(failureOf(() => [...arrayElements(noNote)]).problem, 'record 1 (which starts at line 1, column 2) is larger than 8 bytes');
});

test('json-stream: parseElement parses, or names the syntax error at its place in the file', () => {
  const s = source('', 1);
  assert.deepEqual(parseElement({ index: 0, text: '{"a": [1]}', line: 1, column: 2 }, s), { a: [1] });
  assert.deepEqual(
    failureOf(() => parseElement({ index: 2, text: '{"a":\n  "é" 1}', line: 4, column: 3 }, s)),
    { problem: "expected ',' or '}', unexpected character \"1\" (in record 3)", at: { line: 5, column: 7 } },
  );
});

test('json-stream: the syntax locator agrees with JSON.parse', () => {
  const valid = ['[]', '{}', '{"a": [1, -2.5e+3, true, false, null, "\\u00e9\\n"]}', ' "x" ', '0'];
  for (const s of valid) assert.equal(findJsonSyntaxError(s), undefined, s);
  const invalid: Array<[string, number]> = [
    ['{"a":}', 5],
    ['[1,2', 4],
    ['[1,,2]', 3],
    ['{"a" 1}', 5],
    ['"\\x"', 1],
    ['[01]', 2],
    ['tru', 0],
    ['[1] 2', 4],
    ['{,}', 1],
    ['', 0],
    ['["\\u12G4"]', 2],
  ];
  for (const [s, offset] of invalid) {
    assert.throws(() => JSON.parse(s), SyntaxError);
    assert.equal(findJsonSyntaxError(s)?.offset, offset, s);
  }
});
