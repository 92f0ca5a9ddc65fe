// Async mutual exclusion for the single-threaded event loop: a per-key mutex (the reference's
// entry_locks) and a counting semaphore (--max-concurrent-allocs).

export class Semaphore {
  private readonly waiters: Array<() => void> = [];
  private held = 0;

  constructor(readonly permits: number) {
    if (!(permits >= 1)) throw new RangeError('a semaphore needs at least one permit');
  }

  /** Takes a permit if one is free, synchronously. */
  tryAcquire(): boolean {
    if (this.held >= this.permits) return false;
    this.held++;
    return true;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Hands the permit straight to the next waiter, if any (so `held` stays the same). */
  release(): void {
    const next = this.waiters.shift();
    if (next !== undefined) next();
    else this.held--;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

/** Held with nobody waiting: no array is allocated for the common, uncontended case. */
const NO_WAITERS: ReadonlyArray<() => void> = Object.freeze([]);

/** One exclusive lock per key; entries exist only while the key is held or awaited. */
export class KeyedMutex {
  private readonly queues = new Map<string, ReadonlyArray<() => void>>();

  isLocked(key: string): boolean {
    return this.queues.has(key);
  }

  /** Takes the lock if it is free, synchronously; false if someone holds it. */
  tryLock(key: string): boolean {
    if (this.queues.has(key)) return false;
    this.queues.set(key, NO_WAITERS);
    return true;
  }

  lock(key: string): Promise<void> {
    if (this.tryLock(key)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const q = this.queues.get(key) ?? NO_WAITERS;
      this.queues.set(key, q === NO_WAITERS ? [resolve] : [...q, resolve]);
    });
  }

  unlock(key: string): void {
    const q = this.queues.get(key);
    if (q === undefined) throw new Error(`unlock of '${key}' which is not locked`);
    const next = q[0];
    if (next === undefined) {
      this.queues.delete(key); // the common case: nobody waited, nothing to allocate
      return;
    }
    this.queues.set(key, q.length === 1 ? NO_WAITERS : q.slice(1));
    next();
  }

  async with<T>(key: string, fn: () => Promise<T>): Promise<T> {
    await this.lock(key);
    try {
      return await fn();
    } finally {
      this.unlock(key);
    }
  }
}

export type LockMode = 'shared' | 'exclusive';

interface RwState {
  readers: number;
  writer: boolean;
  /**
   * Waiters in arrival order; a reader never overtakes a waiting writer (no writer starvation). Made on
   * the first wait: most locks (one per block read or written) are never waited for.
   */
  queue: Array<{ readonly mode: LockMode; readonly grant: () => void }> | undefined;
}

/**
 * One readers–writer lock per key: any number of shared holders (reads of an entry) at once, or one
 * exclusive holder (a write, move or delete of it). Entries exist only while the key is held or awaited.
 */
export class KeyedRwLock {
  private readonly states = new Map<string, RwState>();

  isLocked(key: string): boolean {
    return this.states.has(key);
  }

  /** Takes the lock in `mode` if that is possible now, synchronously. */
  tryLock(key: string, mode: LockMode): boolean {
    const s = this.states.get(key);
    if (s === undefined) {
      this.states.set(key, { readers: mode === 'shared' ? 1 : 0, writer: mode === 'exclusive', queue: undefined });
      return true;
    }
    if (mode === 'exclusive' || s.writer || (s.queue !== undefined && s.queue.length > 0)) return false;
    s.readers++;
    return true;
  }

  lock(key: string, mode: LockMode): Promise<void> {
    if (this.tryLock(key, mode)) return Promise.resolve();
    const s = this.states.get(key);
    if (s === undefined) throw new Error('unreachable: a refused lock has a state');
    return new Promise<void>((grant) => (s.queue ??= []).push({ mode, grant }));
  }

  unlock(key: string, mode: LockMode): void {
    const s = this.states.get(key);
    if (s === undefined || (mode === 'exclusive' ? !s.writer : s.readers === 0)) {
      throw new Error(`unlock (${mode}) of '${key}' which is not locked that way`);
    }
    if (mode === 'exclusive') s.writer = false;
    else s.readers--;
    this.admit(key, s);
  }

  /** Grants the head of the queue what it can have now: a writer alone, or every reader up to the next writer. */
  private admit(key: string, s: RwState): void {
    const queue = s.queue;
    while (!s.writer && queue !== undefined) {
      const head = queue[0];
      if (head === undefined) break;
      if (head.mode === 'exclusive' && s.readers > 0) break;
      queue.shift();
      if (head.mode === 'exclusive') s.writer = true;
      else s.readers++;
      head.grant();
    }
    if (!s.writer && s.readers === 0 && (queue === undefined || queue.length === 0)) this.states.delete(key);
  }
}
