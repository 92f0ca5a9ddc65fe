// The request queue (docs/reference-compat.md#rc-23): higher priority first, then earlier scheduled time, then arrival
// order. The arrival sequence number makes every key unique, so ties never fall through to
// comparing request objects (docs/reference-compat.md#rc-23: tuple ties raised TypeError on coarse clocks).
// A binary heap: push and pop are O(log n).
import type { Request } from './request.js';

export interface Prioritized {
  readonly priority: number;
  readonly scheduledAtMs: number;
}

interface Slot<T> {
  readonly item: T;
  readonly priority: number;
  readonly at: number;
  readonly seq: number;
}

/** True when `a` must be served before `b`. */
function before<T>(a: Slot<T>, b: Slot<T>): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.at !== b.at) return a.at < b.at;
  return a.seq < b.seq;
}

export class RequestQueue<T extends Prioritized = Request> {
  private readonly heap: Array<Slot<T>> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(item: T): void {
    this.heap.push({ item, priority: item.priority, at: item.scheduledAtMs, seq: this.seq++ });
    this.siftUp(this.heap.length - 1);
  }

  /** The next item to serve without removing it. */
  peek(): T | undefined {
    return this.heap[0]?.item;
  }

  /** Remove and return the next item to serve; undefined when empty. */
  pop(): T | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top.item;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private slot(i: number): Slot<T> {
    const s = this.heap[i];
    if (s === undefined) throw new RangeError(`heap index ${i} out of range`);
    return s;
  }

  private swap(i: number, j: number): void {
    const a = this.slot(i);
    this.heap[i] = this.slot(j);
    this.heap[j] = a;
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(this.slot(i), this.slot(parent))) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < n && before(this.slot(l), this.slot(best))) best = l;
      if (r < n && before(this.slot(r), this.slot(best))) best = r;
      if (best === i) return;
      this.swap(i, best);
      i = best;
    }
  }
}
