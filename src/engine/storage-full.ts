// A full storage tier ends the measurement (stop_reason 'storage_full'): once the storage refuses
// writes for lack of space, every further write fails too and the figures would describe a device that
// is no longer taking data. This watch sees the cache's failures, notes the first one the storage
// backend calls "full" (its StorageFullness: ENOSPC/EDQUOT for files) with the space free at that
// moment, and tells the run, which stops.
import type { TierFailure } from '../cache/tiered-cache.js';
import type { StorageFullness } from '../tiers/storage-kind.js';
import { GiB } from '../util/units.js';

interface Space {
  readonly freeBytes: number;
  readonly sizeBytes: number;
}

export class StorageFullWatch {
  private first: { readonly error: string; readonly space: Promise<Space | undefined> } | undefined;
  private listener: () => void = () => undefined;

  constructor(private readonly fullness: StorageFullness) {}

  /** The cache's failure hook: a "full" error class on the storage tier means full. */
  readonly onFailure = (f: TierFailure): void => {
    if (f.tier !== 'storage' || !this.fullness.isFullError(f.error) || this.first !== undefined) return;
    const space = this.fullness.space().catch(() => undefined);
    this.first = { error: f.error, space };
    this.listener();
  };

  /** `listener` runs when the storage tier is found full (at once if it already was). */
  listen(listener: () => void): void {
    this.listener = listener;
    if (this.first !== undefined) listener();
  }

  get full(): boolean {
    return this.first !== undefined;
  }

  /** The warning for the results; undefined when the tier never filled. */
  async warning(): Promise<string | undefined> {
    if (this.first === undefined) return undefined;
    const space = await this.first.space;
    const gib = (n: number): string => `${(n / GiB).toFixed(3)} GiB`;
    const free = space === undefined ? 'free space unknown' : `${gib(space.freeBytes)} free of ${gib(space.sizeBytes)}`;
    return (
      `storage full: a write to ${this.fullness.where} failed with ${this.first.error}, ${free} at that moment; ` +
      'the measurement stopped there (stop_reason storage_full). Give --storage-capacity-gb below the free space, or use a larger file system'
    );
  }
}
