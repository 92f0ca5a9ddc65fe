// The `kv-cache` command: arguments → RunConfig, checked; the run itself is run-command.ts.
// Exit codes: 0 success, 2 bad input (one message, no stack trace, nothing written), 1 failure
// during the run, a storage tier that filled up (stop_reason storage_full), or while writing the
// spreadsheet (the JSON results are still saved), 130/143 interrupted (results saved). A closed
// stdout (the reader quit) changes none of them.
import { readFileSync } from 'node:fs';
import type { RunConfig } from '../settings/run-config.js';
import { ConfigError } from './errors.js';
import { helpText, parseRunArgs, wantsHelp } from './run-args.js';
import { replayMain } from './replay.js';
import { schemaMain } from './schema.js';
import { outputProblems } from './cache-dir.js';
import { runCommand, trialProblems } from './run-command.js';

function toolVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Features whose flags are accepted by the parser but that this version does not run yet. */
function notImplemented(c: RunConfig): string[] {
  const out: string[] = [];
  const no = (on: boolean, flag: string): void => {
    if (on) out.push(`${flag} is not implemented yet`);
  };
  no(c.enableLatencyTracing, '--enable-latency-tracing');
  return out;
}

/**
 * A reader that stops early (`kv-cache schema | head -1`) closes stdout under us. That is not the
 * command failing: later output is dropped (a run goes on and still saves its results file) and the
 * exit code stays the command's own. Any other stdout error still surfaces.
 */
function tolerateClosedStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

export async function main(argv: readonly string[]): Promise<number> {
  tolerateClosedStdout(); // first: every subcommand writes to stdout
  const version = toolVersion();
  if (argv[0] === 'replay') return replayMain(argv.slice(1), version);
  if (argv[0] === 'schema') return schemaMain(argv.slice(1));
  // A leading `run` subcommand is dropped by the argv tokenizer (parse-argv.ts).
  if (argv.includes('--version')) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (wantsHelp(argv)) {
    process.stdout.write(`${helpText()}\n`);
    return 0;
  }
  let config: RunConfig;
  try {
    const parsed = parseRunArgs(argv, new Date());
    config = parsed.config;
    const problems = [
      ...notImplemented(config),
      ...outputProblems(config.output),
      ...(config.xlsxOutput !== undefined ? outputProblems(config.xlsxOutput, '--xlsx-output') : []),
      ...(config.ioTraceLog !== undefined ? outputProblems(config.ioTraceLog, '--io-trace-log') : []),
      ...trialProblems(config),
    ];
    if (problems.length > 0) throw new ConfigError(problems);
    for (const w of parsed.warnings) process.stderr.write(`kv-cache: warning: ${w}\n`);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  return runCommand(config, version);
}
