// Which rank of a multi-process run this process is, read from its launcher's environment, so that
// `mpirun -np 4 kv-cache …`, `srun kv-cache …` and a Kubernetes indexed job run the same command.
// Pure: the environment is passed in. The first launcher whose rank variable is set wins, in the
// order of LAUNCHERS (Open MPI, then PMI — MPICH/Hydra and srun's PMI —, then Slurm, then Kubernetes).

/** `none`: rank flags given without a launcher: rank 0 of 1. */
export type LauncherName = 'openmpi' | 'pmi' | 'slurm' | 'kubernetes' | 'none';

export interface RankIdentity {
  readonly rank: number;
  readonly worldSize: number;
  readonly launcher: LauncherName;
  /** Where the world size came from: a launcher variable's name, or `--world-size`. */
  readonly worldSizeFrom: string;
}

interface Launcher {
  readonly name: LauncherName;
  readonly rankVar: string;
  /** Undefined: the launcher does not say (a Kubernetes indexed job); --world-size must. */
  readonly sizeVar?: string;
}

export const LAUNCHERS: ReadonlyArray<Launcher & { readonly name: Exclude<LauncherName, 'none'> }> = [
  { name: 'openmpi', rankVar: 'OMPI_COMM_WORLD_RANK', sizeVar: 'OMPI_COMM_WORLD_SIZE' },
  { name: 'pmi', rankVar: 'PMI_RANK', sizeVar: 'PMI_SIZE' },
  { name: 'slurm', rankVar: 'SLURM_PROCID', sizeVar: 'SLURM_NTASKS' },
  { name: 'kubernetes', rankVar: 'JOB_COMPLETION_INDEX' },
];

export type RankDetection =
  | { readonly kind: 'none' }
  | { readonly kind: 'rank'; readonly identity: RankIdentity }
  | { readonly kind: 'problem'; readonly message: string };

function nonNegativeInt(v: string): number | undefined {
  return /^\d+$/.test(v.trim()) && Number.isSafeInteger(Number(v)) ? Number(v) : undefined;
}

/**
 * The rank and world size from `env`. `worldSizeFlag` (--world-size; 0 = not given) takes precedence
 * over the launcher's size variable and is required where the launcher has none.
 */
export function detectRank(env: Readonly<Record<string, string | undefined>>, worldSizeFlag = 0): RankDetection {
  const launcher = LAUNCHERS.find((l) => env[l.rankVar] !== undefined && env[l.rankVar] !== '');
  if (launcher === undefined) {
    if (worldSizeFlag > 1)
      return {
        kind: 'problem',
        message: `--world-size ${worldSizeFlag} needs a launcher's rank variable (${LAUNCHERS.map((l) => l.rankVar).join(', ')}); none is set`,
      };
    return { kind: 'none' };
  }
  const rawRank = env[launcher.rankVar] ?? '';
  const rank = nonNegativeInt(rawRank);
  if (rank === undefined) return { kind: 'problem', message: `${launcher.rankVar}='${rawRank}' is not a non-negative integer` };
  let worldSize: number | undefined;
  let worldSizeFrom: string;
  if (worldSizeFlag > 0) {
    worldSize = worldSizeFlag;
    worldSizeFrom = '--world-size';
  } else if (launcher.sizeVar !== undefined && env[launcher.sizeVar] !== undefined) {
    const raw = env[launcher.sizeVar] ?? '';
    worldSize = nonNegativeInt(raw);
    worldSizeFrom = launcher.sizeVar;
    if (worldSize === undefined || worldSize === 0)
      return { kind: 'problem', message: `${launcher.sizeVar}='${raw}' is not a positive integer` };
  } else {
    return {
      kind: 'problem',
      message: `${launcher.rankVar} is set but the world size is unknown: pass --world-size N (the number of ranks${launcher.name === 'kubernetes' ? ', the job’s completions' : ''})`,
    };
  }
  if (rank >= worldSize)
    return { kind: 'problem', message: `${launcher.rankVar}=${rank} is not below the world size ${worldSize} (from ${worldSizeFrom})` };
  return { kind: 'rank', identity: { rank, worldSize, launcher: launcher.name, worldSizeFrom } };
}

/** `rank_<N>`: the per-rank directory name under --rank-output-base and --rank-cache-base, as the reference's wrapper. */
export function rankDirName(rank: number): string {
  return `rank_${rank}`;
}
