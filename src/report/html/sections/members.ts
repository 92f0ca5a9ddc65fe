// The pieces every chart section is made of: a Member is one line of a chart read from a run; the
// timeline and device series as the charts read them (rates with a sliver last interval folded, see
// ../../sliver.ts); tier names; the "not recorded" note.
import { seriesStyle } from '../chart-spec.js';
import type { RawSeries } from '../chart-spec.js';
import type { LoadedRun, ReportRun } from '../run-input.js';
import type { DevicePoint, TimelinePoint } from '../timeline-contract.js';
import { foldDeviceSliver, foldLastSliver, foldTimelineSliver } from '../../sliver.js';

export const TIERS = ['gpu', 'cpu', 'storage'] as const;
export type Tier = (typeof TIERS)[number];
export const TIER_NAMES: Record<Tier, string> = { gpu: 'GPU tier', cpu: 'CPU tier', storage: 'Storage tier' };

/** One line of a chart before the runs are multiplied in: its label and how to read it from a run. */
export interface Member {
  readonly label: string;
  readonly pick: (doc: ReportRun) => { x: readonly number[]; y: ReadonlyArray<number | null> } | undefined;
}

/** Every run × member as a styled series; with several runs the legend says "#2 read" (the run list above the charts gives #2's colour and name). */
export function seriesOf(runs: readonly LoadedRun[], members: readonly Member[]): RawSeries[] {
  return runs.flatMap((run, index) =>
    members.flatMap((m, i) => {
      const xy = m.pick(run.doc);
      if (xy === undefined) return [];
      // Numbered and coloured by its place among all the report's files (replays and summaries included).
      const r = run.position ?? index;
      const several = runs.length > 1 || run.position !== undefined;
      const label = several ? `#${r + 1} ${m.label}` : m.label;
      return [{ spec: { label, run: r, ...seriesStyle(r, i, several ? Math.max(2, runs.length) : 1) }, ...xy }];
    }),
  );
}

export const points = (doc: ReportRun): readonly TimelinePoint[] | undefined => {
  const p = doc.kvcache_bench.timeline?.points;
  return p === undefined || p.length === 0 ? undefined : p;
};
/** The timeline as its rates are drawn: a sliver at the end folded into the second before it (../sliver.ts). */
export const ratePoints = (doc: ReportRun): readonly TimelinePoint[] | undefined => {
  const p = points(doc);
  const step = doc.kvcache_bench.timeline?.interval_sec;
  return p === undefined || step === undefined ? p : foldLastSliver(p, step, foldTimelineSliver);
};
/** The device series, every field a rate or an average over its interval: a sliver at the end folded likewise. */
export const devicePoints = (doc: ReportRun): readonly DevicePoint[] | undefined => {
  const t = doc.kvcache_bench.device_telemetry;
  const p = t?.points;
  return t === undefined || t === null || p === undefined || p.length === 0
    ? undefined
    : foldLastSliver(p, t.interval_sec, foldDeviceSliver);
};

/** A member reading one value per timeline second (`from`: the points as they are, or with a last sliver folded for rates). */
export const perSecond = (label: string, y: (p: TimelinePoint) => number | null, from = points): Member => ({
  label,
  pick: (doc) => {
    const p = from(doc);
    return p === undefined ? undefined : { x: p.map((q) => q.t_sec), y: p.map(y) };
  },
});
/** A member drawing a rate per timeline second. */
export const perSecondRate = (label: string, y: (p: TimelinePoint) => number | null): Member => perSecond(label, y, ratePoints);
export const perDeviceSecond = (label: string, y: (p: DevicePoint) => number | null): Member => ({
  label,
  pick: (doc) => {
    const p = devicePoints(doc);
    return p === undefined ? undefined : { x: p.map((q) => q.t_sec), y: p.map(y) };
  },
});
/** Per-second rate of an interval count: count ÷ the interval's real length (the last may be short, down to half a step). */
export const rate = (n: number, p: { duration_sec: number }): number | null => (p.duration_sec > 0 ? n / p.duration_sec : null);

/** Tiers that appear in any run's timeline. */
/** Whether a tier ever moved or held a byte in a run's series (a tier of 0 GiB, storage-only runs' CPU tier, never does). */
function tierActive(r: LoadedRun, t: Tier): boolean {
  return (
    points(r.doc)?.some((p) => {
      const s = p.tiers[t];
      return s !== undefined && s.read_ops + s.write_ops + s.occupancy_bytes + s.evictions > 0;
    }) ?? false
  );
}

/** The tiers charted over time: those some run used (one that no run used draws only zeros). */
export function timelineTiers(runs: readonly LoadedRun[]): Tier[] {
  return TIERS.filter((t) => runs.some((r) => tierActive(r, t)));
}

/** A note naming the tiers in the series that no run used, so their missing charts are explained. */
export function idleTiersNote(runs: readonly LoadedRun[]): string[] {
  const idle = TIERS.filter(
    (t) => runs.some((r) => points(r.doc)?.some((p) => p.tiers[t] !== undefined)) && !runs.some((r) => tierActive(r, t)),
  );
  return idle.length === 0
    ? []
    : [`Not charted: ${idle.map((t) => TIER_NAMES[t]).join(', ')}, which no run read, wrote or filled (0 GiB, or never reached).`];
}

export function tierMember(
  tier: Tier,
  label: string,
  y: (t: NonNullable<TimelinePoint['tiers'][Tier]>, p: TimelinePoint) => number | null,
  from = points,
): Member {
  return perSecond(
    label,
    (p) => {
      const t = p.tiers[tier];
      return t === undefined ? null : y(t, p);
    },
    from,
  );
}
export const tierRate = (
  tier: Tier,
  label: string,
  y: (t: NonNullable<TimelinePoint['tiers'][Tier]>, p: TimelinePoint) => number | null,
): Member => tierMember(tier, label, y, ratePoints);

/** "Per-second timeline: not recorded in a.json, b.json" — or nothing when every run has it. */
export function missingNote(what: string, runs: readonly LoadedRun[], has: (doc: ReportRun) => boolean): string[] {
  const without = runs.filter((r) => !has(r.doc));
  if (without.length === 0) return [];
  const where = runs.length === 1 ? 'this file' : without.map((r) => r.label).join(', ');
  return [`${what}: not recorded in ${where}.`];
}

export const compact = <T>(xs: ReadonlyArray<T | undefined>): T[] => xs.filter((x): x is T => x !== undefined);
