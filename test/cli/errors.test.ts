// ConfigError: one message listing every problem, with the user's own text shown inert.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, MAX_LISTED_PROBLEMS } from '../../src/cli/errors.js';
import { parse } from './helpers.js';

test('a problem quoting a path with a newline or an escape sequence stays one line, the characters shown escaped', () => {
  assert.equal(
    new ConfigError(["--cache-dir 'res\nid #' does not exist"]).message,
    "Invalid configuration: --cache-dir 'res\\nid #' does not exist",
  );
  const two = new ConfigError(['a \u001b[2Kfake VALID\r', 'b']).message;
  assert.equal(two, 'Invalid configuration (2 problems):\n  - a \\e[2Kfake VALID\\r\n  - b');
  assert.deepEqual(new ConfigError(['x\ny']).problems, ['x\ny'], 'the problems themselves are kept as found');
});

test('more problems than are listed: the first ones, and a count of the rest', () => {
  const many = Array.from({ length: MAX_LISTED_PROBLEMS + 3 }, (_, i) => `p${i}`);
  const lines = new ConfigError(many).message.split('\n');
  assert.equal(lines[0], `Invalid configuration (${many.length} problems):`);
  assert.equal(lines.length, 1 + MAX_LISTED_PROBLEMS + 1);
  assert.equal(lines.at(-1), '  - … and 3 more (not listed)');
});

test('a run whose --cache-dir holds a newline is refused with the name escaped', () => {
  assert.throws(
    () => parse(['--cache-dir', '/nonexistent/res\nid #']),
    (e: unknown) => e instanceof ConfigError && e.message.includes("'/nonexistent/res\\nid #'") && !e.message.includes('res\nid'),
  );
});
