// `kv-cache replay TRACE [options]` (its flags declared in subcommands.ts): checks its files, replays
// the trace, prints a storage summary and writes a results JSON. Bad input exits 2 with every problem in one message and
// nothing created; it is hardened like `run`: the same cache-dir and output checks, signals (partial
// results, exit 130/143), --duration, a failure mid-replay saves partial results and exits 1.
import { storageKind } from '../tiers/registry.js';
import { objectStoreOptionsOf, StorageSetupError } from '../tiers/storage-kind.js';
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ArgsOf } from './sub-args.js';
import type { REPLAY_ARGS } from './subcommand-args.js';
import { isTraceInputError, ReplayFailedError, replayTrace } from '../engine/replay.js';
import type { ReplayOptions } from '../engine/replay.js';
import type { ReplayResult } from '../metrics/replay-result.js';
import { monotonicClock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';
import { ConfigError } from './errors.js';
import { fileStamp } from '../util/dates.js';
import { buildReplayResultsJson, formatReplaySummary } from '../report/replay-report.js';
import type { ReplayResultsDocument } from '../report/results-schema.js';
import { cacheDirProblems, outputProblems, realFs } from './cache-dir.js';
import { saveResultsDocument } from './save-results.js';
import type { SignalGuard } from './signals.js';
import { EntryFileTracker } from './force-quit.js';

/** What the engine replays, and where the results go. */
interface ReplayArgs extends ReplayOptions {
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

/** The replay's settings from its checked arguments; every problem with the files at once as a ConfigError. */
function replayArgs(a: ArgsOf<typeof REPLAY_ARGS>, now: Date): ReplayArgs {
  const v = a.values;
  const tracePath = a.positionals[0];
  const problems = traceFileProblems(tracePath);
  const cacheDir = v['cache-dir'];
  if (cacheDir !== undefined) problems.push(...cacheDirProblems(cacheDir, realFs, v['create-cache-dir']));
  else if (v['create-cache-dir']) problems.push('--create-cache-dir needs --cache-dir');
  const objectStore = objectStoreOptionsOf({
    ...(v['s3-endpoint'] !== undefined ? { s3Endpoint: v['s3-endpoint'] } : {}),
    ...(v['s3-bucket'] !== undefined ? { s3Bucket: v['s3-bucket'] } : {}),
    createBucket: v['create-bucket'],
    s3Prefix: v['s3-prefix'],
    ...(v['s3-region'] !== undefined ? { s3Region: v['s3-region'] } : {}),
    s3PathStyle: v['s3-path-style'],
    ...(v['s3-ca-file'] !== undefined ? { s3CaFile: v['s3-ca-file'] } : {}),
  });
  const storageBackend = v['storage-backend'];
  // A replay sets no capacity: only the kind's own flags are checked here.
  problems.push(...(storageKind(storageBackend).objectStoreProblems?.(objectStore) ?? []));
  const output = v.output ?? `replay_results_${fileStamp(now)}.json`;
  if (tracePath !== '') problems.push(...outputProblems(output, '--output', [{ flag: 'the trace', path: tracePath }]));
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    tracePath,
    ...(cacheDir !== undefined ? { cacheDir: resolve(cacheDir) } : {}),
    ioMode: v['io-mode'],
    filler: v['payload-filler'],
    storageBackend,
    objectStore,
    concurrency: v.concurrency,
    paced: v.paced,
    allTiers: v['all-tiers'],
    seed: v.seed,
    ...(v.duration !== undefined ? { durationSec: v.duration } : {}),
    output,
  };
}

/** The results document of a replay and whether it reached --output. */
interface SavedReplay {
  readonly results: ReplayResultsDocument;
  readonly ok: boolean;
}

/** `input`: the arguments as declared in subcommands.ts; a problem with the files throws a ConfigError (exit 2). */
export async function replayMain(input: ArgsOf<typeof REPLAY_ARGS>, version: string, signals: SignalGuard): Promise<number> {
  const args = replayArgs(input, new Date());
  const interrupt = signals.begin(); // the arguments are good: from here a signal saves partial results
  const entryFiles = new EntryFileTracker();
  const stopCleaning = signals.atForceQuit(entryFiles.removeAll);
  let saved: SavedReplay | undefined;
  // Saved as soon as the engine has the result, before it deletes the entry files (that can take long).
  const save = (result: ReplayResult): SavedReplay => {
    if (saved !== undefined) return saved;
    const results = buildReplayResultsJson(args, result, version);
    saved = { results, ok: saveResultsDocument(args.output, `${JSON.stringify(results, null, 2)}\n`, args.cacheDir, 'kv-cache replay') };
    return saved;
  };
  const stopSaying = signals.atForceQuit(() => [
    saved?.ok === true ? `results already saved to ${args.output}` : 'no results written: the replay had not gathered them yet',
  ]);
  let code = 0;
  let outcome: SavedReplay;
  try {
    outcome = save(
      await replayTrace(args, {
        clock: monotonicClock,
        interrupt,
        onEntryFiles: entryFiles.opened,
        onObjects: entryFiles.objects,
        onResult: save,
        notify: (line) => process.stderr.write(`kv-cache replay: ${line}\n`),
      }),
    );
  } catch (e) {
    if (isTraceInputError(e) || e instanceof StorageSetupError) {
      process.stderr.write(`kv-cache replay: error: ${e.message}\n`);
      return 2;
    }
    if (!(e instanceof ReplayFailedError)) {
      // Nothing replayed yet (e.g. the storage could not be opened): one line, no stack, no results.
      process.stderr.write(`kv-cache replay: failed: ${messageOf(e)}\n`);
      return 1;
    }
    process.stderr.write(`kv-cache replay: ${e.message}\n`);
    outcome = save(e.partial);
    code = 1;
  } finally {
    stopCleaning();
    stopSaying();
  }
  const { results, ok } = outcome;
  process.stdout.write(`${formatReplaySummary(results)}\n${ok ? `Results saved to ${args.output}\n` : ''}`);
  if (code !== 0) return code;
  return ok ? signals.exitCode : 1;
}
