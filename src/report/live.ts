// The live view of a run, fed one snapshot a second by the engine (ProgressSnapshot with the second
// the timeline just saved). On a terminal: a small dashboard redrawn in place each second with the
// figures of the last second. Elsewhere (a log, a pipe): no escape codes, one plain line every 10 s
// with the figures of those 10 s, so logs stay readable. Renders only; measures nothing.
import type { ProgressSnapshot } from '../metrics/progress.js';
import type { RunTimeline, TimelineSample } from '../metrics/timeline.js';
import { foldTimelineSliver, isSliver } from './sliver.js';
import type { TierName } from '../tiers/backend.js';
import { GiB, MiB } from '../util/units.js';

/** Where the view writes (process.stderr; tests pass a fake). */
export interface LiveStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

const ESC = '\u001b[';
/** The timeline's step: a second shorter than half of it is a sliver (sliver.ts). */
const STEP_SEC: RunTimeline['interval_sec'] = 1;
/** Seconds between two plain lines when the stream is not a terminal. */
export const PLAIN_EVERY_SEC = 10;

const mibPerSec = (bytes: number, sec: number): string => (sec > 0 ? (bytes / sec / MiB).toFixed(1) : '0.0');
const ms = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : `${v.toFixed(2)} ms`);
const pctOf = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(1)} %`);

/** The clock line: elapsed and remaining of the nominal duration. */
function clock(p: ProgressSnapshot): string {
  const left = Math.max(0, p.durationSec - p.elapsedSec);
  return `${p.elapsedSec.toFixed(0).padStart(4)} s / ${p.durationSec} s, ${left.toFixed(0)} s left`;
}

/** Each tier's fill: resident bytes ÷ limit, or the bytes alone when the tier has no finite limit. */
function fill(p: ProgressSnapshot): string {
  const l = p.latest;
  if (l === undefined) return 'n/a';
  const parts: string[] = [];
  for (const [tier, t] of Object.entries(l.second.tiers) as Array<[TierName, { occupancy_bytes: number }]>) {
    const limit = l.tierLimitBytes[tier];
    const gib = (t.occupancy_bytes / GiB).toFixed(2);
    parts.push(
      limit !== undefined && Number.isFinite(limit) && limit > 0
        ? `${tier} ${((t.occupancy_bytes / limit) * 100).toFixed(0)} % (${gib} GiB)`
        : `${tier} ${gib} GiB`,
    );
  }
  return parts.length > 0 ? parts.join('  ') : 'n/a';
}

function device(p: ProgressSnapshot): string {
  const d = p.latest?.device;
  return d === undefined ? 'n/a' : `${d.utilization_pct.toFixed(0)} % busy, queue depth ${d.avg_queue_depth.toFixed(1)}`;
}

/** The dashboard's lines for one snapshot (the last second's figures). */
export function dashboardLines(p: ProgressSnapshot): string[] {
  const s = p.latest?.second;
  const sec = s?.duration_sec ?? 0;
  const st = s?.tiers.storage;
  return [
    `kv-cache [${clock(p)}]  users ${s?.users ?? 0}  requests ${p.requestsCompleted}`,
    `  last second: storage read ${mibPerSec(st?.read_bytes ?? 0, sec)} MiB/s  write ${mibPerSec(st?.write_bytes ?? 0, sec)} MiB/s  read p95 ${ms(s?.storage_read_latency_ms.p95)}`,
    `               ${sec > 0 ? ((s?.requests_completed ?? 0) / sec).toFixed(1) : '0.0'} requests/s  hit rate ${pctOf(s?.hit_rate ?? null)}  in flight ${s?.in_flight_ops ?? 0}`,
    `  cache fill:  ${fill(p)}`,
    `  device:      ${device(p)}`,
  ];
}

/** Figures summed over the seconds since the last plain line. */
interface Span {
  sec: number;
  readBytes: number;
  writeBytes: number;
  requests: number;
}

const emptySpan = (): Span => ({ sec: 0, readBytes: 0, writeBytes: 0, requests: 0 });

/** The plain line: the span's bandwidth and request rate, the last second's p95 and state. */
export function plainLine(p: ProgressSnapshot, span: Readonly<Span>): string {
  const s = p.latest?.second;
  return (
    `[${clock(p)}] last ${span.sec.toFixed(0)} s: storage read ${mibPerSec(span.readBytes, span.sec)} MiB/s, write ${mibPerSec(span.writeBytes, span.sec)} MiB/s, ` +
    `${span.sec > 0 ? (span.requests / span.sec).toFixed(1) : '0.0'} requests/s; last second: read p95 ${ms(s?.storage_read_latency_ms.p95)}, ` +
    `hit rate ${pctOf(s?.hit_rate ?? null)}, in flight ${s?.in_flight_ops ?? 0}; fill ${fill(p)}; device ${device(p)}`
  );
}

/**
 * The snapshot the dashboard shows: a sliver second (a tick just after the previous one, or the cut at
 * a stop) folded into the whole second before it, so that "last second" is never a rate over a few ms.
 */
export function dashboardSnapshot(p: ProgressSnapshot, previous: TimelineSample | undefined): ProgressSnapshot {
  const l = p.latest;
  if (l === undefined || previous === undefined || !isSliver(l.second.duration_sec, STEP_SEC)) return p;
  return { ...p, latest: { ...l, second: foldTimelineSliver(previous, l.second) } };
}

export class LiveView {
  private drawnLines = 0;
  /** The last second shown (a sliver folded in), for a sliver to fold into. */
  private lastWhole: TimelineSample | undefined;
  private span = emptySpan();
  private plainSlot = 0;

  constructor(private readonly out: LiveStream) {}

  /** Shows one snapshot: redraws the dashboard (terminal) or adds to the span and prints every 10 s. */
  update(p: ProgressSnapshot): void {
    const shown = dashboardSnapshot(p, this.lastWhole);
    if (this.out.isTTY === true) this.redraw(dashboardLines(shown));
    else this.plain(p);
    // A folded sliver becomes the second the next sliver, if any, folds into.
    this.lastWhole = shown.latest?.second ?? this.lastWhole;
  }

  /** Leaves the terminal below the last frame (nothing to do for a log). */
  finish(): void {
    this.drawnLines = 0;
  }

  private redraw(lines: readonly string[]): void {
    // Back to the first line of the previous frame, each line cleared before it is written, then
    // whatever a longer previous frame left below cleared too.
    const up = this.drawnLines > 0 ? `${ESC}${this.drawnLines}F` : '';
    this.out.write(`${up}${lines.map((l) => `${ESC}2K${l}\n`).join('')}${ESC}J`);
    this.drawnLines = lines.length;
  }

  private plain(p: ProgressSnapshot): void {
    const s = p.latest?.second;
    if (s !== undefined) {
      this.span.sec += s.duration_sec;
      this.span.readBytes += s.tiers.storage?.read_bytes ?? 0;
      this.span.writeBytes += s.tiers.storage?.write_bytes ?? 0;
      this.span.requests += s.requests_completed;
    }
    const slot = Math.floor(p.elapsedSec / PLAIN_EVERY_SEC);
    if (slot <= this.plainSlot) return;
    this.plainSlot = slot;
    this.out.write(`${plainLine(p, this.span)}\n`);
    this.span = emptySpan();
  }
}
