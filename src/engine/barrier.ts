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
//
// The directory is shared, so what is in it is checked, not trusted: every field of an arrival (its
// rank matches its name and the world, a one-line host name, a pid, an arrival time no further from
// now than the timeout allows — a forged time an hour ahead would otherwise move the agreed start an
// hour), the decision rank 0 wrote, and each file is read with a non-blocking, no-follow open of a
// regular file (a FIFO named like an arrival would otherwise block past the timeout).
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf } from '../util/errors.js';
import { readInputTextAsync } from '../util/input-file.js';
import { hasControl, inert } from '../util/safe-text.js';

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

/** A barrier document larger than this is not ours (a decision lists every rank's arrival, ~100 bytes each). */
const MAX_DOC_BYTES = 16 * 1024 * 1024;
const MAX_HOST_CHARS = 255;

const arrivalName = (phase: string, rank: number): string => `${phase}.arrive.rank_${rank}`;
const goName = (phase: string): string => `${phase}.go`;
const abortName = (phase: string): string => `${phase}.abort`;

function missingFrom(arrivals: readonly Arrival[], worldSize: number): number[] {
  const seen = new Set(arrivals.map((a) => a.rank));
  return Array.from({ length: worldSize }, (_, r) => r).filter((r) => !seen.has(r));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why `doc` is not rank `rank`'s arrival, or undefined when it is one. A real arrival was written at
 * most two timeouts before rank 0 looks (the rank waits one timeout, rank 0 at most another) and, with
 * clocks that agree within the timeout, not later than one timeout ahead.
 */
export function arrivalProblem(doc: unknown, rank: number, worldSize: number, nowMs: number, timeoutMs: number): string | undefined {
  if (!isRecord(doc)) return 'not a JSON object';
  if (doc.rank !== rank) return `its rank is not ${rank}, the rank its name says`;
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) return `rank ${rank} is outside the world of ${worldSize} rank(s)`;
  const host = doc.host;
  if (typeof host !== 'string' || host.length === 0 || host.length > MAX_HOST_CHARS || hasControl(host))
    return `its host is not a host name (one line of 1 to ${MAX_HOST_CHARS} characters)`;
  if (typeof doc.pid !== 'number' || !Number.isSafeInteger(doc.pid) || doc.pid < 0) return 'its pid is not a process id';
  const at = doc.arrivedEpochMs;
  if (typeof at !== 'number' || !Number.isFinite(at)) return 'its arrival time is not a number';
  if (at > nowMs + timeoutMs || at < nowMs - 2 * timeoutMs)
    return `its arrival time is ${((at - nowMs) / 1000).toFixed(1)} s from now, beyond what a --barrier-timeout of ${timeoutMs / 1000} s allows`;
  return undefined;
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

  private invalid(name: string, what: string, problem: string): BarrierError {
    return new BarrierError(
      `the barrier file ${inert(name)}.json in ${this.o.where} is not a valid ${what} (${problem}); is another program writing into that directory?`,
    );
  }

  /** The arrivals so far, each checked field by field; a file that is not a valid arrival fails the barrier, naming it. */
  private async arrivals(phase: string): Promise<Arrival[]> {
    const prefix = `${phase}.arrive.`;
    const names = await this.o.store.list(prefix);
    const out: Arrival[] = [];
    for (const name of names) {
      const m = /^rank_(\d{1,9})$/.exec(name.slice(prefix.length));
      if (m === null) throw this.invalid(name, 'arrival', 'its name is not <phase>.arrive.rank_<N>');
      const rank = Number(m[1]);
      const doc = await this.o.store.get(name);
      if (doc === undefined) continue; // gone between the listing and the read
      const problem = arrivalProblem(doc, rank, this.o.worldSize, this.o.time.wallNow(), this.o.timeoutMs);
      if (problem !== undefined) throw this.invalid(name, 'arrival', problem);
      const a = doc as unknown as Arrival;
      out.push({ rank: a.rank, host: a.host, pid: a.pid, arrivedEpochMs: a.arrivedEpochMs });
    }
    return out;
  }

  /** Rank 0's decision as a follower reads it: every rank's arrival checked, a payload present. */
  private checkedDecision<T>(phase: string, go: unknown): Decision<T> {
    const name = goName(phase);
    if (!isRecord(go) || !Array.isArray(go.arrivals) || !('payload' in go)) throw this.invalid(name, 'decision', 'no arrivals and payload');
    const arrivals: unknown[] = go.arrivals;
    if (arrivals.length !== this.o.worldSize)
      throw this.invalid(name, 'decision', `it lists ${arrivals.length} arrivals for ${this.o.worldSize} rank(s)`);
    const now = this.o.time.wallNow();
    arrivals.forEach((a, rank) => {
      const problem = arrivalProblem(a, rank, this.o.worldSize, now, this.o.timeoutMs);
      if (problem !== undefined) throw this.invalid(name, 'decision', `arrival of rank ${rank}: ${problem}`);
    });
    return go as unknown as Decision<T>;
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
      if (go !== undefined) return this.checkedDecision<T>(phase, go);
      const abort = await this.o.store.get(abortName(phase));
      if (abort !== undefined) {
        // Its words are shown on a console and its ranks reported: one line of text, ranks that exist.
        const said = isRecord(abort) && typeof abort.message === 'string' ? inert(abort.message).slice(0, 2000) : 'a rank is missing';
        const missing = isRecord(abort) && Array.isArray(abort.missing) ? abort.missing : [];
        const ranks = missing.filter((r): r is number => Number.isInteger(r) && (r as number) >= 0 && (r as number) < this.o.worldSize);
        throw new BarrierError(`rank 0 gave up: ${said}`, ranks);
      }
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
    const path = join(this.dir, `${name}.json`);
    // Non-blocking and no-follow: a FIFO or a link planted under an arrival's name is refused at once.
    const read = await readInputTextAsync(path, { maxBytes: MAX_DOC_BYTES, noFollow: true });
    if (!read.ok) {
      if (read.problem === 'file not found') return undefined;
      throw new BarrierError(`cannot read the barrier file ${inert(path)}: ${read.problem}`);
    }
    const text = read.text;
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
