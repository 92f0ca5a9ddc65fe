// `kv-cache schema [run|replay|size]`: prints the JSON Schema (draft 2020-12) of a results document,
// generated from the zod schema the results are built against.
import { resultsJsonSchema } from '../report/results-schema.js';
import { sizeJsonSchema } from '../report/size-report.js';
import type { ArgsOf } from './sub-args.js';
import type { SCHEMA_ARGS } from './subcommand-args.js';

/** `args`: the optional KIND (run or replay), already checked against its declaration in subcommands.ts. */
export function schemaMain(args: ArgsOf<typeof SCHEMA_ARGS>): number {
  const kind = args.positionals[0];
  const schema = kind === 'size' ? sizeJsonSchema() : resultsJsonSchema(kind === 'replay' ? 'replay' : 'run');
  process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
  return 0;
}
