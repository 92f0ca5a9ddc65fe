// `kv-cache replay TRACE [options]`: parses its own flags, replays the trace, prints a storage
// summary and writes a results JSON. Bad input exits 2 with every problem in one message and
// nothing created; it is hardened like `run`: the same cache-dir and output checks, signals (partial
// results, exit 130/143), --duration, a failure mid-replay saves partial results and exits 1.
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseSubcommandArgs } from './sub-args.js';
import { isTraceInputError, ReplayFailedError, replayTrace } from '../engine/replay.js';
import type { ReplayResult } from '../engine/replay.js';
import { monotonicClock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';
import { ConfigError } from './errors.js';
import { fileStamp } from '../util/dates.js';
import { buildReplayResultsJson, formatReplaySummary } from '../report/replay-report.js';
import { cacheDirProblems, outputProblems, realFs } from './cache-dir.js';
import type { IoMode } from '../settings/choices.js';
import { saveResultsDocument } from './save-results.js';
import type { SignalGuard } from './signals.js';

/** Most operations in flight: each is an async lane, and 1,024 already saturate any device here. */
export const MAX_REPLAY_CONCURRENCY = 1024;
/** Longest --duration: 24 days (a Node timer fires a longer delay at once). */
export const MAX_REPLAY_DURATION_SEC = 24 * 86_400;

const REPLAY_HELP = `Usage: kv-cache replay TRACE [options]

Replays an I/O trace (written by --io-trace-log, or by the reference; .zst accepted) against a cache
directory and measures the storage operations.

  --cache-dir DIR      Directory for the entry files (default: a new temporary directory); must exist
  --create-cache-dir   Create --cache-dir (and missing parents) when it does not exist
  --io-mode MODE       direct (O_DIRECT, default) or buffered
  --concurrency N      Operations in flight at once, 1 … ${MAX_REPLAY_CONCURRENCY} (default: 16)
  --paced              Issue rows at their trace times instead of as fast as possible
  --all-tiers          Replay rows of every tier onto storage (default: only Tier-2 rows)
  --duration S         Stop after S seconds, 1 … ${MAX_REPLAY_DURATION_SEC} (default: at the end of the trace)
  --seed N             Seed of the payload bytes, a non-negative integer (default: 0)
  --output FILE        Results JSON (default: replay_results_<YYYYmmdd_HHMMSS>.json)
  -h, --help           Show this help

SIGINT/SIGTERM stop the replay and save partial results (exit 130/143); a second signal exits at once.`;

interface ReplayArgs {
  readonly tracePath: string;
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  readonly concurrency: number;
  readonly paced: boolean;
  readonly allTiers: boolean;
  readonly seed: number;
  readonly durationSec?: number;
  readonly output: string;
}

/** Problems with the trace argument: it must be a readable regular file (a FIFO or /dev/zero would block or never end). */
export function traceFileProblems(path: string): string[] {
  if (path === '') return ['the trace path is empty; give a trace file'];
  let st;
  try {
    st = statSync(path);
  } catch {
    return [`trace file '${path}' not found`];
  }
  if (st.isDirectory()) return [`trace '${path}' is a directory; give a trace file (.csv or .csv.zst)`];
  if (!st.isFile()) return [`trace '${path}' is not a regular file (a FIFO, device or socket); give a trace file`];
  try {
    accessSync(path, constants.R_OK);
  } catch {
    return [`trace file '${path}' is not readable`];
  }
  return [];
}

/** An integer flag within [min, max]; `safe` numbers only (1e300 is an integer to JavaScript, not a seed). */
function intFlag(problems: string[], name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined) return dflt;
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    problems.push(`--${name} expects an integer from ${min} to ${max}, got '${raw}'`);
    return dflt;
  }
  return n;
}

function parseReplayArgs(argv: readonly string[], now: Date): ReplayArgs {
  const parsed = parseSubcommandArgs(
    argv,
    {
      'cache-dir': { type: 'string' },
      'create-cache-dir': { type: 'boolean' },
      'io-mode': { type: 'string' },
      concurrency: { type: 'string' },
      paced: { type: 'boolean' },
      'all-tiers': { type: 'boolean' },
      duration: { type: 'string' },
      seed: { type: 'string' },
      output: { type: 'string' },
    },
    'replay',
  );
  const v = parsed.values;
  const problems: string[] = [];
  if (parsed.positionals.length !== 1) problems.push(`replay takes exactly one trace file, got ${parsed.positionals.length}`);
  const tracePath = parsed.positionals[0] ?? '';
  if (parsed.positionals.length === 1) problems.push(...traceFileProblems(tracePath));
  const ioMode = v['io-mode'] ?? 'direct';
  if (ioMode !== 'direct' && ioMode !== 'buffered') problems.push(`--io-mode must be direct or buffered, got '${ioMode}'`);
  const concurrency = intFlag(problems, 'concurrency', v.concurrency, 16, 1, MAX_REPLAY_CONCURRENCY);
  const seed = intFlag(problems, 'seed', v.seed, 0, 0, Number.MAX_SAFE_INTEGER);
  const durationSec = v.duration === undefined ? undefined : intFlag(problems, 'duration', v.duration, 1, 1, MAX_REPLAY_DURATION_SEC);
  const cacheDir = v['cache-dir'];
  if (cacheDir !== undefined) problems.push(...cacheDirProblems(cacheDir, realFs, v['create-cache-dir'] === true));
  else if (v['create-cache-dir'] === true) problems.push('--create-cache-dir needs --cache-dir');
  const output = v.output ?? `replay_results_${fileStamp(now)}.json`;
  if (tracePath !== '') problems.push(...outputProblems(output, '--output', [{ flag: 'the trace', path: tracePath }]));
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    tracePath,
    ...(cacheDir !== undefined ? { cacheDir: resolve(cacheDir) } : {}),
    ioMode: ioMode as IoMode,
    concurrency,
    paced: v.paced === true,
    allTiers: v['all-tiers'] === true,
    seed,
    ...(durationSec !== undefined ? { durationSec } : {}),
    output,
  };
}

export async function replayMain(argv: readonly string[], version: string, signals: SignalGuard): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${REPLAY_HELP}\n`);
    return 0;
  }
  let args: ReplayArgs;
  try {
    args = parseReplayArgs(argv, new Date());
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`kv-cache replay: error: ${e.message}\n`);
    return 2;
  }
  const interrupt = signals.begin(); // the arguments are good: from here a signal saves partial results
  let result: ReplayResult;
  let code = 0;
  try {
    result = await replayTrace(args, {
      clock: monotonicClock,
      interrupt,
      notify: (line) => process.stderr.write(`kv-cache replay: ${line}\n`),
    });
  } catch (e) {
    if (isTraceInputError(e)) {
      process.stderr.write(`kv-cache replay: error: ${e.message}\n`);
      return 2;
    }
    if (!(e instanceof ReplayFailedError)) {
      // Nothing replayed yet (e.g. the storage could not be opened): one line, no stack, no results.
      process.stderr.write(`kv-cache replay: failed: ${messageOf(e)}\n`);
      return 1;
    }
    process.stderr.write(`kv-cache replay: ${e.message}\n`);
    result = e.partial;
    code = 1;
  }
  const results = buildReplayResultsJson(args, result, version);
  const saved = saveResultsDocument(args.output, `${JSON.stringify(results, null, 2)}\n`, args.cacheDir, 'kv-cache replay');
  process.stdout.write(`${formatReplaySummary(results)}\n${saved ? `Results saved to ${args.output}\n` : ''}`);
  if (code !== 0) return code;
  return saved ? signals.exitCode : 1;
}
