// The check as console lines and as its JSON document, from the hand-made CLOSED run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkDocument, checkLines, CheckDocumentSchema, CHECK_SCHEMA_VERSION } from '../../../src/mlperf/check/report.js';
import { runCheck } from '../../../src/mlperf/check/rules.js';
import { closedRun, docOf, edit } from './fixtures.js';

test('the document: its schema version, counts per status, every rule with its evidence', () => {
  const doc = CheckDocumentSchema.parse(checkDocument(runCheck(closedRun())));
  assert.equal(doc.schema_version, CHECK_SCHEMA_VERSION);
  assert.deepEqual(doc.counts, { PASS: 16, FAIL: 0, 'NOT APPLICABLE': 2, 'CANNOT TELL': 0 });
  assert.deepEqual(
    [doc.checked, doc.kind, doc.division, doc.division_from, doc.verdict],
    ['/runs/kvcache_1', 'run', 'closed', 'run.json division', 'PASS'],
  );
  assert.deepEqual(doc.rules[2], {
    id: '6.3.2.2',
    name: 'kvcacheAutoscalingProhibited',
    applies_to: ['closed'],
    status: 'PASS',
    evidence: [{ file: '.', field: 'effective_config.args.enable_autoscaling', value: 'false in 18 rank file(s)', required: 'false' }],
  });
});

test('the lines: a heading, per rule `id name STATUS` and its evidence (at most 12, then how many more), the verdict last', () => {
  // Every rank of option 1 ran buffered I/O and a 1 s duration: 6 ranks × 2 lines fail 6.6.1, and the pass line follows.
  const input = edit(closedRun(), (c) => {
    for (const t of c.trials)
      if (t.option === '1')
        for (const f of t.files) Object.assign(f.doc.kvcache_bench.effective_config.args, { io_mode: 'buffered', trial_pause: 1 });
  });
  const lines = checkLines(checkDocument(runCheck(input)));
  assert.equal(lines[0], 'kv-cache check /runs/kvcache_1: run directory, division CLOSED (run.json division)');
  const at = lines.indexOf('6.6.1 kvcacheClosedImmutable FAIL');
  assert.equal(
    lines[at + 1],
    '  option_1/trial_1/rank_0/kvcache_results_x.json: effective_config.args.io_mode = buffered (required: "direct" (the default))',
  );
  assert.equal(lines[at + 13], '  … and 5 more (--json has every line)');
  assert.equal(lines[at + 14], '6.3.3.1 kvcacheClientDefinition PASS');
  assert.equal(lines.at(-1), 'Check verdict: FAIL (15 PASS, 1 FAIL, 2 NOT APPLICABLE, 0 CANNOT TELL)');
  assert.equal(docOf(input, 2, 1, 0).kvcache_bench.effective_config.args.io_mode, 'direct');
});
