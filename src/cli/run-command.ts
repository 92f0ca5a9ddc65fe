// `kv-cache run` after its arguments are checked: one run, or --trials N runs of the same workload,
// each a full run with its own setup and teardown (fresh cache contents), saved as it ends. With
// trials, each trial's results go to `<stem>.trial-<k>.json` beside --output, and --output holds the
// median trial (by storage bytes/s) plus the trials block. A signal stops the trial in progress; what
// finished and the interrupted trial's partial results (marked, not counted) are saved.
import { StorageSetupError } from '../tiers/storage-kind.js';
import { mkdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadValidationFor, runBenchmark, RunFailedError } from '../engine/run.js';
import type { LoadedValidationTrace } from '../engine/run.js';
import type { ProgressSnapshot } from '../metrics/progress.js';
import type { RunResult } from '../metrics/result.js';
import { banner, formatSummary, trialLine } from '../report/console.js';
import { LiveView } from '../report/live.js';
import { buildResultsJson } from '../report/results-json.js';
import type { ResultsDocument } from '../report/results-schema.js';
import { writeSpreadsheet } from '../report/spreadsheet.js';
import { buildTrials, withTrials } from '../report/trials-json.js';
import type { TrialRecord } from '../report/trials-json.js';
import type { RunConfig } from '../settings/run-config.js';
import { monotonicClock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';
import { inert } from '../util/safe-text.js';
import { ValidationTraceError } from '../workload/validation-trace.js';
import { outputProblems } from './cache-dir.js';
import { saveResultsDocument } from './save-results.js';
import { prepareProgressRenderer } from './progress-bars.js';
import { BarrierError } from '../engine/barrier.js';
import { isSourceInputError } from '../engine/sources/registry.js';
import { rankSessionFor } from './rank-flags.js';
import { saveFioJob } from './fio-job-file.js';
import type { SignalGuard } from './signals.js';
import { EntryFileTracker } from './force-quit.js';

const rankOf = (c: RunConfig): { ranks?: NonNullable<ReturnType<typeof rankSessionFor>> } => {
  const ranks = rankSessionFor(c);
  return ranks === undefined ? {} : { ranks };
};

/** `<stem>.trial-<k>.json` beside `output` (stem: the file name without its extension). */
export function trialPath(output: string, k: number): string {
  const ext = extname(output);
  const stem = ext === '' ? basename(output) : basename(output, ext);
  return join(dirname(output), `${stem}.trial-${k}.json`);
}

/** Problems of --trials with the other flags and of the per-trial files (checked at start, nothing created). */
export function trialProblems(c: RunConfig): string[] {
  if (c.trials <= 1) return [];
  const problems: string[] = [];
  if (c.ioTraceLog !== undefined)
    problems.push('--io-trace-log records one run: it cannot be combined with --trials > 1 (run the trace with --trials 1)');
  for (let k = 1; k <= c.trials; k++) {
    const path = trialPath(c.output, k);
    if (resolve(path) === resolve(c.output))
      problems.push(`--output ${c.output}: its trial file ${path} would replace it; give --output a .json name`);
    problems.push(...outputProblems(path, '--output (trial file)'));
  }
  return problems;
}

const write = (line: string): void => void process.stdout.write(`${line}\n`);

/**
 * Writes `doc` to `path` (checked at start; directories made only now). If that still fails the
 * results go to a fallback file whose path the message names; false then.
 */
function saveJson(path: string, doc: ResultsDocument, cacheDir: string | undefined): boolean {
  return saveResultsDocument(path, `${JSON.stringify(doc, null, 2)}\n`, cacheDir, 'kv-cache');
}

/** An input file that turned out bad once the run opened it (a workload source's or --validation-trace): exit 2. */
function isInputError(e: unknown): e is Error {
  return isSourceInputError(e) || e instanceof ValidationTraceError || e instanceof StorageSetupError;
}

interface Command {
  readonly config: RunConfig;
  readonly version: string;
  /** Aborted by the first SIGINT/SIGTERM once the run has begun (SignalGuard). */
  readonly interrupt: AbortSignal;
  /** Hears where each run's entry files are, for a force-quit to remove them. */
  readonly entryFiles: EntryFileTracker;
  readonly showProgress: boolean;
  readonly validation: LoadedValidationTrace;
  /** Registers a force-quit step (SignalGuard.atForceQuit): --enable-latency-tracing's bpftrace is killed by one. */
  readonly atForceQuit: SignalGuard['atForceQuit'];
}

/**
 * One run: `onResult` receives its results as soon as the measurement ends (before its files are
 * deleted), or the partial results of a failed run. Returns 1 when it failed, 0 otherwise; input
 * errors are thrown.
 */
async function runOnce(cmd: Command, onResult: (result: RunResult) => void | Promise<void>): Promise<number> {
  let delivered = false;
  // On a terminal a dashboard redrawn each second; in a log one plain line every 10 s (report/live.ts).
  const live = cmd.showProgress ? new LiveView(process.stderr) : undefined;
  const deliver = async (result: RunResult): Promise<void> => {
    if (delivered) return;
    delivered = true;
    live?.finish();
    await onResult(result);
  };
  try {
    const result = await runBenchmark(
      cmd.config,
      {
        clock: monotonicClock,
        toolVersion: cmd.version,
        log: write,
        interrupt: cmd.interrupt,
        onEntryFiles: cmd.entryFiles.opened,
        onObjects: cmd.entryFiles.objects,
        onResult: deliver,
        tracer: { atForceQuit: cmd.atForceQuit },
        ...rankOf(cmd.config),
        // Bars on the terminal (stderr, beside the progress line); otherwise plain lines in the log (stdout).
        onPrepareProgress: cmd.showProgress
          ? prepareProgressRenderer(process.stderr, true)
          : prepareProgressRenderer(process.stdout, false),
        ...(live !== undefined ? { onProgress: (p: ProgressSnapshot) => live.update(p) } : {}),
      },
      cmd.validation,
    );
    return result.stopReason === 'storage_full' ? 1 : 0; // the measurement ended early: a failure, results saved
  } catch (e) {
    if (e instanceof BarrierError) {
      // Nothing was measured: this rank fails alone, saying which rank is missing (exit 1; 130/143 when interrupted).
      process.stderr.write(`kv-cache: error: ${e.message}\n`);
      return cmd.interrupt.aborted ? 0 : 1;
    }
    if (!(e instanceof RunFailedError)) throw e;
    process.stderr.write(`kv-cache: ${e.message}\n`);
    await deliver(e.partial);
    return 1;
  }
}

/** Writes --output and the optional spreadsheet from `doc`, prints its summary; 1 if either missed its place. */
async function saveFinal(cmd: Command, doc: ResultsDocument, note = ''): Promise<number> {
  const c = cmd.config;
  const saved = saveJson(c.output, doc, c.cacheDir);
  write(formatSummary(doc, c.performanceProfile));
  if (saved) write(`Results saved to ${c.output}${note}`);
  const jsonCode = Math.max(saved ? 0 : 1, saveFioJob(c.output, doc, write)); // --enable-latency-tracing (issue 13)
  if (c.xlsxOutput === undefined) return jsonCode;
  try {
    mkdirSync(dirname(resolve(c.xlsxOutput)), { recursive: true });
    await writeSpreadsheet(c.xlsxOutput, doc, c);
    write(`Spreadsheet saved to ${c.xlsxOutput}`);
    return jsonCode;
  } catch (e) {
    process.stderr.write(`kv-cache: error: spreadsheet ${c.xlsxOutput} not written: ${messageOf(e)}\n`);
    return 1;
  }
}

async function singleRun(cmd: Command, signals: SignalGuard): Promise<number> {
  let saveCode = 0;
  let saved = false;
  // A force-quit before the results were handed over has nothing to write; after, they are saved already.
  const stopSaying = signals.atForceQuit(() => [
    saved ? `results already saved to ${cmd.config.output}` : 'no results written: the run had not gathered them yet',
  ]);
  try {
    const runCode = await runOnce(cmd, async (result) => {
      saved = true; // saveFinal writes the JSON before its first await
      saveCode = await saveFinal(cmd, buildResultsJson(result));
    });
    return Math.max(runCode, saveCode);
  } finally {
    stopSaying();
  }
}

/** --output for the trials so far: the median trial with the trials block, else the last (interrupted or failed) trial's results. */
function trialsDocument(records: readonly TrialRecord[], c: RunConfig): { doc: ResultsDocument; note: string } | undefined {
  if (records.length === 0) return undefined; // stopped before the first trial began: nothing to save
  const { block, median } = buildTrials(records, c.trials, c.trialPauseSec);
  // No trial completed: the interrupted (or failed) first trial's partial results stand, marked by its stop reason.
  const chosen = median ?? records[records.length - 1];
  const note =
    median !== undefined ? ` (median trial ${median.trial} of ${c.trials}, with every trial's figures)` : ' (no trial completed)';
  return { doc: withTrials(chosen.results, block), note };
}

/** Force-quit mid-trials: each finished trial's file is already saved; --output gets the trials so far (the JSON only). */
function saveTrialsAtForceQuit(records: readonly TrialRecord[], c: RunConfig): string[] {
  const sofar = trialsDocument(records, c);
  if (sofar === undefined) return ['no results written: no trial had ended'];
  const saved = saveJson(c.output, sofar.doc, c.cacheDir);
  return saved ? [`results of the ${records.length} trial(s) so far saved to ${c.output}${sofar.note}`] : [];
}

async function trialRuns(cmd: Command, signals: SignalGuard): Promise<number> {
  const c = cmd.config;
  const records: TrialRecord[] = [];
  const stopSaving = signals.atForceQuit(() => saveTrialsAtForceQuit(records, c));
  try {
    return await trialsUntilDone(cmd, records);
  } finally {
    stopSaving();
  }
}

async function trialsUntilDone(cmd: Command, records: TrialRecord[]): Promise<number> {
  const c = cmd.config;
  let code = 0;
  let trialFileMissed = false;
  for (let k = 1; k <= c.trials && !cmd.interrupt.aborted; k++) {
    write(`--- Trial ${k} of ${c.trials} ---`);
    const file = trialPath(c.output, k);
    try {
      code = await runOnce(cmd, (result) => {
        const results = buildResultsJson(result);
        if (!saveJson(file, results, c.cacheDir)) trialFileMissed = true;
        records.push({ trial: k, file, results });
        write(trialLine(k, c.trials, results, file));
      });
    } catch (e) {
      if (!isInputError(e) || records.length === 0) throw e;
      process.stderr.write(`kv-cache: error: trial ${k} could not start: ${e.message}\n`);
      code = 1;
    }
    if (code !== 0) break;
    if (k < c.trials && c.trialPauseSec > 0 && !cmd.interrupt.aborted) {
      write(`Pausing ${c.trialPauseSec} s before trial ${k + 1}`);
      await sleep(c.trialPauseSec * 1000, undefined, { signal: cmd.interrupt }).catch(() => undefined);
    }
  }
  const sofar = trialsDocument(records, c);
  if (sofar === undefined) return code; // stopped before the first trial began: nothing to save
  const saveCode = await saveFinal(cmd, sofar.doc, sofar.note);
  return Math.max(code, saveCode, trialFileMissed ? 1 : 0);
}

/** Runs the checked configuration: prints the banner, runs, saves. Returns the exit code. */
export async function runCommand(config: RunConfig, version: string, signals: SignalGuard): Promise<number> {
  let validation: LoadedValidationTrace;
  try {
    validation = loadValidationFor(config); // read once, before anything is printed or created
  } catch (e) {
    if (!(e instanceof ValidationTraceError)) throw e;
    process.stderr.write(`kv-cache: error: ${inert(e.message)}\n`); // it may quote the file (JSON.parse's message does)
    return 2;
  }
  for (const line of banner(config, version)) write(line);
  const interrupt = signals.begin(); // the inputs are good: from here a signal saves partial results
  const showProgress = !config.noProgress; // a terminal gets the dashboard, a log a line every 10 s
  const entryFiles = new EntryFileTracker();
  const stopCleaning = signals.atForceQuit(entryFiles.removeAll); // first: the files, then whatever results there are
  const atForceQuit: SignalGuard['atForceQuit'] = (step) => signals.atForceQuit(step);
  const cmd: Command = { config, version, interrupt, entryFiles, showProgress, validation, atForceQuit };
  try {
    const code = config.trials > 1 ? await trialRuns(cmd, signals) : await singleRun(cmd, signals);
    return code !== 0 ? code : signals.exitCode;
  } catch (e) {
    if (!isInputError(e)) throw e;
    process.stderr.write(`kv-cache: error: ${inert(e.message)}\n`);
    return 2;
  } finally {
    stopCleaning();
  }
}
