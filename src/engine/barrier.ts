// The ranks' meeting points, through a shared directory: every rank writes an arrival file, rank 0
// waits until all have arrived, then writes the decision (`go`) that the others poll for. Files and
// polling need no ports, no address of rank 0 and nothing but the directory every rank already
// shares for its results, so the same barrier works on one host, across hosts (NFS, Lustre, …), under
// mpirun, srun or a Kubernetes indexed job alike (README "MLPerf submission runs" gives the reasons).
//
// A rank that never arrives makes rank 0 give up after the timeout: rank 0 writes `abort` naming the
// missing ranks, so every rank that did arrive fails at once with the same message (not after a
// timeout of its own), and the missing one finds `abort` if it arrives late. A directory that already
// holds a decision belongs to an earlier run and is refused.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf } from '../util/errors.js';

/** How often a waiting rank looks at the directory. */
export const BARRIER_POLL_MS = 20;

/** What the barrier stores: small JSON documents by name. Injected, so tests run on a Map and manual time. */
export interface BarrierStore {
  put(name: string, value: unknown): Promise<void>;
  /** The document, or undefined when it does not exist (yet). */
  get(name: string): Promise<unknown>;
  /** Names of the documents whose name starts with `prefix`. */
  list(prefix: string): Promise<string[]>;
}

