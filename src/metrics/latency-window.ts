// Interval latency histograms for one consumer (the autoscaler, the run timeline): each consumer opens
// its own window on the Recorder, so no consumer's take empties another's. A window holds two sets of
// histograms and swaps them at each take (the one handed out stays valid until the next take), so a
// long run reuses the same few histograms instead of allocating new ones every interval.
import type { TierName } from '../tiers/backend.js';
import { LatencyHistogram } from './latency.js';

/** Operations whose latency is recorded per tier (kept here so the window needs no Recorder import). */
export type WindowOp = 'write' | 'read' | 'demote_write' | 'demote_read';

/** Which tier operations a window collects, under which name (several operations may share a name). */
export type WindowSelection = Readonly<Record<string, ReadonlyArray<readonly [TierName, WindowOp]>>>;

export class LatencyWindow {
  /** Slot index per tier and operation; undefined: not collected. */
  private readonly slotOf: Record<TierName, Partial<Record<WindowOp, number>>> = { gpu: {}, cpu: {}, storage: {} };
  private readonly names: readonly string[];
  /** Two buffers of one histogram per name, created on first use and then only reset. */
  private readonly buffers: [Array<LatencyHistogram | undefined>, Array<LatencyHistogram | undefined>];
  private current = 0;
  private created = 0;

  constructor(selection: WindowSelection) {
    this.names = Object.keys(selection);
    this.names.forEach((name, slot) => {
      for (const [tier, op] of selection[name]) this.slotOf[tier][op] = slot;
    });
    this.buffers = [this.names.map(() => undefined), this.names.map(() => undefined)];
  }

  /** Records one operation's total latency if this window collects it (the Recorder's hot path). */
  record(tier: TierName, op: WindowOp, ms: number): void {
    const slot = this.slotOf[tier][op];
    if (slot === undefined) return;
    const buf = this.buffers[this.current];
    let h = buf[slot];
    if (h === undefined) {
      h = buf[slot] = new LatencyHistogram();
      this.created++;
    }
    h.recordMs(ms);
  }

  /**
   * The latencies recorded since the previous take (or since the window opened), by name, only those
   * with samples. The histograms stay valid until the next take, which reuses them.
   */
  take(): ReadonlyMap<string, LatencyHistogram> {
    const taken = this.buffers[this.current];
    this.current = 1 - this.current;
    for (const h of this.buffers[this.current]) h?.reset();
    const out = new Map<string, LatencyHistogram>();
    this.names.forEach((name, slot) => {
      const h = taken[slot];
      if (h !== undefined && h.count > 0) out.set(name, h);
    });
    return out;
  }

  /** Empties both buffers (the Recorder's reset after preparation). */
  reset(): void {
    for (const buf of this.buffers) for (const h of buf) h?.reset();
  }

  /** Histograms this window ever allocated: at most two per name, however long the run (tests check it). */
  get histogramsCreated(): number {
    return this.created;
  }
}
