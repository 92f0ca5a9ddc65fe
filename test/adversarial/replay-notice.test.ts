// A paced replay says up front how long it will take and how to shorten it (an 11-day gap in a trace
// otherwise waits 11 days in silence).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pacedReplayNotice } from '../../src/engine/replay.js';

test('the paced replay notice: the span in a human unit, and what shortens it', () => {
  assert.equal(
    pacedReplayNotice(11 * 86_400, undefined),
    'paced replay: the trace spans 11.0 days from its first row to its last, so at trace pace it takes about that long; to shorten it give --duration SECONDS (it stops there and reports what was replayed), or leave out --paced to issue the rows as fast as possible',
  );
  assert.equal(
    pacedReplayNotice(5400, 60),
    'paced replay: the trace spans 90.0 minutes from its first row to its last; --duration stops it after 60.0 s',
  );
  assert.match(pacedReplayNotice(3 * 3600, 4 * 3600), /spans 3\.0 hours .* so at trace pace it takes about that long/);
  assert.match(pacedReplayNotice(0, undefined), /spans 0\.0 s/);
});