export interface BarrierTime {
  /** Wall-clock milliseconds since the epoch: the one time base ranks on different hosts share. */
  wallNow(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface Arrival {
  readonly rank: number;
  readonly host: string;
  readonly pid: number;
  readonly arrivedEpochMs: number;
}

export interface Decision<T> {
  readonly arrivals: readonly Arrival[];
  readonly payload: T;
}

/** A barrier that did not complete: a rank missing, a stale directory, an interrupt, an unreadable file. */
export class BarrierError extends Error {
  constructor(
    message: string,
    /** Ranks that never arrived (known to rank 0, and to the others through `abort`). */
    readonly missingRanks: readonly number[] = [],
  ) {
    super(message);
    this.name = 'BarrierError';
  }
}

export interface BarrierOptions {
  readonly store: BarrierStore;
  readonly rank: number;
  readonly worldSize: number;
  readonly host: string;
  readonly pid: number;
  readonly timeoutMs: number;
  readonly time: BarrierTime;
  /** Shown in messages: where the barrier lives. */
  readonly where: string;
  readonly pollMs?: number;
}

const arrivalName = (phase: string, rank: number): string => `${phase}.arrive.rank_${rank}`;
const goName = (phase: string): string => `${phase}.go`;
const abortName = (phase: string): string => `${phase}.abort`;

function missingFrom(arrivals: readonly Arrival[], worldSize: number): number[] {
  const seen = new Set(arrivals.map((a) => a.rank));
  return Array.from({ length: worldSize }, (_, r) => r).filter((r) => !seen.has(r));
}

function listRanks(ranks: readonly number[]): string {
  const shown = ranks.slice(0, 16).join(', ');
  return ranks.length > 16 ? `${shown}, … (${ranks.length} ranks)` : shown;
}

export class FileBarrier {
  private readonly pollMs: number;

  constructor(private readonly o: BarrierOptions) {
    this.pollMs = o.pollMs ?? BARRIER_POLL_MS;
  }

  /**
   * Meets the other ranks at `phase`. Rank 0 computes the payload from the arrivals with `decide`;
   * every rank returns the same decision. Throws BarrierError on timeout, interrupt or a stale dir.
   */
  async meet<T>(phase: string, decide: (arrivals: readonly Arrival[]) => T, signal?: AbortSignal): Promise<Decision<T>> {
    const { store, rank } = this.o;
    if ((await store.get(goName(phase))) !== undefined || (await store.get(arrivalName(phase, rank))) !== undefined)
      throw new BarrierError(
        `the barrier directory ${this.o.where} already holds the '${phase}' barrier of an earlier run; give each run a fresh directory`,
      );
    const me: Arrival = { rank, host: this.o.host, pid: this.o.pid, arrivedEpochMs: this.o.time.wallNow() };
    await store.put(arrivalName(phase, rank), me);
    return rank === 0 ? this.lead(phase, decide, signal) : this.follow<T>(phase, signal);
  }

  private deadline(): number {
    return this.o.time.wallNow() + this.o.timeoutMs;
  }

  private async pause(phase: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.o.time.sleep(this.pollMs, signal);
    } catch {
      throw new BarrierError(`interrupted while waiting at the '${phase}' barrier`);
    }
  }

  private async arrivals(phase: string): Promise<Arrival[]> {
    const names = await this.o.store.list(`${phase}.arrive.`);
    const docs = await Promise.all(names.map((n) => this.o.store.get(n)));
    return docs.filter((d): d is Arrival => typeof (d as Arrival | undefined)?.rank === 'number');
  }

  private async lead<T>(phase: string, decide: (arrivals: readonly Arrival[]) => T, signal?: AbortSignal): Promise<Decision<T>> {
    const deadline = this.deadline();
    for (;;) {
      const arrivals = await this.arrivals(phase);
      const missing = missingFrom(arrivals, this.o.worldSize);
      if (missing.length === 0) {
        const decision: Decision<T> = { arrivals: [...arrivals].sort((a, b) => a.rank - b.rank), payload: decide(arrivals) };
        await this.o.store.put(goName(phase), decision);
        return decision;
      }
      if (this.o.time.wallNow() >= deadline) {
        const message = `rank(s) ${listRanks(missing)} of ${this.o.worldSize} did not arrive at the '${phase}' barrier within ${this.o.timeoutMs / 1000} s (${this.o.where})`;
        await this.o.store.put(abortName(phase), { missing, message }).catch(() => undefined);
        throw new BarrierError(message, missing);
      }
      await this.pause(phase, signal);
    }
  }

  private async follow<T>(phase: string, signal?: AbortSignal): Promise<Decision<T>> {
    const deadline = this.deadline();
    for (;;) {
      const go = await this.o.store.get(goName(phase));
      if (go !== undefined) return go as Decision<T>;
      const abort = (await this.o.store.get(abortName(phase))) as { missing?: number[]; message?: string } | undefined;
      if (abort !== undefined) throw new BarrierError(`rank 0 gave up: ${abort.message ?? 'a rank is missing'}`, abort.missing ?? []);
      if (this.o.time.wallNow() >= deadline)
        throw new BarrierError(
          `rank 0 did not open the '${phase}' barrier within ${this.o.timeoutMs / 1000} s (${this.o.where}); is rank 0 running, and is the directory shared by every host?`,
        );
      await this.pause(phase, signal);
    }
  }
}

/** A BarrierStore on a directory: one JSON file per document, written to a temporary name and renamed (readers never see half a file). */
export class DirStore implements BarrierStore {
  constructor(
    private readonly dir: string,
    private readonly pid: number,
  ) {}

  async put(name: string, value: unknown): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Others write into this directory too: an unguessable temp name, created exclusively (never through a planted link).
    const tmp = join(this.dir, `.${name}.tmp-${this.pid}-${randomBytes(8).toString('hex')}`);
    const file = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      try {
        await file.writeFile(JSON.stringify(value));
      } finally {
        await file.close();
      }
      await rename(tmp, join(this.dir, `${name}.json`));
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
  }

  async get(name: string): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(join(this.dir, `${name}.json`), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new BarrierError(`cannot read the barrier file ${join(this.dir, `${name}.json`)}: ${messageOf(e)}`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BarrierError(`the barrier file ${join(this.dir, `${name}.json`)} is not JSON; another program writes into ${this.dir}?`);
    }
  }

  async list(prefix: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new BarrierError(`cannot list the barrier directory ${this.dir}: ${messageOf(e)}`);
    }
    return names.filter((n) => n.startsWith(prefix) && n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length));
  }
}
