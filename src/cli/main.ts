// The `kv-cache` command: arguments → RunConfig, checked; the run itself is run-command.ts.
// Exit codes: 0 success, 2 bad input (one message, no stack trace, nothing written), 1 failure
// during the run, a storage tier that filled up (stop_reason storage_full), or while writing the
// spreadsheet (the JSON results are still saved), 130/143 interrupted (results saved). A closed
// stdout (the reader quit) changes none of them.
import { readFileSync } from 'node:fs';
import type { RunConfig } from '../settings/run-config.js';
import { ConfigError } from './errors.js';
import { helpText, parseRunArgs, wantsHelp } from './run-args.js';
import { findSubcommand, SUBCOMMANDS } from './subcommands.js';
import { outputCollisions, outputProblems } from './cache-dir.js';
import type { InputFile } from './cache-dir.js';
import { processSignalHost, SignalGuard } from './signals.js';
import type { SignalSource } from './signals.js';
import { runCommand, trialProblems } from './run-command.js';
import { sourceInputs } from '../engine/sources/registry.js';

function toolVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The files a run reads: no output may be one of them. */
function runInputs(c: RunConfig): InputFile[] {
  const inputs: InputFile[] = [];
  if (c.config !== undefined) inputs.push({ flag: '--config', path: c.config });
  inputs.push(...sourceInputs(c)); // the workload source's dataset or trace
  return inputs;
}

/** Every output of a run checked at start: usable, not an input, not each other. */
function runOutputProblems(c: RunConfig): string[] {
  const outputs = [
    { flag: '--output', path: c.output },
    ...(c.xlsxOutput !== undefined ? [{ flag: '--xlsx-output', path: c.xlsxOutput }] : []),
    ...(c.ioTraceLog !== undefined ? [{ flag: '--io-trace-log', path: c.ioTraceLog }] : []),
  ];
  const inputs = runInputs(c);
  const each = outputs.flatMap((o) => outputProblems(o.path, o.flag, inputs));
  return each.length > 0 ? each : outputCollisions(outputs);
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

/** The subcommands section of `kv-cache --help`. */
function subcommandHelp(): string {
  const width = Math.max(...SUBCOMMANDS.map((s) => s.usage.length)) + 2;
  const lines = SUBCOMMANDS.map((s) => `  ${s.usage.padEnd(width)}${s.summary}`);
  return ['Other commands (each takes --help):', ...lines, ''].join('\n');
}

/** `signalSource`: the bootstrap's relay of SIGINT/SIGTERM (bin/kv-cache.cjs); default the process. */
export async function main(argv: readonly string[], signalSource?: SignalSource): Promise<number> {
  const sub = findSubcommand(argv[0]);
  const prefix = sub !== undefined ? `kv-cache ${sub.name}` : 'kv-cache';
  const signals = new SignalGuard(prefix, processSignalHost(signalSource)).install(); // before any work
  try {
    return await dispatch(argv, signals);
  } finally {
    signals.uninstall();
  }
}

async function dispatch(argv: readonly string[], signals: SignalGuard): Promise<number> {
  tolerateClosedStdout(); // first: every subcommand writes to stdout
  const version = toolVersion();
  const sub = findSubcommand(argv[0]);
  if (sub !== undefined) return sub.main(argv.slice(1), { version, signals });
  // A leading `run` subcommand is dropped by the argv tokenizer (parse-argv.ts).
  if (argv.includes('--version')) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (wantsHelp(argv)) {
    process.stdout.write(`${helpText()}\n${subcommandHelp()}\n`);
    return 0;
  }
  let config: RunConfig;
  try {
    const parsed = parseRunArgs(argv, new Date());
    config = parsed.config;
    const problems = [...runOutputProblems(config), ...trialProblems(config)];
    if (problems.length > 0) throw new ConfigError(problems);
    for (const w of parsed.warnings) process.stderr.write(`kv-cache: warning: ${w}\n`);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  return runCommand(config, version, signals);
}
