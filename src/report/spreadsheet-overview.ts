// The Overview sheet of the per-run workbook: the headline figures and the validity verdict, one per
// row (Figure | Value | Unit), so a person reads the run without scrolling through 108 columns. Values
// are rounded like the metric columns (rounding.ts); bandwidths in GiB/s (2^30 bytes/s).
import type { Cell } from './spreadsheet-cell.js';
import { roundFor } from './rounding.js';
import type { ValueKind } from './rounding.js';
import type { ResultsDocument } from './results-schema.js';
import { verdictText } from './console.js';
import { GiB } from '../util/units.js';

export interface OverviewRow {
  readonly figure: string;
  readonly value: Cell;
  readonly unit: string;
  /** Numbers only: decides the rounding (already applied) and the cell's format. */
  readonly kind?: ValueKind;
}

/** `VALID` or `NOT VALID: <codes>`, as the console's last line. */
export function validityVerdict(doc: ResultsDocument): string {
  return verdictText(doc.kvcache_bench.validity);
}

/** The file system, device and device model under the cache dir, as one text ("none" in trace mode). */
export function storageUnderTest(doc: ResultsDocument): { fileSystem: string; device: string } {
  const dir = doc.kvcache_bench.machine.cache_dir;
  if (dir === null) return { fileSystem: doc.kvcache_bench.storage_file_system, device: 'none (trace mode)' };
  const device =
    dir.block_device === null ? 'not resolvable' : `${dir.block_device}${dir.device_model !== null ? ` (${dir.device_model})` : ''}`;
  return { fileSystem: dir.file_system, device };
}

export function overviewRows(doc: ResultsDocument): OverviewRow[] {
  const s = doc.summary;
  const cs = s.cache_stats;
  const k = doc.kvcache_bench;
  const sb = k.storage_bytes;
  const where = storageUnderTest(doc);
  const n = (figure: string, value: number | null | undefined, unit: string, kind: ValueKind): OverviewRow => ({
    figure,
    value: value === null || value === undefined || !Number.isFinite(value) ? null : roundFor(kind, value),
    unit,
    kind,
  });
  const t = (figure: string, value: string): OverviewRow => ({ figure, value, unit: '' });
  const warnings = k.validity.warnings.map((w) => w.code);
  return [
    t('Validity', validityVerdict(doc)),
    ...(warnings.length > 0 ? [t('Validity warnings', warnings.join(', '))] : []),
    t('Stop reason', k.stop_reason),
    t('Model', k.model),
    n(
      'Users (at start)',
      typeof k.effective_config.args.num_users === 'number' ? k.effective_config.args.num_users : null,
      'users',
      'count',
    ),
    t('I/O mode', k.storage_io_mode),
    t('File system', where.fileSystem),
    t('Device', where.device),
    n('Measured window', k.measured_window_sec, 's', 'seconds'),
    n('Storage read bandwidth', sb.read_bytes_per_sec / GiB, 'GiB/s', 'gibps'),
    n('Storage write bandwidth', sb.write_bytes_per_sec / GiB, 'GiB/s', 'gibps'),
    n('Storage read device p95', cs.storage_read_device_p95_ms, 'ms', 'latency_ms'),
    n('Storage write device p95', cs.storage_write_device_p95_ms, 'ms', 'latency_ms'),
    n('End-to-end p95', s.end_to_end_latency_ms.p95, 'ms', 'latency_ms'),
    n('Requests completed', s.total_requests, 'requests', 'count'),
    n('Requests per second', s.requests_per_second, 'requests/s', 'rate'),
    n('Wall-clock throughput', s.avg_throughput_tokens_per_sec, 'tokens/s', 'rate'),
    n('Storage throughput (reference formula: tokens ÷ summed I/O time)', s.storage_throughput_tokens_per_sec, 'tokens/s', 'rate'),
    n('Cache hit rate', cs.cache_hit_rate, 'fraction', 'ratio'),
    n('Storage read (tool)', sb.read_bytes / GiB, 'GiB', 'gib'),
    n('Storage written (tool)', sb.written_bytes / GiB, 'GiB', 'gib'),
    n('Device read (kernel, whole device)', k.device_io === null ? null : k.device_io.read_bytes / GiB, 'GiB', 'gib'),
    n('Device written (kernel, whole device)', k.device_io === null ? null : k.device_io.written_bytes / GiB, 'GiB', 'gib'),
    t('Tool version', k.version),
    t('Schema version', k.schema_version),
  ];
}
