// A fixed set of equally sized, aligned buffers carved from one slab, handed out and returned.
// Allocated (and touched) once, then reused: fresh guest memory is slow on first touch.
import { AlignedSlab, DIRECT_ALIGN } from './aligned.js';
import type { DirectSlabs } from './aligned.js';
import { roundUp } from '../util/units.js';

export class SlotPool {
  readonly slotBytes: number;
  readonly direct: boolean;
  /** The shared memory every slot is a view of (handed to worker threads once). */
  readonly buffer: SharedArrayBuffer;
  private readonly free: Uint8Array[] = [];
  /** Slots handed out and not yet returned: a second release of one would hand it to two users at once. */
  private readonly lent = new Set<Uint8Array>();
  private readonly waiters: Array<{
    readonly resolve: (slot: Uint8Array) => void;
    readonly prefer?: ((slot: Uint8Array) => number) | undefined;
  }> = [];

  /** `count` slots of `slotBytes` (rounded up to DIRECT_ALIGN); `probeDir`, `registry` as in AlignedSlab.create. */
  constructor(count: number, slotBytes: number, probeDir?: string, registry?: DirectSlabs) {
    if (count < 1) throw new RangeError('a slot pool needs at least one slot');
    this.slotBytes = roundUp(slotBytes, DIRECT_ALIGN);
    const { slab, direct } = AlignedSlab.create(count * this.slotBytes, probeDir, registry);
    this.direct = direct;
    this.buffer = slab.buffer;
    for (let i = 0; i < count; i++) {
      const slot = slab.view(i * this.slotBytes, this.slotBytes);
      slot.fill(0); // first touch now, not on the measured path
      this.free.push(slot);
    }
  }

  get available(): number {
    return this.free.length;
  }

  /**
   * A free slot, the one `prefer` scores highest if given, waiting for one to be released if none is
   * free (a released slot then goes to the waiter that scores it highest, above 0, else the first).
   * `top`: no slot scores more, so the first that scores it is taken (tryAcquire).
   */
  acquire(prefer?: (slot: Uint8Array) => number, top = Infinity): Promise<Uint8Array> {
    const slot = this.tryAcquire(prefer, top);
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiters.push({ resolve, prefer }));
  }

  /**
   * A free slot, the one `prefer` scores highest (the latest freed among equals); undefined if none is
   * free. The search stops at the first slot scoring `top` (the most any can): with one small KV block
   * per write, scoring every free slot each time cost more than filling the block.
   */
  tryAcquire(prefer?: (slot: Uint8Array) => number, top = Infinity): Uint8Array | undefined {
    if (prefer === undefined || this.free.length < 2) return this.lend(this.free.pop());
    let best = this.free.length - 1;
    let bestScore = -Infinity;
    for (let i = this.free.length - 1; i >= 0 && bestScore < top; i--) {
      const score = prefer(this.free[i]);
      if (score > bestScore) [best, bestScore] = [i, score];
    }
    return this.lend(this.free.splice(best, 1)[0]);
  }

  private lend(slot: Uint8Array | undefined): Uint8Array | undefined {
    if (slot !== undefined) this.lent.add(slot);
    return slot;
  }

  /** Returns a slot obtained from acquire(); pass the full slot, not a sub-view. */
  release(slot: Uint8Array): void {
    // Loud rather than two writers filling one slot (their entries' bytes would be each other's).
    if (!this.lent.has(slot))
      throw new Error('SlotPool.release: a slot that is not lent out (released twice, a sub-view, or another pool’s)');
    if (this.waiters.length === 0) {
      this.lent.delete(slot);
      this.free.push(slot);
      return;
    }
    let chosen = 0;
    let bestScore = 0;
    this.waiters.forEach((w, i) => {
      const score = w.prefer?.(slot) ?? 0;
      if (score > bestScore) [chosen, bestScore] = [i, score];
    });
    this.waiters.splice(chosen, 1)[0]?.resolve(slot);
  }
}
