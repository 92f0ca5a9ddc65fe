// `kv-cache replay TRACE [options]`: parses its own flags, replays the trace, prints a storage
// summary and writes a results JSON. Bad input exits 2 with every problem in one message.
import { existsSync, mkdirSync } from 'node:fs';
import { writeFileAtomically } from '../util/files.js';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { replayTrace } from '../engine/replay.js';
import type { ReplayResult } from '../engine/replay.js';
import { buildCacheStats } from '../metrics/cache-stats.js';
import { TraceFormatError } from '../trace/errors.js';
import { monotonicClock } from '../util/clock.js';
import { GiB, MiB } from '../util/units.js';
import { ConfigError } from './errors.js';
import { fileStamp } from '../util/dates.js';
import { deviceIoJson } from '../report/results-json.js';
import { outputProblems } from './cache-dir.js';

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
  readonly ioMode: 'direct' | 'buffered';
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
    ioMode: ioMode as 'direct' | 'buffered',
    concurrency,
    paced: v.paced === true,
    allTiers: v['all-tiers'] === true,
    seed,
    output: v.output ?? `replay_results_${fileStamp(now)}.json`,
  };
}

function resultsJson(a: ReplayArgs, r: ReplayResult, version: string): Record<string, unknown> {
  const c = r.counts;
  return {
    replay: {
      trace: a.tracePath,
      rows: c.rows,
      writes: c.writes,
      reads: c.reads,
      deletes: c.deletes,
      write_bytes: c.writeBytes,
      read_bytes: c.readBytes,
      skipped_other_tier_rows: c.skippedOtherTiers,
      missing_keys: c.missingKeys,
      concurrency: a.concurrency,
      paced: a.paced,
      all_tiers: a.allTiers,
    },
    elapsed_time: r.elapsedSec,
    summary: { cache_stats: buildCacheStats(r.recorded, {}, r.elapsedSec, 'latency') },
    kvcache_bench: {
      tool: 'kvcache-bench',
      version,
      measured_window_sec: r.elapsedSec,
      storage_dir: r.storage.dir,
      storage_io_mode: r.storage.ioMode,
      storage_file_system: r.storage.fileSystem,
      device_io: r.device === undefined ? null : deviceIoJson(r.device, r.elapsedSec),
    },
  };
}

function summaryText(r: ReplayResult): string {
  const c = r.counts;
  const gibps = (b: number): string => (r.elapsedSec > 0 ? b / r.elapsedSec / GiB : 0).toFixed(3);
  const lat = (name: string): string => {
    const h = r.recorded.latencies[name];
    return h === undefined ? '-' : `p50 ${h.p50.toFixed(2)}  p95 ${h.p95.toFixed(2)}  p99 ${h.p99.toFixed(2)} ms`;
  };
  const lines = [
    `Replayed ${c.writes} writes (${(c.writeBytes / GiB).toFixed(3)} GiB), ${c.reads} reads (${(c.readBytes / GiB).toFixed(3)} GiB), ${c.deletes} deletes in ${r.elapsedSec.toFixed(2)} s`,
    `Skipped: ${c.skippedOtherTiers} rows of other tiers, ${c.missingKeys} reads/deletes of keys never written`,
    `Storage bandwidth: read ${gibps(c.readBytes)} GiB/s, write ${gibps(c.writeBytes)} GiB/s (${r.storage.ioMode} I/O on ${r.storage.fileSystem})`,
    `Read latency:  ${lat('storage_read')}   (device ${lat('storage_read_device')})`,
    `Write latency: ${lat('storage_write')}   (device ${lat('storage_write_device')})`,
  ];
  if (r.device !== undefined) lines.push(`Device ${r.device.name}: read ${(r.device.delta.readBytes / MiB).toFixed(1)} MiB, written ${(r.device.delta.writeBytes / MiB).toFixed(1)} MiB`);
  return lines.join('\n');
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
  writeFileAtomically(args.output, `${JSON.stringify(resultsJson(args, result, version), null, 2)}\n`);
  process.stdout.write(`${summaryText(result)}\nResults saved to ${args.output}\n`);
  return 0;
}
