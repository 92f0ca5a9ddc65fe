// The force-quit steps commands share (SignalGuard.atForceQuit): remove the entry files of every
// storage the command opened, and word what was removed and what was left.
import { FORCE_CLEANUP_BUDGET_MS, removeEntryFilesSync } from '../engine/entry-cleanup.js';
import type { EntryCleanup, EntryFilesAt, SyncEntryFs } from '../engine/entry-cleanup.js';
import type { Clock } from '../util/clock.js';
import { monotonicClock } from '../util/clock.js';
import { inert } from '../util/safe-text.js';
import type { ForceQuitStep } from './signals.js';

/** Left files named in the message; the rest are counted. */
const NAMED_LEFT = 3;

/** Words one directory's clean-up for the user. */
export function cleanupLines(c: EntryCleanup): string[] {
  const lines = [`removed ${c.removed} entry file(s) of this run from ${c.dir}`];
  if (c.left.length > 0) {
    const named = c.left.slice(0, NAMED_LEFT).join(', ');
    const more = c.left.length > NAMED_LEFT ? ` and ${c.left.length - NAMED_LEFT} more` : '';
    lines.push(
      `left ${c.left.length} entry file(s) (${c.why ?? 'still being written'}): ${named}${more}; remove them by hand, or give the next run in ${c.dir} --remove-stale-entries`,
    );
  }
  return lines;
}

/** The storages a command opened (the engine tells it through `onEntryFiles`), for a force-quit to clean. */
export class EntryFileTracker {
  private readonly places: EntryFilesAt[] = [];
  private readonly objectPlaces: string[] = [];

  constructor(
    private readonly clock: Clock = monotonicClock,
    private readonly budgetMs = FORCE_CLEANUP_BUDGET_MS,
    private readonly fs?: SyncEntryFs,
  ) {}

  /** Hand this to the engine: called once a storage tier exists, before it writes anything. */
  readonly opened = (at: EntryFilesAt): void => void this.places.push(at);

  /** Hand this to the engine too: where a run's objects go in an object store (named at a force-quit, not deleted). */
  readonly objects = (where: string): void => void this.objectPlaces.push(where);

  /** Removes every opened storage's entry files within one shared budget; returns the lines to say. */
  readonly removeAll: ForceQuitStep = () => {
    // DELETEs over HTTP cannot be waited for here: the objects are named, for the next run to remove.
    const objects = this.objectPlaces.map((where) =>
      inert(`a force-quit cannot wait for DELETEs: this run's objects may be left in ${where}`),
    );
    if (this.places.length === 0) return objects.length > 0 ? objects : ['no entry files had been written yet'];
    const deadline = this.clock.now() + this.budgetMs;
    const done = this.places.map((at) => removeEntryFilesSync(at, this.clock, Math.max(0, deadline - this.clock.now()), this.fs));
    // Storages already torn down (earlier trials) have nothing left: not worth a line each.
    const lines = done.filter((c) => c.removed > 0 || c.left.length > 0).flatMap(cleanupLines);
    return [...(lines.length > 0 ? lines : ['no entry files of this run were left to remove']), ...objects];
  };
}
