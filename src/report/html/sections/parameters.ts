// The machine, the run and its effective flags, one column per run (and the flags that differ).
import { GiB } from '../../../util/units.js';
import type { LoadedRun, ReportRun } from '../run-input.js';
import type { Section, TableSpec } from './section.js';

/** A setting's value as table text: JSON for lists and objects, '—' for none. */
function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Key/value rows with one column per run. */
function keyValueTable(
  id: string,
  title: string,
  runs: readonly LoadedRun[],
  values: (doc: ReportRun) => Record<string, unknown>,
): TableSpec {
  const perRun = runs.map((r) => values(r.doc));
  const keys = [...new Set(perRun.flatMap((v) => Object.keys(v)))];
  return {
    id,
    title,
    header: [
      'setting',
      ...runs.map((r, i) => (runs.length > 1 || r.position !== undefined ? `#${(r.position ?? i) + 1} ${r.label}` : r.label)),
    ],
    rows: keys.map((k) => [k, ...perRun.map((v) => show(v[k]))]),
  };
}

/** The rows of a key/value table whose values differ between runs (what a comparison is about). */
function differingRows(t: TableSpec, id: string, title: string): TableSpec {
  return { ...t, id, title, rows: t.rows.filter((row) => new Set(row.slice(1)).size > 1) };
}

/** The payload generator's figures (absent in trace mode and in files before schema 2.3.0). */
function payloadRows(d: ReportRun): Record<string, string> {
  const p = d.kvcache_bench.payload_generation;
  if (p === undefined) return {};
  return {
    payload_write_wait_share: `${(p.write_wait_share * 100).toFixed(1)} % (verdict limit 10 %)`,
    payload_chunks_waited_for: String(p.chunks_waited_for),
    payload_stamped_gib: (p.stamped_bytes / GiB).toFixed(3),
    payload_copied_gib: (p.copied_bytes / GiB).toFixed(3),
    ...(p.filler !== undefined ? { payload_filler: p.filler } : {}), // schema 2.6.0
  };
}

/** The file tier's threadpool and staging figures (absent for other kinds and in files before schema 2.5.0). */
function fileIoRows(d: ReportRun): Record<string, string> {
  const io = d.kvcache_bench.file_io;
  if (io === undefined) return {};
  return {
    file_calls_max_in_flight: `${io.max_in_flight} (libuv threads: ${io.pool_threads})`,
    file_calls_queued_share: `${(io.queued_share * 100).toFixed(1)} % of the window (verdict limit 10 %)`,
    staging_wait_share: `${(io.staging_wait_share * 100).toFixed(1)} % of the storage I/O time (verdict limit 10 %)`,
  };
}

/** The harness's CPU over the window and the slab pool (absent in files before schema 2.7.0 and for other layouts). */
function harnessRows(d: ReportRun): Record<string, string> {
  const cpu = d.kvcache_bench.cpu_seconds;
  const slab = d.kvcache_bench.slab;
  return {
    ...(cpu !== undefined
      ? {
          cpu_seconds: `${cpu.total.toFixed(2)} (user ${cpu.user.toFixed(2)}, system ${cpu.system.toFixed(2)})`,
          cpu_seconds_per_gib:
            cpu.per_gib_moved === null ? 'nothing moved' : `${cpu.per_gib_moved.toFixed(3)} (${cpu.gib_moved.toFixed(2)} GiB moved)`,
        }
      : {}),
    ...(slab !== undefined
      ? {
          slab_pool: `${slab.files} file(s), ${slab.slots} slots of ${(slab.slot_bytes / 2 ** 20).toFixed(2)} MiB`,
          slab_lay_out: `${(slab.lay_out_bytes / GiB).toFixed(3)} GiB in ${slab.lay_out_sec.toFixed(1)} s, before the window`,
        }
      : {}),
  };
}

export function parametersSection(runs: readonly LoadedRun[]): Section {
  const machine = (d: ReportRun): Record<string, unknown> => {
    const m = d.kvcache_bench.machine;
    return {
      cpu_model: m.cpu_model,
      cpu_count: m.cpu_count,
      total_memory_gib: (m.total_memory_bytes / GiB).toFixed(1),
      kernel_release: m.kernel_release,
      node_version: m.node_version,
      io_buffers: m.io_buffers,
      file_calls: d.kvcache_bench.storage_file_calls,
      file_system: m.cache_dir?.file_system,
      block_device: m.cache_dir?.block_device,
      device_model: m.cache_dir?.device_model,
      kvcache_bench_version: d.kvcache_bench.version,
      schema_version: d.kvcache_bench.schema_version,
      started_at: d.kvcache_bench.started_at,
      stop_reason: d.kvcache_bench.stop_reason,
      measured_window_sec: d.kvcache_bench.measured_window_sec.toFixed(3),
      seed: d.seed,
      // Where the harness's time went (issue 24): the share of write time spent waiting for payload bytes.
      ...payloadRows(d),
      ...fileIoRows(d),
      ...harnessRows(d),
    };
  };
  const flags = keyValueTable(
    'effective-config',
    'Effective flags (kvcache_bench.effective_config.args)',
    runs,
    (d) => d.kvcache_bench.effective_config.args,
  );
  const differing = runs.length > 1 ? [differingRows(flags, 'differing-flags', 'Flags that differ between the runs')] : [];
  return {
    id: 'parameters',
    title: 'Run parameters and machine',
    charts: [],
    tables: [keyValueTable('machine', 'Machine and run', runs, machine), ...differing, { ...flags, collapsed: true }],
    notes: [],
  };
}
