// What a workload source is: where a run's requests come from (synthetic users, a dataset, a trace).
// Each source is one object in the list of engine/sources/registry.ts, declaring the flags that pick
// it, the files it reads, how it opens (bad input → its own typed error, before any tier is set up),
// what the results and the log say about it, and the users it issues requests through. The engine and
// the command line go through the list and know no source by name.
import type { Rng } from '../../util/rng.js';
import type { RunConfig } from '../../settings/run-config.js';
import type { RunFlags } from '../../settings/flags.js';
import type { WorkloadParts } from '../build-workload.js';
import type { UserPool } from '../dispatcher.js';
import type { StopController } from '../stop-control.js';
import type { RouteContext } from '../../workload/routing.js';
import type { KvBlock } from '../../workload/blocks.js';
import type { NumberedChains } from '../../workload/numbered-chains.js';

/**
 * How this rank takes its share of a recorded source when ranks divide it (--route; workload/routing.ts):
 * the route, and who is told of every request passed (served here or not) with its chain when the
 * source names one — the pool's account of the whole trace's reuse.
 */
export interface RankShare {
  readonly route: RouteContext;
  /** Whether the run stores KV blocks: synthetic users then name their conversations per rank (pooled keys never collide across ranks). */
  readonly pooled: boolean;
  onRequest(served: boolean, chain: readonly KvBlock[] | undefined): void;
}

/** The flag values a source reads to know whether it is picked and what it reads (RunConfig and the checked flags both qualify). */
export type SourceFlags = Omit<RunFlags, 'model'>;

/** A file the run reads, named by the flag that gives it (no output may be one of them). */
export interface SourceInput {
  readonly flag: string;
  readonly path: string;
}

/** The users of a run, and what the results say about them afterwards. */
export interface RunUsers {
  readonly pool: UserPool;
  /** Conversations synthetic users found dropped by the conversation limit. */
  conversationsLost(): number;
  /** The error that ended a recorded source early (a trace file failing mid-run); undefined when none. */
  sourceFailure(): unknown;
}

export type UserSwitches = Pick<RunConfig, 'numUsers' | 'maxRequests' | 'requestRate' | 'replayCycles' | 'disableMultiTurn'>;

/** What a source's users are made from: each draws from its own named streams of `rng` (same seed, same requests). */
export interface UsersContext {
  readonly cfg: UserSwitches;
  readonly parts: WorkloadParts;
  readonly rng: Rng;
  /** A recorded source that fails mid-run stops the run as 'failed' through it. */
  readonly stop: Pick<StopController, 'stopWith'>;
  /** This rank's share when ranks divide the source; absent: one rank, every request its own. */
  readonly share?: RankShare;
}

/** A source opened for one run: its input read and checked. */
export interface OpenedSource {
  /** The results' `kvcache_bench.workload_source` block: its kind, files, counts and every skipped row or record. */
  describe(): Record<string, unknown>;
  /** Lines for the run log once it is open (none for synthetic users). */
  logLines(): readonly string[];
  users(ctx: UsersContext): RunUsers;
  /**
   * The same requests' chains, in order, at the recording's own pace, with numbered keys, in batches —
   * offered by sources that name their blocks, so `kv-cache size` skips key strings, per-request draws
   * and a promise per request.
   */
  numberedChains?(): AsyncIterable<NumberedChains>;
}

/** A typed error class a source throws for bad input (the CLI reports it and exits 2). */
export type InputErrorClass = abstract new (...args: never[]) => Error;

/** How flags pick a source; a run replays one picked source, or the default source when none is picked. */
export interface SourcePick {
  /** The flag that picks it, as the user types it (`--dataset-path`). */
  readonly flag: string;
  /** What it replays, in words (`ShareGPT replay`), for the message when two are picked. */
  readonly what: string;
  picked(f: SourceFlags): boolean;
}

export interface WorkloadSourceDef {
  /** `kind` in the results' workload_source block. */
  readonly kind: string;
  /** Absent for the default source (synthetic users), used when no other is picked. */
  readonly pick?: SourcePick;
  /**
   * Requests come from a recording: any size from 1 token, not bounded by the user templates (the
   * model-fit checks then assume the smallest request is 1 token).
   */
  readonly recorded: boolean;
  /**
   * The block size (tokens) its recording implies: a source whose requests name their blocks (Mooncake)
   * turns block mode on by itself; undefined = whole-request entries unless --kv-block-tokens.
   */
  blockTokens?(f: SourceFlags): number | undefined;
  /** The files it reads under these flags. */
  inputs(f: SourceFlags): readonly SourceInput[];
  /** Reads and checks the input; bad input throws one of `inputErrors`. */
  open(cfg: RunConfig): Promise<OpenedSource>;
  readonly inputErrors: readonly InputErrorClass[];
}
