// The check's result as console lines (per rule `id name STATUS`, then its evidence) and as a JSON
// document with its own schema and schema_version. Pure functions of a CheckResult; every string
// from the inputs was made inert when its evidence line was made.
import * as z from 'zod';
import { inert } from '../../util/safe-text.js';
import type { CheckResult } from './rules.js';
import { STATUSES } from './types.js';

export const CHECK_SCHEMA_VERSION = '1.0.0';

const StatusSchema = z.enum(STATUSES);

export const CheckDocumentSchema = z
  .strictObject({
    schema_version: z.literal(CHECK_SCHEMA_VERSION).describe('version of this document shape'),
    tool: z.literal('kvcache-bench'),
    checked: z.string().describe('the run directory or results file checked (absolute)'),
    kind: z.enum(['run', 'file']).describe('a run directory of kv-cache mlperf, or one results file'),
    division: z.enum(['closed', 'open']).nullable().describe('null when neither run.json nor --division says'),
    division_from: z.string().describe('where the division came from'),
    verdict: StatusSchema.describe('FAIL if any rule fails; else CANNOT TELL if any cannot be told; else PASS'),
    counts: z.strictObject({
      PASS: z.number().int().min(0),
      FAIL: z.number().int().min(0),
      'NOT APPLICABLE': z.number().int().min(0),
      'CANNOT TELL': z.number().int().min(0),
    }),
    rules: z.array(
      z.strictObject({
        id: z.string().describe('Rules.md §6 id, or KB.n for the checks of kvcache-bench'),
        name: z.string(),
        applies_to: z.array(z.enum(['any', 'closed', 'run', 'multi-rank', 'multi-host'])),
        status: StatusSchema,
        evidence: z.array(
          z.strictObject({
            file: z.string().describe("relative to `checked` ('.' for the run itself)"),
            field: z.string(),
            value: z.string(),
            required: z.string(),
          }),
        ),
      }),
    ),
  })
  .meta({ title: 'kvcache-bench check', description: 'kv-cache check: the MLPerf Storage KV-cache rules (Rules.md §6) against a run' });
export type CheckDocument = z.output<typeof CheckDocumentSchema>;

export function checkDocument(c: CheckResult): CheckDocument {
  const counts = { PASS: 0, FAIL: 0, 'NOT APPLICABLE': 0, 'CANNOT TELL': 0 };
  for (const r of c.results) counts[r.status]++;
  return {
    schema_version: CHECK_SCHEMA_VERSION,
    tool: 'kvcache-bench',
    checked: inert(c.input.root),
    kind: c.input.kind,
    division: c.input.division ?? null,
    division_from: inert(c.input.divisionFrom),
    verdict: c.verdict,
    counts,
    rules: c.results.map((r) => ({ id: r.id, name: r.name, applies_to: [...r.appliesTo], status: r.status, evidence: [...r.evidence] })),
  };
}

/** Evidence lines shown per rule on the console; --json has them all. */
const MAX_LINES_SHOWN = 12;

export function checkLines(doc: CheckDocument): string[] {
  const what = doc.kind === 'run' ? 'run directory' : 'results file';
  const division = doc.division === null ? 'division unknown' : `division ${doc.division.toUpperCase()} (${doc.division_from})`;
  const lines = [`kv-cache check ${doc.checked}: ${what}, ${division}`];
  for (const r of doc.rules) {
    lines.push(`${r.id} ${r.name} ${r.status}`);
    for (const e of r.evidence.slice(0, MAX_LINES_SHOWN)) lines.push(`  ${e.file}: ${e.field} = ${e.value} (required: ${e.required})`);
    if (r.evidence.length > MAX_LINES_SHOWN) lines.push(`  … and ${r.evidence.length - MAX_LINES_SHOWN} more (--json has every line)`);
  }
  const c = doc.counts;
  lines.push(
    `Check verdict: ${doc.verdict} (${c.PASS} PASS, ${c.FAIL} FAIL, ${c['NOT APPLICABLE']} NOT APPLICABLE, ${c['CANNOT TELL']} CANNOT TELL)`,
  );
  return lines;
}
