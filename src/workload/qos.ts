// QoS classes (docs/reference-compat.md#rc-25): three levels with a scheduling priority and latency targets, and the
// assignment of a level from one uniform draw. Synthetic users draw once; replay sources per request.
import type { Rng } from '../util/rng.js';
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import type { QosDistribution, QosProfile } from '../settings/config-keys.js';
import { QOS_LEVELS } from '../settings/choices.js';
import type { QosLevel } from '../settings/choices.js';

/** The level for a uniform draw u ∈ [0, 1): interactive below 0.15, responsive below 0.50, else batch. */
export function qosForDraw(u: number, dist: QosDistribution = DEFAULT_SETTINGS.qosDistribution): QosLevel {
  if (u < dist.interactiveProbability) return 'interactive';
  if (u < dist.responsiveThreshold) return 'responsive';
  return 'batch';
}

/** Draw a level from `rng` (one uniform draw). */
export function drawQos(rng: Rng, dist: QosDistribution = DEFAULT_SETTINGS.qosDistribution): QosLevel {
  return qosForDraw(rng.random(), dist);
}

export function qosPriority(level: QosLevel, profiles: Readonly<Record<QosLevel, QosProfile>> = DEFAULT_SETTINGS.qosProfiles): number {
  return profiles[level].priority;
}

export function isQosLevel(s: string): s is QosLevel {
  return (QOS_LEVELS as readonly string[]).includes(s);
}
