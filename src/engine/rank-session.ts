// One rank's part in a multi-rank run: meet the others after preparation, start the measured phase
// at the agreed instant, stop it at the agreed end (start + duration, fixed at the start barrier, so
// every rank's window covers the same interval), meet again before tearing down (no rank's file
// deletion runs inside another's window), and report what happened: the waits, and each window's
// distance from the agreed instants (the skew). Never prints.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RankFacts } from '../metrics/result.js';
import { messageOf } from '../util/errors.js';
import { BarrierError, DirStore, FileBarrier } from './barrier.js';
import type { BarrierStore, BarrierTime } from './barrier.js';
import type { RankIdentity } from './ranks.js';

/** Time between the last arrival and the agreed start: every rank must have seen the decision by then (a shared file system may take a while to show a new file). */
export const START_LEAD_MS = 1000;

/** What the wall clock is, for the results file: the skews are differences of it. */
export const CLOCK_SOURCE =
  'CLOCK_REALTIME at process start (performance.timeOrigin) + CLOCK_MONOTONIC since (performance.now()); ranks on different hosts agree only as well as their clocks are synchronised (NTP/PTP)';

export const realBarrierTime: BarrierTime = {
  wallNow: () => performance.timeOrigin + performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? undefined : { signal }),
};

export interface RankSessionOptions {
  readonly identity: RankIdentity;
  /** The shared directory of the barrier; undefined only for a world of one rank. */
  readonly barrierDir: string | undefined;
  readonly timeoutSec: number;
  readonly durationSec: number;
  readonly host: string;
  readonly pid: number;
  readonly time?: BarrierTime;
  /** Defaults to files in `barrierDir`. */
  readonly store?: BarrierStore;
}

interface Agreement {
  readonly startEpochMs: number;
  readonly endEpochMs: number;
}

export class RankSession {
  private readonly time: BarrierTime;
  private readonly barrier: FileBarrier | undefined;
  private agreed: Agreement | undefined;
  private startWaitMs = 0;
  private windowStartEpochMs: number | undefined;
  private peers: RankFacts['peers'] = [];

  /** This rank's place among the ranks. */
  get identity(): RankIdentity {
    return this.o.identity;
  }

  constructor(private readonly o: RankSessionOptions) {
    this.time = o.time ?? realBarrierTime;
    const dir = o.barrierDir;
    if (o.identity.worldSize > 1 && dir === undefined && o.store === undefined)
      throw new Error('a multi-rank run needs a barrier directory');
    this.barrier =
      o.identity.worldSize > 1
        ? new FileBarrier({
            store: o.store ?? new DirStore(dir ?? '', o.pid),
            rank: o.identity.rank,
            worldSize: o.identity.worldSize,
            host: o.host,
            pid: o.pid,
            timeoutMs: o.timeoutSec * 1000,
            time: this.time,
            where: dir ?? '(store)',
          })
        : undefined;
  }

