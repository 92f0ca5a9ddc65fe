// File-name and column stamps, in local time, zero-padded as the reference writes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columnStamp, fileStamp } from '../../src/util/dates.js';

test('stamps of a local date, zero-padded', () => {
  const d = new Date(2026, 0, 5, 7, 8, 9); // 5 January 2026, 07:08:09 local
  assert.equal(fileStamp(d), '20260105_070809');
  assert.equal(columnStamp(d), '2026-01-05 07:08:09');
  const late = new Date(2025, 11, 31, 23, 59, 58);
  assert.equal(fileStamp(late), '20251231_235958');
  assert.equal(columnStamp(late), '2025-12-31 23:59:58');
});
