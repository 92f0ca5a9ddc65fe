// `kv-cache replay TRACE [options]`: parses its own flags, replays the trace, prints a storage
// summary and writes a results JSON. Bad input exits 2 with every problem in one message.
import { existsSync, mkdirSync } from 'node:fs';
import { writeFileAtomically } from '../util/files.js';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { replayTrace } from '../engine/replay.js';
import type { ReplayResult } from '../engine/replay.js';
import { TraceFormatError } from '../trace/errors.js';
import { monotonicClock } from '../util/clock.js';
import { ConfigError } from './errors.js';
import { fileStamp } from '../util/dates.js';
import { buildReplayResultsJson, formatReplaySummary } from '../report/replay-report.js';
import { outputProblems } from './cache-dir.js';
import type { IoMode } from '../settings/choices.js';

const REPLAY_HELP = `Usage: kv-cache replay TRACE [options]

Replays an I/O trace (written by --io-trace-log, or by the reference; .zst accepted) against a cache
directory and measures the storage operations.

  --cache-dir DIR      Directory for the entry files (default: a new temporary directory)
  --io-mode MODE       direct (O_DIRECT, default) or buffered
  --concurrency N      Operations in flight at once (default: 16)
  --paced              Issue rows at their trace times instead of as fast as possible
  --all-tiers          Replay rows of every tier onto storage (default: only Tier-2 rows)
  --seed N             Seed of the payload bytes (default: 0)
  --output FILE        Results JSON (default: replay_results_<YYYYmmdd_HHMMSS>.json)
  -h, --help           Show this help`;

interface ReplayArgs {
  readonly tracePath: string;
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  readonly concurrency: number;
  readonly paced: boolean;
  readonly allTiers: boolean;
  readonly seed: number;
  readonly output: string;
}

function parseReplayArgs(argv: readonly string[], now: Date): ReplayArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        'cache-dir': { type: 'string' },
        'io-mode': { type: 'string' },
        concurrency: { type: 'string' },
        paced: { type: 'boolean' },
        'all-tiers': { type: 'boolean' },
        seed: { type: 'string' },
        output: { type: 'string' },
      },
    });
  } catch (e) {
    throw new ConfigError([`replay: ${(e as Error).message}`]);
  }
  const v = parsed.values;
  const problems: string[] = [];
  const int = (name: string, raw: string | undefined, dflt: number, min: number): number => {
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) problems.push(`--${name} expects an integer ≥ ${min}, got '${raw}'`);
    return n;
  };
  if (parsed.positionals.length !== 1) problems.push(`replay takes exactly one trace file, got ${parsed.positionals.length}`);
  const tracePath = parsed.positionals[0] ?? '';
  if (tracePath !== '' && !existsSync(tracePath)) problems.push(`trace file '${tracePath}' not found`);
  const ioMode = v['io-mode'] ?? 'direct';
  if (ioMode !== 'direct' && ioMode !== 'buffered') problems.push(`--io-mode must be direct or buffered, got '${ioMode}'`);
  const concurrency = int('concurrency', v.concurrency, 16, 1);
  const seed = int('seed', v.seed, 0, 0);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    tracePath,
    ...(v['cache-dir'] !== undefined ? { cacheDir: resolve(v['cache-dir']) } : {}),
    ioMode: ioMode as IoMode,
    concurrency,
    paced: v.paced === true,
    allTiers: v['all-tiers'] === true,
    seed,
    output: v.output ?? `replay_results_${fileStamp(now)}.json`,
  };
}

export async function replayMain(argv: readonly string[], version: string): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${REPLAY_HELP}\n`);
    return 0;
  }
  let args: ReplayArgs;
  try {
    args = parseReplayArgs(argv, new Date());
    const problems = outputProblems(args.output);
    if (problems.length > 0) throw new ConfigError(problems);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`kv-cache replay: error: ${e.message}\n`);
    return 2;
  }
  let result: ReplayResult;
  try {
    result = await replayTrace(args, monotonicClock);
  } catch (e) {
    if (!(e instanceof TraceFormatError)) throw e;
    process.stderr.write(`kv-cache replay: error: ${e.message}\n`);
    return 2;
  }
  mkdirSync(dirname(resolve(args.output)), { recursive: true }); // checked at start, made only now
  const results = buildReplayResultsJson(args, result, version);
  writeFileAtomically(args.output, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${formatReplaySummary(results)}\nResults saved to ${args.output}\n`);
  return 0;
}
