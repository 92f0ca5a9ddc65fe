// Users, the request queue and the workers of the measured phase (docs/reference-compat.md#rc-23, #rc-24).
// Each user is closed-loop: a request is issued at its scheduled time on the user's own timeline
// (the sum of its think times) or when its previous request finished, whichever is later, so a
// conversation's next turn never starts before the previous one has been written. Logical workers
// (async tasks) take requests from the QoS priority queue.
import { setImmediate } from 'node:timers/promises';
import type { Clock } from '../util/clock.js';
import type { Request } from '../workload/request.js';
import { RequestQueue } from '../workload/queue.js';
import type { SessionStep } from '../workload/session.js';

/** Where a user's steps come from: a live session, a precomputed list (--max-requests), a trace. */
export interface StepSource {
  next(): SessionStep | undefined | Promise<SessionStep | undefined>;
}

/** Hands out user i's step source; asked once per user, when the user first becomes active. */
export type UserPool = (index: number) => StepSource;

/** Live control of a running dispatch (the autoscaler's handle). */
export interface DispatchControl {
  /** Runs users 0 … n−1: new users start at once, users ≥ n stop after their current request. */
  scaleTo(n: number): void;
  readonly activeUsers: number;
  readonly queueDepth: number;
}

export interface DispatchOptions {
  readonly users: UserPool;
  readonly initialUsers: number;
  readonly workers: number;
  readonly clock: Clock;
  /** Measured-phase start on `clock`; scheduled times are offsets from it. */
  readonly startMs: number;
  /**
   * Processes one request, enqueued at `enqueuedMs` on `clock` (its wait for a worker is now minus
   * that). Never rejects for a request's own failure.
   */
  readonly serve: (req: Request, enqueuedMs: number) => Promise<void>;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Aborted when the run must stop issuing (duration over, interrupted, request budget met). */
  readonly stop: AbortSignal;
  /** Receives the control handle once users and workers are running. */
  readonly onStart?: (control: DispatchControl) => void;
}

interface Queued {
  readonly req: Request;
  readonly priority: number;
  readonly scheduledAtMs: number;
  readonly enqueuedMs: number;
  readonly done: () => void;
}

/** Runs users and workers until every active source is exhausted or `stop` fires, then drains in-flight work. */
export async function dispatch(o: DispatchOptions): Promise<void> {
  const queue = new RequestQueue<Queued>();
  const sources = new Map<number, StepSource>();
  const running = new Set<number>();
  const userTasks: Array<Promise<void>> = [];
  let target = o.initialUsers;
  // Idle workers wait here; one queued request wakes one worker (waking all of them for every request
  // made hundreds of idle workers spin), the end of the run wakes them all.
  const idle: Array<() => void> = [];
  const notify = (): void => idle.shift()?.();
  const notifyAll = (): void => {
    for (const w of idle.splice(0)) w();
  };
  const onStop = (): void => {
    // Requests still queued are never started: release their users.
    while (queue.size > 0) queue.pop()?.done();
    notifyAll();
  };
  o.stop.addEventListener('abort', onStop, { once: true });

  const enqueue = (req: Request): Promise<void> =>
    new Promise<void>((done) => {
      if (o.stop.aborted) return done();
      queue.push({ req, priority: req.priority, scheduledAtMs: req.scheduledAtMs, enqueuedMs: o.clock.now(), done });
      notify();
    });

  const user = async (index: number): Promise<void> => {
    let source = sources.get(index);
    if (source === undefined) {
      source = o.users(index);
      sources.set(index, source);
    }
    try {
      while (index < target && !o.stop.aborted) {
        const next = source.next();
        const step = next instanceof Promise ? await next : next;
        if (step === undefined) break;
        const wait = o.startMs + step.request.scheduledAtMs - o.clock.now();
        if (wait > 0) await o.sleep(wait, o.stop).catch(() => undefined);
        // With no think time and back-ends that never block (trace mode), requests would chain through
        // microtasks only and starve timers and I/O (the duration timer, the trace flush): yield.
        else await setImmediate();
        if (o.stop.aborted) break;
        if (step.ragRequest === undefined) await enqueue(step.request);
        else await Promise.all([enqueue(step.request), enqueue(step.ragRequest)]);
      }
    } finally {
      running.delete(index);
      if (running.size === 0) notifyAll();
    }
  };
  const startUsers = (): void => {
    for (let i = 0; i < target; i++) {
      if (running.has(i)) continue;
      running.add(i);
      userTasks.push(user(i));
    }
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const item = queue.pop();
      if (item === undefined) {
        if (running.size === 0 || o.stop.aborted) return;
        await new Promise<void>((resolve) => idle.push(resolve));
        continue;
      }
      try {
        await o.serve(item.req, item.enqueuedMs);
      } finally {
        item.done();
      }
    }
  };

  try {
    startUsers();
    const workers = Array.from({ length: o.workers }, worker);
    o.onStart?.({
      scaleTo: (n) => {
        target = Math.max(0, n);
        if (!o.stop.aborted) startUsers();
      },
      get activeUsers() {
        return Math.min(target, running.size);
      },
      get queueDepth() {
        return queue.size;
      },
    });
    await Promise.all(workers);
    await Promise.all(userTasks);
  } finally {
    o.stop.removeEventListener('abort', onStop);
  }
}

/** A source over a live session (duration-bounded runs). */
export function sessionSource(session: { nextRequest(): SessionStep }): StepSource {
  return { next: () => session.nextRequest() };
}

/** The index of the step scheduled first (ties: the lowest index), or −1 when every head is undefined. */
export function earliestHead(heads: ReadonlyArray<SessionStep | undefined>): number {
  let best = -1;
  for (let i = 0; i < heads.length; i++) {
    const h = heads[i];
    const b = best >= 0 ? heads[best] : undefined;
    if (h !== undefined && (b === undefined || h.request.scheduledAtMs < b.request.scheduledAtMs)) best = i;
  }
  return best;
}

/**
 * The first `limit` requests of all users in scheduled order (ties by user index), split back into
 * per-user lists: with --max-requests the same seed always selects the same requests.
 */
export function firstRequestsInScheduleOrder(sessions: ReadonlyArray<{ nextRequest(): SessionStep }>, limit: number): StepSource[] {
  const perUser: SessionStep[][] = sessions.map(() => []);
  const heads = sessions.map((s) => s.nextRequest());
  let counted = 0;
  while (counted < limit && heads.length > 0) {
    const best = earliestHead(heads);
    const step = heads[best];
    if (step === undefined) break;
    if (step.ragRequest !== undefined && counted + 2 > limit) {
      const { ragRequest: _dropped, ...alone } = step; // the budget ends on this user's own request
      perUser[best]?.push(alone);
      counted += 1;
    } else {
      perUser[best]?.push(step);
      counted += step.ragRequest === undefined ? 1 : 2;
    }
    heads[best] = sessions[best].nextRequest();
  }
  return perUser.map((steps) => {
    let i = 0;
    return { next: () => steps[i++] };
  });
}
