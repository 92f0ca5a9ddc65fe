// The DEVICE TELEMETRY section of the console summary: the cache dir's block device as sampled every
// second (kvcache_bench.device_telemetry), summarised as the whole series and its busiest second.
import { GiB, MiB } from '../util/units.js';
import type { DeviceTelemetryJson, KvcacheBench } from './results-schema.js';

const fixed = (v: number, digits: number): string => v.toFixed(digits);
const msOrNa = (v: number | null): string => (v === null ? 'n/a' : `${fixed(v, 2)} ms`);
const kibOrNa = (bytes: number | null): string => (bytes === null ? 'n/a' : `${fixed(bytes / 1024, 0)} KiB`);

/** Lines of the section (title included); empty for a results file without the field (older versions). */
export function deviceTelemetryLines(add: Pick<KvcacheBench, 'device_telemetry' | 'storage_io_mode'>): string[] {
  const t = add.device_telemetry;
  if (t === undefined) return [];
  const lines = ['', '### DEVICE TELEMETRY (per-second /sys/block/<dev>/stat, whole device) ###'];
  if (t === null) {
    lines.push(
      add.storage_io_mode.startsWith('none')
        ? '  none: trace mode has no device'
        : "  not available: the cache dir's block device could not be resolved or read (see the warnings)",
    );
    return lines;
  }
  return [...lines, ...seriesLines(t)];
}

function seriesLines(t: DeviceTelemetryJson): string[] {
  const s = t.summary;
  const spanSec = t.points.length > 0 ? t.points[t.points.length - 1].t_sec : 0;
  const perSec = (bytes: number): string => (spanSec > 0 ? fixed(bytes / spanSec / MiB, 1) : '0.0');
  const head = `  ${t.device} (${t.source}), ${t.points.length} samples over ${fixed(spanSec, 1)} s`;
  if (t.points.length === 0) return [head, '  no full second was sampled'];
  // The busiest second among whole seconds: the last, shorter point would turn a few requests into a rate.
  const whole = t.points.filter((p) => p.duration_sec >= 0.5);
  const seconds = whole.length > 0 ? whole : t.points;
  const maxOf = (pick: (p: DeviceTelemetryJson['points'][number]) => number): number => Math.max(...seconds.map(pick));
  return [
    head,
    `  read ${fixed(s.read_bytes / GiB, 3)} GiB (${perSec(s.read_bytes)} MiB/s) in ${s.read_ops} requests: await ${msOrNa(s.read_await_ms)}, ${kibOrNa(s.read_ops > 0 ? s.read_bytes / s.read_ops : null)} per request`,
    `  written ${fixed(s.write_bytes / GiB, 3)} GiB (${perSec(s.write_bytes)} MiB/s) in ${s.write_ops} requests: await ${msOrNa(s.write_await_ms)}, ${kibOrNa(s.write_ops > 0 ? s.write_bytes / s.write_ops : null)} per request`,
    `  utilisation ${fixed(s.mean_utilization_pct, 1)} % (busiest second ${fixed(
      maxOf((p) => p.utilization_pct),
      1,
    )} %)   queue depth ${fixed(s.mean_queue_depth, 2)} (busiest second ${fixed(
      maxOf((p) => p.avg_queue_depth),
      2,
    )})   in flight max ${s.max_in_flight}`,
    `  busiest second: read ${fixed(maxOf((p) => p.read_bytes_per_sec) / MiB, 1)} MiB/s, write ${fixed(maxOf((p) => p.write_bytes_per_sec) / MiB, 1)} MiB/s`,
  ];
}
