// Text from inputs shown on a console, written into a line-based file or a spreadsheet cell.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasControl, inert, inertCell } from '../../src/util/safe-text.js';

test('inert: control characters become visible escapes, everything else is kept', () => {
  assert.equal(inert('plain text, tab\tand ünïcode'), 'plain text, tab\tand ünïcode');
  assert.equal(inert('a\nb\r\u001b]52;c;aWQ=\u0007\u001b[2Kfake VALID'), 'a\\nb\\r\\e]52;c;aWQ=\\x07\\e[2Kfake VALID');
  assert.equal(inert('\u0085\u009b\u2028\u202e\u2066'), '\\x85\\x9b\\u2028\\u202e\\u2066');
  assert.equal(hasControl('x\ty'), false);
  assert.equal(hasControl('x\u007fy'), true);
});

test('inertCell: formula-leading cells get an apostrophe, other text is unchanged', () => {
  assert.equal(inertCell('=HYPERLINK("http://x","y")'), `'=HYPERLINK("http://x","y")`);
  assert.equal(inertCell("=cmd|' /C calc'!A0"), `'=cmd|' /C calc'!A0`);
  assert.equal(inertCell('+1'), "'+1");
  assert.equal(inertCell('-2'), "'-2");
  assert.equal(inertCell('@SUM(A1)'), "'@SUM(A1)");
  assert.equal(inertCell('\tx'), "'\tx");
  assert.equal(inertCell('llama3.1-8b'), 'llama3.1-8b');
  assert.equal(inertCell('a\nb'), 'a\\nb');
});
