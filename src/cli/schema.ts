// `kv-cache schema [run|replay]`: prints the JSON Schema (draft 2020-12) of a results document,
// generated from the zod schema the results are built against.
import { resultsJsonSchema, SCHEMA_VERSION } from '../report/results-schema.js';

const SCHEMA_HELP = `Usage: kv-cache schema [run|replay]

Prints the JSON Schema (draft 2020-12) of the results file of a run (default) or of a replay.
Results files carry the schema version they follow in kvcache_bench.schema_version (this build: ${SCHEMA_VERSION}).`;

export function schemaMain(argv: readonly string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${SCHEMA_HELP}\n`);
    return 0;
  }
  const [which = 'run', ...rest] = argv;
  if ((which !== 'run' && which !== 'replay') || rest.length > 0) {
    process.stderr.write(`kv-cache schema: error: expected 'run' or 'replay', got '${argv.join(' ')}'\n`);
    return 2;
  }
  process.stdout.write(`${JSON.stringify(resultsJsonSchema(which), null, 2)}\n`);
  return 0;
}
