// The report's section for `kv-cache replay` results: what was replayed, the storage latency
// percentiles and the device counters, one column per replay. A replay saves totals and percentiles
// only (no per-second series, no histograms, no requests, tokens or verdict): the section says so
// rather than drawing charts it has no data for.
import { GiB } from '../../../util/units.js';
import { enoughFor, MIN_SAMPLES } from '../../../metrics/sample-minimums.js';
import type { GatedPercentile } from '../../../metrics/sample-minimums.js';
import type { LoadedReplay } from '../inputs.js';
import { REPLAY_LATENCIES } from '../replay-input.js';
import type { ReportReplay } from '../replay-input.js';
import type { Section, TableSpec } from './section.js';

const fixed = (v: number | null | undefined, digits: number): string => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
const gib = (bytes: number): string => (bytes / GiB).toFixed(3);
const perSec = (bytes: number, r: ReportReplay): string => (r.elapsed_time > 0 ? (bytes / r.elapsed_time / GiB).toFixed(3) : 'n/a');

/** What each replay did, one row per fact. */
function replayRows(r: ReportReplay): Array<[string, string]> {
  const c = r.replay;
  const k = r.kvcache_bench;
  const dev = k.device_io;
  return [
    ['trace', c.trace],
    ['trace rows read', String(c.rows)],
    ['writes / reads / deletes', `${c.writes} / ${c.reads} / ${c.deletes}`],
    ['written / read (GiB)', `${gib(c.write_bytes)} / ${gib(c.read_bytes)}`],
    ['write / read (GiB/s over the measured window)', `${perSec(c.write_bytes, r)} / ${perSec(c.read_bytes, r)}`],
    ['rows of other tiers skipped', String(c.skipped_other_tier_rows)],
    ['reads or deletes of keys never written', String(c.missing_keys)],
    ['operations in flight', String(c.concurrency)],
    ['paced by the trace timestamps', c.paced ? 'yes' : 'no'],
    ['all tiers replayed to storage', c.all_tiers ? 'yes' : 'no'],
    ['stop reason', k.stop_reason],
    ['operations cut short by the stop', String(k.operations_aborted_at_stop)],
    ['--duration (s)', k.duration_limit_sec === null ? 'until the end of the trace' : String(k.duration_limit_sec)],
    ['measured window (s)', r.elapsed_time.toFixed(3)],
    ['storage', `${k.storage_dir} (${k.storage_io_mode} I/O on ${k.storage_file_system})`],
    [
      'device read / written (GiB)',
      dev === null ? 'n/a (block device not resolvable)' : `${dev.device}: ${gib(dev.read_bytes)} / ${gib(dev.written_bytes)}`,
    ],
    [
      'machine',
      `${k.machine.cpu_model}, ${k.machine.cpu_count} CPUs, ${(k.machine.total_memory_bytes / GiB).toFixed(1)} GiB, Linux ${k.machine.kernel_release}`,
    ],
    ['kvcache-bench / schema', `${k.version} / ${k.schema_version}`],
  ];
}

/** The percentiles shown, each only from the samples it needs (metrics/sample-minimums.ts, as the console does). */
const SHOWN_PERCENTILES = Object.keys(MIN_SAMPLES) as GatedPercentile[];

const LATENCY_LABELS: Record<(typeof REPLAY_LATENCIES)[number], string> = {
  storage_read: 'read (total)',
  storage_read_device: 'read (device)',
  storage_read_host: 'read (host)',
  storage_write: 'write (total)',
  storage_write_device: 'write (device)',
  storage_write_host: 'write (host)',
};

/** `names(r)`: how a replay is named in a header (its "#n label" among all the report's files). */
export function replaySection(replays: readonly LoadedReplay[], names: (r: LoadedReplay) => string): Section {
  const perReplay = replays.map((r) => replayRows(r.replay));
  const facts: TableSpec = {
    id: 'replay',
    title: 'What was replayed',
    header: ['', ...replays.map(names)],
    rows: (perReplay[0] ?? []).map(([label], i) => [label, ...perReplay.map((rows) => rows[i]?.[1] ?? '')]),
  };
  const several = replays.length > 1;
  const latency: TableSpec = {
    id: 'replay-latency',
    title: 'Storage latency per entry operation (ms, summary.cache_stats; n/a: too few samples for the percentile)',
    header: [...(several ? ['replay'] : []), 'operation', 'samples', ...SHOWN_PERCENTILES],
    rows: replays.flatMap((r) =>
      REPLAY_LATENCIES.map((n) => {
        // Each replayed read or write is one sample of its operation's latency (and of its device and host parts).
        const samples = n.startsWith('storage_read') ? r.replay.replay.reads : r.replay.replay.writes;
        return [
          ...(several ? [names(r)] : []),
          LATENCY_LABELS[n],
          String(samples),
          ...SHOWN_PERCENTILES.map((p) => (enoughFor(p, samples) ? fixed(r.replay.summary.cache_stats[`${n}_${p}_ms`], 3) : 'n/a')),
        ];
      }),
    ),
  };
  return {
    id: 'replay',
    title: 'Replay of an I/O trace',
    charts: [],
    tables: replays.length === 0 ? [] : [facts, latency],
    notes: [
      'A replay saves totals and latency percentiles only: no per-second series, no histograms, no requests or tokens, and no validity verdict (n/a above and in the headline).',
    ],
  };
}
