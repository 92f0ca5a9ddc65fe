// The closed sets of values a flag or config key may take, each declared once with its type. The I/O
// modes are declared where they act (tiers/io-mode.ts) and re-exported here with the others.
export { IO_MODES } from '../tiers/io-mode.js';
/** --payload-filler: data/fillers.ts FillerKind (settings may not import data; engine/tier-stack.ts passes one as the other, so a mismatch fails to compile). */
export const PAYLOAD_FILLERS = ['native', 'threads'] as const;
export type { IoMode } from '../tiers/io-mode.js';
export const GENERATION_MODES = ['none', 'fast', 'realistic'] as const;
export const PERFORMANCE_PROFILES = ['latency', 'throughput'] as const;
export const AUTOSCALER_MODES = ['qos', 'capacity'] as const;
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const TOKENIZERS = ['cl100k_base', 'chars'] as const;
export const RETRIEVAL_DISTRIBUTIONS = ['zipfian', 'uniform'] as const;
export const USER_TYPES = ['chatbot', 'coding', 'document'] as const;
/** --kv-pool: each server's own storage namespace, or one pool every server reads and writes (issue 32). */
export const KV_POOLS = ['private', 'shared'] as const;
/** --route: how ranks divide a recorded trace (workload/routing.ts). */
export const ROUTE_MODES = ['replicate', 'session', 'round-robin'] as const;
/** --route's values: a mode, or auto (round-robin with a shared pool, else replicate). */
export const ROUTE_FLAG_VALUES = ['auto', ...ROUTE_MODES] as const;
/** --kv-layout: how the file tier lays entries out (one file each in one directory, hash fan-out directories, or slots in pool files). */
export const KV_LAYOUTS = ['flat', 'fanout', 'slab'] as const;
/** --file-calls (tiers/file-calls.ts: the tiers read it). */
export { FILE_CALLS } from '../tiers/file-calls.js';
export type { FileCalls } from '../tiers/file-calls.js';
/** QoS classes, highest priority first. */
export const QOS_LEVELS = ['interactive', 'responsive', 'batch'] as const;

export type GenerationMode = (typeof GENERATION_MODES)[number];
export type PerformanceProfile = (typeof PERFORMANCE_PROFILES)[number];
export type AutoscalerMode = (typeof AUTOSCALER_MODES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type Tokenizer = (typeof TOKENIZERS)[number];
export type RetrievalDistribution = (typeof RETRIEVAL_DISTRIBUTIONS)[number];
export type UserType = (typeof USER_TYPES)[number];
export type QosLevel = (typeof QOS_LEVELS)[number];
export type KvPool = (typeof KV_POOLS)[number];
export type RouteMode = (typeof ROUTE_MODES)[number];
export type RouteFlag = (typeof ROUTE_FLAG_VALUES)[number];

/** The route a run uses: --route, with auto resolved by the pool. */
export function routeModeOf(route: RouteFlag, pool: KvPool): RouteMode {
  if (route !== 'auto') return route;
  // Not session: every request of the public Mooncake conversation trace shares its first block (a
  // common system prompt), so session routing would hand one rank the whole trace.
  return pool === 'shared' ? 'round-robin' : 'replicate';
}
export type KvLayout = (typeof KV_LAYOUTS)[number];

/** Largest --kv-block-tokens: a block is one cache entry, and 2^20 tokens is already GiBs of KV. */
export const MAX_BLOCK_TOKENS = 1 << 20;
