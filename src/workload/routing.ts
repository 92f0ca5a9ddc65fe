// Which server (rank) serves a recorded request when ranks share one trace (--route; issue 32,
// docs/shared-pool.md#routing). Production clusters put a router in front of their servers:
//   session      requests of one session go to one server, as prefix-aware routers (llm-d's, Dynamo's)
//                keep a conversation where its KV is: the session is the request's first KV block (for
//                a Mooncake trace, requests that share their first hash id), else its conversation;
//   round-robin  request i goes to rank i mod N, as a plain load balancer does;
//   replicate    every rank serves every request (each rank replays the whole trace: the behaviour
//                before issue 32, and the default for private pools).
// The choice is a pure function of the request's position and session key, identical on every rank
// and host, so the ranks divide a trace without talking to each other.
import { createHash } from 'node:crypto';
import type { RouteMode } from '../settings/choices.js';
import type { KvBlock } from './blocks.js';

/** The ranks a request may go to: this rank of `worldSize`, under `mode`. */
export interface RouteContext {
  readonly mode: RouteMode;
  readonly rank: number;
  readonly worldSize: number;
}

/** One rank alone: every request is its own. */
export const SINGLE_RANK: RouteContext = Object.freeze({ mode: 'replicate', rank: 0, worldSize: 1 });

/** What a request is routed by. */
export interface RoutedRequest {
  readonly id: string;
  readonly conversationId?: string;
  readonly blocks?: readonly KvBlock[];
}

/** The session a request belongs to: its first block's key, else its conversation, else itself. */
export function sessionKeyOf(r: RoutedRequest): string {
  return r.blocks?.[0]?.key ?? r.conversationId ?? r.id;
}

/** A stable hash of a session key to [0, worldSize): the same on every host and Node version. */
export function sessionRank(sessionKey: string, worldSize: number): number {
  const h = createHash('sha256').update(sessionKey).digest();
  return h.readUInt32BE(0) % worldSize;
}

/**
 * The rank that serves the `index`-th request (0-based, in trace order) of session `sessionKey`;
 * undefined when every rank serves it (replicate, or one rank).
 */
export function routedRank(mode: RouteMode, worldSize: number, index: number, sessionKey: string): number | undefined {
  if (worldSize <= 1 || mode === 'replicate') return undefined;
  return mode === 'round-robin' ? index % worldSize : sessionRank(sessionKey, worldSize);
}

/** Whether `route`'s rank serves the `index`-th request. */
export function servesRequest(route: RouteContext, index: number, r: RoutedRequest): boolean {
  const rank = routedRank(route.mode, route.worldSize, index, sessionKeyOf(r));
  return rank === undefined || rank === route.rank;
}
