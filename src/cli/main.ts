// The `kv-cache` command: arguments → RunConfig → run → results file and console summary.
// Exit codes: 0 success, 2 bad input (one message, no stack trace, nothing written), 1 failure
// during the run, a storage tier that filled up (stop_reason storage_full), or while writing the
// spreadsheet (the JSON results are still saved),
// 130/143 interrupted (results saved).
import { mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomically } from '../util/files.js';
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
import { outputProblems } from './cache-dir.js';

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

export async function main(argv: readonly string[]): Promise<number> {
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

  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  for (const line of banner(config, version)) out(line);
  const interrupt = new AbortController();
  let signalCode = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (interrupt.signal.aborted) process.exit(sig === 'SIGINT' ? 130 : 143); // a second signal: leave now
    signalCode = sig === 'SIGINT' ? 130 : 143;
    process.stderr.write(`\nkv-cache: ${sig}: stopping, saving the results gathered so far…\n`);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
    mkdirSync(dirname(resolve(config.output)), { recursive: true }); // checked at start, made only now
    writeFileAtomically(config.output, `${JSON.stringify(results, null, 2)}\n`);
    out(formatSummary(results, result.performanceProfile));
    out(`Results saved to ${config.output}`);
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
  let code = 0;
  try {
    const result = await runBenchmark(config, {
      clock: monotonicClock,
      toolVersion: version,
      log: out,
      interrupt: interrupt.signal,
      onResult: save,
      ...(showProgress ? { onProgress: (p: ProgressSnapshot) => void process.stderr.write(progressLine(p)) } : {}),
    });
    if (result.stopReason === 'storage_full') code = 1;
  } catch (e) {
    if (e instanceof DatasetError || e instanceof TraceError) {
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return 2;
    }
    if (!(e instanceof RunFailedError)) throw e;
    process.stderr.write(`kv-cache: ${e.message}\n`);
    await save(e.partial);
    code = 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (spreadsheetFailed && code === 0) code = 1;
  return code !== 0 ? code : signalCode;
}
