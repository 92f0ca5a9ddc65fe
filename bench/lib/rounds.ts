// Repeated rounds of a comparison: alternating which side goes first, and the median over rounds.

/** The steps of round `round` (1-based): as given in odd rounds, reversed in even ones, so drift favours neither side. */
export function inRoundOrder<T>(round: number, steps: readonly T[]): readonly T[] {
  return round % 2 === 1 ? steps : [...steps].reverse();
}

/** The median (the mean of the two middle values for an even count); 0 for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** One program run of a comparison: its group (e.g. a rank count), round (0 = a warm-up pass, not measured) and side. */
export interface ScheduledRun<G, S> {
  readonly group: G;
  readonly round: number;
  readonly side: S;
  readonly measured: boolean;
}

/**
 * Every run of a comparison in order: per group, `warmUps` unmeasured passes of every side first (a
 * freshly made device, or a group that loads it differently, runs slow at first: round 1 on a new RAM
 * device was slow for both programs), then `rounds` measured rounds alternating which side goes first.
 */
export function comparisonSchedule<G, S>(
  groups: readonly G[],
  sides: readonly S[],
  rounds: number,
  warmUps: number,
): ReadonlyArray<ScheduledRun<G, S>> {
  return groups.flatMap((group) => [
    ...Array.from({ length: warmUps }, () => sides.map((side) => ({ group, round: 0, side, measured: false }))).flat(),
    ...Array.from({ length: rounds }, (_, i) =>
      inRoundOrder(i + 1, sides).map((side) => ({ group, round: i + 1, side, measured: true })),
    ).flat(),
  ]);
}
