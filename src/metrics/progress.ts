// What the measured phase hands the live view once a second: plain data, declared here (below the
// engine that produces it and the report that draws it) so the report never imports the engine.
import type { DevicePoint } from './device-series.js';
import type { TimelineSample } from './timeline.js';
import type { TierName } from '../tiers/backend.js';

/** What one tick of the per-second series hands on: the second just sampled and the device's, if any. */
export interface SeriesTick {
  readonly second: TimelineSample;
  readonly device: DevicePoint | undefined;
  readonly tierLimitBytes: Partial<Record<TierName, number>>;
}

export interface ProgressSnapshot {
  readonly elapsedSec: number;
  readonly durationSec: number;
  readonly requestsCompleted: number;
  /** The per-second series' latest tick (the live view's windowed figures); absent before the first. */
  readonly latest?: SeriesTick;
}
