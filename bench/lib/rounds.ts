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
