// The `kv-cache` command: arguments → RunConfig → run → results file and console summary.
// Exit codes: 0 success, 2 bad input (one message, no stack trace, nothing written), 1 failure
// during the run or while writing the spreadsheet (the JSON results are still saved),
// 130/143 interrupted (results saved). A closed stdout (the reader quit) changes none of them.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { monotonicClock } from '../util/clock.js';
import { runBenchmark, RunFailedError } from '../engine/run.js';
import type { ProgressSnapshot } from '../engine/run.js';
import type { RunConfig } from '../settings/run-config.js';
import type { RunResult } from '../metrics/result.js';
import { buildResultsJson } from '../report/results-json.js';
import { banner, formatSummary, progressLine } from '../report/console.js';
import { writeSpreadsheet } from '../report/spreadsheet.js';
import { ConfigError } from './errors.js';
import { DatasetError } from '../workload/sharegpt.js';
import { TraceError } from '../workload/burstgpt.js';
import { helpText, parseRunArgs, wantsHelp } from './run-args.js';
import { replayMain } from './replay.js';
import { schemaMain } from './schema.js';
import { outputCollisions, outputProblems } from './cache-dir.js';
import type { InputFile } from './cache-dir.js';
import { processSignalHost, SignalGuard } from './signals.js';
import type { SignalSource } from './signals.js';
import { saveResultsDocument } from './save-results.js';

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
  no(c.validationTrace !== undefined, '--validation-trace');
  return out;
}

/** The files a run reads: no output may be one of them. */
function runInputs(c: RunConfig): InputFile[] {
  const inputs: InputFile[] = [];
  if (c.config !== undefined) inputs.push({ flag: '--config', path: c.config });
  if (c.datasetPath !== undefined) inputs.push({ flag: '--dataset-path', path: c.datasetPath });
  if (c.useBurstTrace) inputs.push({ flag: '--burst-trace-path', path: c.burstTracePath });
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

/** `signalSource`: the bootstrap's relay of SIGINT/SIGTERM (bin/kv-cache.cjs); default the process. */
export async function main(argv: readonly string[], signalSource?: SignalSource): Promise<number> {
  const prefix = argv[0] === 'replay' ? 'kv-cache replay' : 'kv-cache';
  const signals = new SignalGuard(prefix, processSignalHost(signalSource)).install(); // before any work
  try {
    return await runCommand(argv, signals);
  } finally {
    signals.uninstall();
  }
}

async function runCommand(argv: readonly string[], signals: SignalGuard): Promise<number> {
  tolerateClosedStdout(); // first: every subcommand writes to stdout
  const version = toolVersion();
  if (argv[0] === 'replay') return replayMain(argv.slice(1), version, signals);
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
    const problems = [...notImplemented(config), ...runOutputProblems(config)];
    if (problems.length > 0) throw new ConfigError(problems);
    for (const w of parsed.warnings) process.stderr.write(`kv-cache: warning: ${w}\n`);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  for (const line of banner(config, version)) out(line);
  const interrupt = signals.begin(); // the inputs are good: from here a signal saves partial results
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- typed boolean, but undefined when stderr is not a terminal
  const showProgress = process.stderr.isTTY === true && !config.noProgress;

  // Results are saved as soon as the measurement ends (before the entry files are deleted), or from
  // the partial result of a failed run.
  let saved = false;
  const save = async (result: RunResult): Promise<void> => {
    if (saved) return;
    saved = true;
    if (showProgress) process.stderr.write('\n');
    const results = buildResultsJson(result);
    // Checked at start; directories made only now; a failure here falls back to another place.
    resultsMissing = !saveResultsDocument(config.output, `${JSON.stringify(results, null, 2)}\n`, config.cacheDir, 'kv-cache');
    out(formatSummary(results, result.performanceProfile));
    if (!resultsMissing) out(`Results saved to ${config.output}`);
    if (config.xlsxOutput !== undefined) {
      try {
        mkdirSync(dirname(resolve(config.xlsxOutput)), { recursive: true });
        await writeSpreadsheet(config.xlsxOutput, results, config);
        out(`Spreadsheet saved to ${config.xlsxOutput}`);
      } catch (e) {
        process.stderr.write(`kv-cache: error: spreadsheet ${config.xlsxOutput} not written: ${(e as Error).message}\n`);
        spreadsheetFailed = true;
      }
    }
  };
  let spreadsheetFailed = false;
  let resultsMissing = false;
  let code = 0;
  try {
    await runBenchmark(config, {
      clock: monotonicClock,
      toolVersion: version,
      log: out,
      interrupt,
      onResult: save,
      ...(showProgress ? { onProgress: (p: ProgressSnapshot) => void process.stderr.write(progressLine(p)) } : {}),
    });
  } catch (e) {
    if (e instanceof DatasetError || e instanceof TraceError) {
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return 2;
    }
    if (!(e instanceof RunFailedError)) throw e;
    process.stderr.write(`kv-cache: ${e.message}\n`);
    await save(e.partial);
    code = 1;
  }
  if ((spreadsheetFailed || resultsMissing) && code === 0) code = 1;
  return code !== 0 ? code : signals.exitCode;
}
