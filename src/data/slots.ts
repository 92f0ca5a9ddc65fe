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
  private readonly waiters: Array<(slot: Uint8Array) => void> = [];

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

  /** A free slot (one `prefer` accepts, if any is free), waiting for one to be released if none is free. */
  acquire(prefer?: (slot: Uint8Array) => boolean): Promise<Uint8Array> {
    const slot = this.tryAcquire(prefer);
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** A free slot, one `prefer` accepts if there is one, else any; undefined if none is free. */
  tryAcquire(prefer?: (slot: Uint8Array) => boolean): Uint8Array | undefined {
    if (prefer !== undefined) {
      for (let i = this.free.length - 1; i >= 0; i--) {
        const slot = this.free[i];
        if (slot !== undefined && prefer(slot)) {
          this.free.splice(i, 1);
          return slot;
        }
      }
    }
    return this.free.pop();
  }

  /** Returns a slot obtained from acquire(); pass the full slot, not a sub-view. */
  release(slot: Uint8Array): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) waiter(slot);
    else this.free.push(slot);
  }
}