  /** Meets the other ranks and returns at the agreed start instant. Throws BarrierError. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.barrier === undefined) return;
    const arrived = this.time.wallNow();
    const decision = await this.barrier.meet<Agreement>(
      'start',
      (arrivals) => {
        const startEpochMs = Math.max(this.time.wallNow(), ...arrivals.map((a) => a.arrivedEpochMs)) + START_LEAD_MS;
        return { startEpochMs, endEpochMs: startEpochMs + this.o.durationSec * 1000 };
      },
      signal,
    );
    this.agreed = decision.payload;
    this.peers = decision.arrivals.map((a) => ({ rank: a.rank, host: a.host, arrivedEpochMs: a.arrivedEpochMs }));
    const wait = this.agreed.startEpochMs - this.time.wallNow();
    // The decision file is in a shared directory: a start further off than the timeout allows, or no start at all, is not rank 0's.
    const { startEpochMs, endEpochMs } = this.agreed;
    if (
      !Number.isFinite(startEpochMs) ||
      !Number.isFinite(endEpochMs) ||
      endEpochMs < startEpochMs ||
      wait > this.o.timeoutSec * 1000 + START_LEAD_MS
    )
      throw new BarrierError(
        'the agreed start in the barrier directory is not one rank 0 could have decided (further off than --barrier-timeout, or not a time)',
      );
    if (wait > 0)
      await this.time.sleep(wait, signal).catch(() => {
        throw new BarrierError('interrupted while waiting for the agreed start');
      });
    this.startWaitMs = this.time.wallNow() - arrived;
  }

  /**
   * Runs `work` in turns with the other ranks of this host: all ranks meet at `phase`, then the ranks
   * of each host take turns in rank order, one per host at a time, every rank meeting the others after
   * each turn; so while a rank works, its host's other ranks only wait (different hosts work at
   * once). For measurements of a whole device that a peer's I/O would disturb (the metadata
   * calibration). Every rank must call it with the same `phase`, whatever its own work does; a failed
   * `work` still takes part in every meeting (the others would wait for it until the timeout) and its
   * error is thrown after the last. A barrier failure throws BarrierError.
   */
  async inTurns<T>(phase: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.barrier === undefined) return work();
    const met = await this.barrier.meet(phase, () => ({}), signal);
    const perHost = new Map<string, number[]>();
    for (const a of met.arrivals) perHost.set(a.host, [...(perHost.get(a.host) ?? []), a.rank]);
    const mine = (perHost.get(this.o.host) ?? []).sort((a, b) => a - b).indexOf(this.o.identity.rank);
    const turns = Math.max(...[...perHost.values()].map((r) => r.length));
    let outcome: { readonly value: T } | { readonly error: unknown } | undefined;
    for (let turn = 0; turn < turns; turn++) {
      if (turn === mine)
        outcome = await work().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      await this.barrier.meet(`${phase}-turn-${turn}`, () => ({}), signal);
    }
    if (outcome === undefined)
      throw new BarrierError(`rank ${this.o.identity.rank} had no turn at the '${phase}' barrier (its host is not among the arrivals)`);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  /** Called as the measured window opens: records its start and returns how long it runs (ms, to the agreed end). */
  windowOpened(): number {
    const now = this.time.wallNow();
    this.windowStartEpochMs = now;
    return this.agreed === undefined ? this.o.durationSec * 1000 : Math.max(0, this.agreed.endEpochMs - now);
  }

  /**
   * Meets the others after the measured phase (before teardown) and returns the rank's facts. A
   * failed end barrier does not void this rank's measurement: it is reported in `barrier.end_problem`.
   */
  async end(elapsedSec: number, signal?: AbortSignal): Promise<RankFacts> {
    const windowStart = this.windowStartEpochMs ?? this.time.wallNow();
    const windowEnd = windowStart + elapsedSec * 1000;
    let endWaitMs: number | null = null;
    let endProblem: string | null = null;
    if (this.barrier !== undefined) {
      const t0 = this.time.wallNow();
      try {
        await this.barrier.meet('end', () => ({}), signal);
        endWaitMs = this.time.wallNow() - t0;
      } catch (e) {
        endProblem = messageOf(e);
      }
    }
    const id = this.o.identity;
    return {
      rank: id.rank,
      worldSize: id.worldSize,
      launcher: id.launcher,
      worldSizeFrom: id.worldSizeFrom,
      host: this.o.host,
      barrier:
        this.barrier === undefined
          ? null
          : { dir: this.o.barrierDir ?? '', timeoutSec: this.o.timeoutSec, startWaitMs: this.startWaitMs, endWaitMs, endProblem },
      agreedStartEpochMs: this.agreed?.startEpochMs ?? null,
      agreedEndEpochMs: this.agreed?.endEpochMs ?? null,
      windowStartEpochMs: windowStart,
      windowEndEpochMs: windowEnd,
      startSkewMs: this.agreed === undefined ? null : windowStart - this.agreed.startEpochMs,
      endSkewMs: this.agreed === undefined ? null : windowEnd - this.agreed.endEpochMs,
      clockSource: CLOCK_SOURCE,
      peers: this.peers,
    };
  }
}
