// Imported first by every bench script (before anything that may throw at load): an error that reaches
// the top — a bad option, a missing file, a run that failed — is one line naming it, never a stack
// trace, with exit status 2 for bad input (UsageError, or node:util parseArgs' own refusals) and 1
// otherwise. A script that catches its own errors keeps doing so; this is for what it does not catch.
import { basename } from 'node:path';

/** Bad input to a bench script: its message says what to change. */
export class UsageError extends Error {}

/** parseArgs refuses with codes that start so (an unknown option, a missing or wrong value, a stray positional). */
const PARSE_ARGS_CODE = 'ERR_PARSE_ARGS_';

export function isUsageError(e: unknown): boolean {
  if (e instanceof UsageError) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith(PARSE_ARGS_CODE);
}

/** `bench:<name>` for the script running (dist/bench/<name>.js). */
export function scriptName(argv1 = process.argv[1] ?? 'bench'): string {
  return `bench:${basename(argv1).replace(/\.[cm]?js$/, '')}`;
}

/** What Node does with an uncaught error — exit at once — without the stack trace. */
function failCleanly(e: unknown): void {
  process.stderr.write(`${scriptName()}: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(isUsageError(e) ? 2 : 1);
}

// A top-level await that rejects reaches here as an uncaught exception too.
process.on('uncaughtException', failCleanly);
process.on('unhandledRejection', failCleanly);
