// Async mutual exclusion for the single-threaded event loop: a per-key mutex (the reference's
// entry_locks) and a counting semaphore (--max-concurrent-allocs).

export class Semaphore {
  private readonly waiters: Array<() => void> = [];
  private held = 0;

  constructor(readonly permits: number) {
    if (!(permits >= 1)) throw new RangeError('a semaphore needs at least one permit');
  }

  async acquire(): Promise<void> {
    if (this.held < this.permits) {
      this.held++;
      return;
    }
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

/** One exclusive lock per key; entries exist only while the key is held or awaited. */
export class KeyedMutex {
  private readonly queues = new Map<string, Array<() => void>>();

  isLocked(key: string): boolean {
    return this.queues.has(key);
  }

  async lock(key: string): Promise<void> {
    const q = this.queues.get(key);
    if (q === undefined) {
      this.queues.set(key, []);
      return;
    }
    await new Promise<void>((resolve) => q.push(resolve));
  }

  unlock(key: string): void {
    const q = this.queues.get(key);
    if (q === undefined) throw new Error(`unlock of '${key}' which is not locked`);
    const next = q.shift();
    if (next !== undefined) next();
    else this.queues.delete(key);
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
