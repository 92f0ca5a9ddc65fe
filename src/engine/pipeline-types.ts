// The request pipeline's options and outcome (engine/pipeline.ts, engine/block-pipeline.ts), declared
// apart so the two pipelines share them without importing each other; with them, how a request stops.
import type { TieredCache } from '../cache/tiered-cache.js';
import type { BlockStats } from '../metrics/block-stats.js';
import type { PoolStats } from '../metrics/pool-stats.js';
import type { PrefixMatcher } from '../workload/prefix.js';

/** Block-granular KV cache (--kv-block-tokens, Mooncake traces). */
export interface BlockMode {
  /** Tokens per block. */
  readonly blockTokens: number;
  readonly stats: BlockStats;
  /** A shared pool's counters (--kv-pool shared): prefix hits by who published the block. */
  readonly pool?: PoolStats;
}

export interface PipelineOptions {
  readonly cache: TieredCache;
  /** Prefix accounting (first sight → write the prompt's entry once); absent = prefix caching off. */
  readonly prefix?: PrefixMatcher;
  readonly multiTurn: boolean;
  readonly prefillOnly: boolean;
  readonly decodeOnly: boolean;
  /** Decode-only mode reads a random one of these pre-populated keys. */
  readonly prepopulatedKeys?: readonly string[];
  readonly decodeBatchSize: number;
  /** Simulated generation time per token, seconds (none 0, fast 0.002, realistic 0.030). */
  readonly secondsPerToken: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** True once the run is over: the request stops at its next operation boundary. */
  readonly stopped: () => boolean;
  /** Block-granular KV cache (engine/block-pipeline.ts); absent = one entry per request, as the reference. */
  readonly blocks?: BlockMode;
}

export interface PipelineOutcome {
  readonly completed: boolean;
  readonly storageMs: number;
  readonly generationMs: number;
  readonly prefillMs?: number;
  readonly decodeMs?: number;
  readonly multiTurnHits: number;
  readonly multiTurnMisses: number;
  // What the time to first token is modelled from (issue 23; engine/ttft.ts), declared here, computed outside.
  /** Tokens before the first generated one: the request's context plus the earlier turns reloaded from cache (block mode: the chain). */
  readonly promptTokens: number;
  /** Of them, tokens served from cache before the prefill: a system-prompt hit and the multi-turn reloads that hit (block mode: the present prefix). */
  readonly hitTokens: number;
  /** Summed latency of those hit reads (ms). */
  readonly hitLoadMs: number;
}

/** Thrown at an operation boundary once the run is over; the pipeline returns the request as cut short. */
export class RequestStopped extends Error {}

/** The check both pipelines make between operations: throws RequestStopped once the run is over. */
export function stopCheck(o: Pick<PipelineOptions, 'stopped'>): () => void {
  return () => {
    if (o.stopped()) throw new RequestStopped();
  };
}
