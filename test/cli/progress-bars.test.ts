import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amountText, prepareProgressRenderer } from '../../src/cli/progress-bars.js';
import type { PrepareProgress } from '../../src/engine/prepare.js';
import { GiB } from '../../src/util/units.js';

/** A stream that keeps what is written; a terminal or not. */
function fakeStream(isTTY: boolean): { write: (s: string) => boolean; isTTY: boolean; text: () => string } {
  let out = '';
  return {
    isTTY,
    write: (s) => {
      out += s;
      return true;
    },
    text: () => out,
  };
}

/** The events of a step of `total` units done one by one, the last `finished`. */
function step(phase: PrepareProgress['phase'], total: number, unit: PrepareProgress['unit'], upTo = total, by = 1): PrepareProgress[] {
  const events: PrepareProgress[] = [{ phase, done: 0, total, unit, finished: false }];
  for (let d = by; d <= upTo; d += by) events.push({ phase, done: d, total, unit, finished: false });
  events.push({ phase, done: upTo, total, unit, finished: true });
  return events;
}

test('not a terminal: one plain line per 10 %, no escape codes', () => {
  const s = fakeStream(false);
  const render = prepareProgressRenderer(s, true); // bars asked for, but the stream is no terminal
  for (const e of step('prepopulation', 20, 'entries')) render(e);
  const lines = s.text().split('\n').filter(Boolean);
  assert.deepEqual(
    lines,
    [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((p) => `Pre-population: ${p} % (${(p / 5).toString()} of 20 entries)`),
  );
  assert.ok(!s.text().includes('\u001b'), 'no ESC byte');
});

test('a step cut short says where it stopped; bytes are shown in GiB', () => {
  const s = fakeStream(false);
  const render = prepareProgressRenderer(s, false);
  for (const e of step('preconditioning', 4 * GiB, 'bytes', 1.5 * GiB, 0.5 * GiB)) render(e);
  assert.equal(
    s.text(),
    [
      'Preconditioning: 10 % (0.50 of 4.00 GiB)', // 12.5 %
      'Preconditioning: 20 % (1.00 of 4.00 GiB)', // 25 %
      'Preconditioning: 30 % (1.50 of 4.00 GiB)', // 37.5 %
      'Preconditioning: stopped at 1.50 of 4.00 GiB',
      '',
    ].join('\n'),
  );
  assert.equal(amountText({ done: 1234, total: 5000, unit: 'documents' }), '1,234 of 5,000 documents');
});

test('a terminal gets a bar redrawn in place, ending at 100 %', () => {
  const s = fakeStream(true);
  const render = prepareProgressRenderer(s, true);
  for (const e of step('rag_ingestion', 4, 'documents')) render(e);
  assert.ok(s.text().includes('\u001b'), 'terminal control codes');
  assert.match(s.text(), /RAG ingestion +\[[^\]]+\] 100% 4 of 4 documents/);
});
