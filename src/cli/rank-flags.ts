// The rank flags (--rank-output-base, --rank-cache-base, --seed-base, --barrier-dir, --world-size)
// applied to a run's flags: under a launcher (engine/ranks.ts) each rank gets its own results file,
// cache directory and seed, as the reference's MLPerf wrapper gives them, and a multi-rank run gets
// the shared directory its ranks meet in. Pure: the environment and the time are passed in.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RankSession } from '../engine/rank-session.js';
import { detectRank, rankDirName } from '../engine/ranks.js';
import type { RankIdentity } from '../engine/ranks.js';
import type { RunFlags } from '../settings/flags.js';
import type { RunConfig } from '../settings/run-config.js';
import { fileStamp } from '../util/dates.js';
import { cacheDirProblems, realFs } from './cache-dir.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Flags that mean "this is a rank" even without a launcher (then rank 0 of 1); --seed-base alone is just a seed. */
const RANK_FLAGS = ['rank-output-base', 'rank-cache-base'] as const;

export interface RankedFlags {
  readonly flags: RunFlags;
  readonly problems: string[];
  /** True when --seed-base set the seed. */
  readonly seedFromBase: boolean;
}

type RankFlagView = Pick<RunFlags, 'rankOutputBase' | 'rankCacheBase' | 'seedBase' | 'worldSize' | 'barrierDir'>;

/** This process's rank, or undefined when it is not one; a bad launcher environment is a problem. */
export function rankIdentityOf(
  flags: RankFlagView,
  given: (name: string) => boolean,
  env: Env,
): { identity?: RankIdentity; problem?: string } {
  const found = detectRank(env, flags.worldSize);
  if (found.kind === 'problem') return { problem: found.message };
  if (found.kind === 'rank') return { identity: found.identity };
  if (RANK_FLAGS.some(given)) return { identity: { rank: 0, worldSize: 1, launcher: 'none', worldSizeFrom: 'no launcher: one rank' } };
  return {};
}

/** The rank's own output, cache dir and seed, or the problems with the rank flags. */
export function applyRankFlags(flags: RunFlags, given: (name: string) => boolean, env: Env, now: Date): RankedFlags {
  const problems: string[] = [];
  const { identity, problem } = rankIdentityOf(flags, given, env);
  if (problem !== undefined) return { flags, problems: [problem], seedFromBase: false };
  if (identity === undefined) return { flags, problems, seedFromBase: false };
  const dir = rankDirName(identity.rank);
  let next: RunFlags = flags;
  if (flags.rankOutputBase !== undefined) {
    if (given('output'))
      problems.push('--output and --rank-output-base exclude each other (each rank writes DIR/rank_<N>/kvcache_results_<time>.json)');
    next = { ...next, output: join(flags.rankOutputBase, dir, `kvcache_results_${fileStamp(now)}.json`) };
  }
  if (flags.rankCacheBase !== undefined) {
    if (given('cache-dir')) problems.push('--cache-dir and --rank-cache-base exclude each other (each rank uses DIR/rank_<N>/)');
    // The base must exist: --create-cache-dir creates only each rank's own directory under it.
    problems.push(...cacheDirProblems(flags.rankCacheBase, realFs, false, { flag: 'rank-cache-base', createHint: false }));
    // A shared pool is one directory for every rank: the base itself (docs/shared-pool.md).
    next =
      flags.kvPool === 'shared'
        ? { ...next, cacheDir: flags.rankCacheBase }
        : { ...next, cacheDir: join(flags.rankCacheBase, dir), createCacheDir: true };
  }
  // Under a launcher each rank keeps its S3 objects under its own prefix: another rank's live objects are
  // never taken for an earlier run's leftovers (and removed with --remove-stale-entries).
  // A shared pool's blocks are every rank's: one prefix.
  if (identity.launcher !== 'none' && flags.storageBackend === 's3' && flags.kvPool !== 'shared')
    next = { ...next, s3Prefix: `${folderOf(flags.s3Prefix)}${dir}/` };
  const seedFromBase = given('seed-base');
  if (seedFromBase) {
    if (given('seed')) problems.push('--seed and --seed-base exclude each other (each rank’s seed is the base + its rank)');
    next = { ...next, seed: flags.seedBase + identity.rank };
  }
  if (identity.worldSize > 1) {
    if (flags.barrierDir === undefined && flags.rankOutputBase !== undefined)
      next = { ...next, barrierDir: join(flags.rankOutputBase, 'barrier') };
    if (next.barrierDir === undefined)
      problems.push(
        `this run is rank ${identity.rank} of ${identity.worldSize}: the ranks meet in a directory every host shares; give --barrier-dir DIR or --rank-output-base DIR`,
      );
    if (flags.trials > 1)
      problems.push(`--trials ${flags.trials} with ${identity.worldSize} ranks: launch each trial on its own (kv-cache mlperf does)`);
  }
  return { flags: next, problems, seedFromBase };
}

/** The rank session of a checked run (undefined when it is no rank); `env` is the launcher's environment. */
export function rankSessionFor(cfg: RunConfig, env: Env = process.env): RankSession | undefined {
  const rankGiven = (name: string): boolean =>
    (name === 'rank-output-base' && cfg.rankOutputBase !== undefined) || (name === 'rank-cache-base' && cfg.rankCacheBase !== undefined);
  const { identity } = rankIdentityOf(cfg, rankGiven, env);
  if (identity === undefined) return undefined;
  return new RankSession({
    identity,
    barrierDir: cfg.barrierDir,
    timeoutSec: cfg.barrierTimeoutSec,
    durationSec: cfg.durationSec,
    host: hostname(),
    pid: process.pid,
  });
}

/** A key prefix as a folder: '' or ending in '/'. */
function folderOf(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}
