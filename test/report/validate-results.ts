// The tests' one check of results files: the published JSON Schema (generated from the zod schema,
// as `kv-cache schema` prints it) validated with an independent validator, Ajv (draft 2020-12).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { resultsJsonSchema } from '../../src/report/results-schema.js';
import type { ReplayResultsDocument, ResultsDocument, SchemaName } from '../../src/report/results-schema.js';

function compile(which: SchemaName): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // Ajv checks formats only through a plug-in; this one check is all the schema needs.
  ajv.addFormat(
    'date-time',
    (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)),
  );
  return ajv.compile(resultsJsonSchema(which));
}

const VALIDATORS: Readonly<Record<SchemaName, ValidateFunction>> = { run: compile('run'), replay: compile('replay') };

/** The schema's complaints about `doc` (empty when valid), one line each. */
export function schemaErrors(doc: unknown, which: SchemaName = 'run'): string[] {
  const validate = VALIDATORS[which];
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

export function assertValidResults(doc: unknown, which: SchemaName = 'run'): void {
  assert.deepEqual(schemaErrors(doc, which), [], `results do not match the published ${which} schema`);
}

/** A run's results file, read and validated against the published schema. */
export async function readValidResults(path: string): Promise<ResultsDocument> {
  const doc = JSON.parse(await readFile(path, 'utf8')) as unknown;
  assertValidResults(doc, 'run');
  return doc as ResultsDocument;
}

/** A replay's results file, read and validated against the published schema. */
export async function readValidReplayResults(path: string): Promise<ReplayResultsDocument> {
  const doc = JSON.parse(await readFile(path, 'utf8')) as unknown;
  assertValidResults(doc, 'replay');
  return doc as ReplayResultsDocument;
}
