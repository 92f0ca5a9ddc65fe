// bench:layouts' figures of one run, read from its results file, and their medians over rounds.
// Read field by field (bench/lib/json.ts), never through the results schema: `metadata_ops` is newer
// than some builds this may run against, and a missing figure prints as n/a instead of failing.
import { LatencyHistogram } from '../../../src/metrics/latency.js';
import { messageOf } from '../../../src/util/errors.js';
import { GiB } from '../../../src/util/units.js';
import { field, num, str } from '../json.js';
import { median } from '../rounds.js';

/** Block operations per CPU-second the RAM device must reach (issue 34 item 7). */
export const OPS_PER_CORE_GOAL = 30_000;
/** Device bytes ÷ tool bytes must be within this of 1 (issue 34). */
export const BYTES_TOLERANCE = 0.05;

export interface RunFigures {
  readonly layout: string;
  readonly windowSec: number;
  readonly readBytesPerSec: number;
  readonly writeBytesPerSec: number;
  readonly cpuSec: number | undefined;
  readonly cpuPerGib: number | undefined;
  /** Block reads + writes of the storage tier in the measured window. */
  readonly blockOps: number;
  /** Metadata operations per GiB moved; undefined where the build has no `metadata_ops`. */
  readonly metadataPerGib: number | undefined;
  readonly readP95Ms: number | undefined;
  /** Device ÷ tool bytes per direction; undefined where the tool moved none. */
  readonly deviceReadRatio: number | undefined;
  readonly deviceWriteRatio: number | undefined;
  /** Slab pool bytes written before the window (in neither tool nor device bytes); 0 for the other layouts. */
  readonly layOutBytes: number;
  readonly layOutSec: number;
  /** `VALID`, or `NOT VALID` and the reasons' codes. */
  readonly validity: string;
}

const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;

/** The p95 of the storage reads' histogram; the summary's copy of it when the histogram cannot be decoded. */
function readP95(doc: unknown): number | undefined {
  const h = field(doc, 'kvcache_bench', 'latency_histograms', 'storage_read');
  const encoded = str(h, 'encoded');
  if ((num(h, 'count') ?? 0) === 0) return undefined;
  if (encoded !== undefined) {
    try {
      return LatencyHistogram.decode(encoded).percentileMs(95);
    } catch {
      // fall through to the summary's figure
    }
  }
  return num(doc, 'summary', 'cache_stats', 'storage_read_p95_ms');
}

/** Metadata operations per GiB moved, from `kvcache_bench.metadata_ops` when the build writes it. */
function metadataPerGib(doc: unknown): number | undefined {
  const m = field(doc, 'kvcache_bench', 'metadata_ops');
  const perGib = num(m, 'per_gib_moved');
  if (perGib !== undefined) return perGib;
  const total = num(m, 'total');
  const gib = num(doc, 'kvcache_bench', 'cpu_seconds', 'gib_moved');
  return total === undefined || gib === undefined || gib === 0 ? undefined : total / gib;
}

function validityOf(doc: unknown): string {
  const v = field(doc, 'kvcache_bench', 'validity');
  if (field(v, 'valid') === true) return 'VALID';
  const reasons = field(v, 'reasons');
  const codes = Array.isArray(reasons) ? reasons.map((r) => str(r, 'code') ?? '?') : [];
  return codes.length > 0 ? `NOT VALID ${codes.join(',')}` : 'NOT VALID';
}

/** The figures of one results document, or why it has none. */
export function figuresOf(doc: unknown): RunFigures | string {
  const kb = field(doc, 'kvcache_bench');
  const windowSec = num(kb, 'measured_window_sec');
  if (windowSec === undefined || windowSec <= 0) return 'no measured window in the results';
  const reads = num(kb, 'latency_histograms', 'storage_read', 'count') ?? 0;
  const writes = num(kb, 'latency_histograms', 'storage_write', 'count') ?? 0;
  let p95: number | undefined;
  try {
    p95 = readP95(doc);
  } catch (e) {
    return `storage read histogram: ${messageOf(e)}`;
  }
  return {
    layout: str(kb, 'storage_layout') ?? 'flat',
    windowSec,
    readBytesPerSec: num(kb, 'storage_bytes', 'read_bytes_per_sec') ?? 0,
    writeBytesPerSec: num(kb, 'storage_bytes', 'write_bytes_per_sec') ?? 0,
    cpuSec: num(kb, 'cpu_seconds', 'total'),
    cpuPerGib: num(kb, 'cpu_seconds', 'per_gib_moved'),
    blockOps: reads + writes,
    metadataPerGib: metadataPerGib(doc),
    readP95Ms: p95,
    deviceReadRatio: ratio(num(kb, 'device_io', 'read_bytes'), num(kb, 'storage_bytes', 'read_bytes')),
    deviceWriteRatio: ratio(num(kb, 'device_io', 'written_bytes'), num(kb, 'storage_bytes', 'written_bytes')),
    layOutBytes: num(kb, 'slab', 'lay_out_bytes') ?? 0,
    layOutSec: num(kb, 'slab', 'lay_out_sec') ?? 0,
    validity: validityOf(doc),
  };
}

/** Block operations per CPU-second of the whole process (per core busy), undefined without CPU figures. */
export const opsPerCpuSec = (f: RunFigures): number | undefined =>
  f.cpuSec === undefined || f.cpuSec === 0 ? undefined : f.blockOps / f.cpuSec;
export const opsPerWallSec = (f: RunFigures): number => f.blockOps / f.windowSec;

/** The median of the values present; undefined when none is. */
export function medianOf(values: ReadonlyArray<number | undefined>): number | undefined {
  const present = values.filter((v): v is number => v !== undefined);
  return present.length === 0 ? undefined : median(present);
}

/** Whether a device ÷ tool ratio is within the tolerance; a direction the tool did not use passes. */
export const bytesAgree = (r: number | undefined): boolean => r === undefined || Math.abs(r - 1) <= BYTES_TOLERANCE;

/** Median figures of one device × model × layout over its rounds. */
export interface MedianFigures {
  readonly rounds: number;
  readonly readBytesPerSec: number;
  readonly writeBytesPerSec: number;
  readonly cpuPerGib: number | undefined;
  readonly opsPerCpuSec: number | undefined;
  readonly opsPerWallSec: number;
  readonly metadataPerGib: number | undefined;
  readonly readP95Ms: number | undefined;
  readonly deviceReadRatio: number | undefined;
  readonly deviceWriteRatio: number | undefined;
  readonly layOutBytes: number;
  readonly validCount: number;
}

export function medians(runs: readonly RunFigures[]): MedianFigures {
  return {
    rounds: runs.length,
    readBytesPerSec: median(runs.map((r) => r.readBytesPerSec)),
    writeBytesPerSec: median(runs.map((r) => r.writeBytesPerSec)),
    cpuPerGib: medianOf(runs.map((r) => r.cpuPerGib)),
    opsPerCpuSec: medianOf(runs.map(opsPerCpuSec)),
    opsPerWallSec: median(runs.map(opsPerWallSec)),
    metadataPerGib: medianOf(runs.map((r) => r.metadataPerGib)),
    readP95Ms: medianOf(runs.map((r) => r.readP95Ms)),
    deviceReadRatio: medianOf(runs.map((r) => r.deviceReadRatio)),
    deviceWriteRatio: medianOf(runs.map((r) => r.deviceWriteRatio)),
    layOutBytes: median(runs.map((r) => r.layOutBytes)),
    validCount: runs.filter((r) => r.validity === 'VALID').length,
  };
}

/**
 * The goals a median row meets or misses: device bytes = tool bytes ±5 % on every row, and where
 * `opsGoal` (the small-block model on the RAM device, where the harness, not the disk, is the limit)
 * ≥ 30,000 block operations per CPU-second.
 */
export function verdictOf(m: MedianFigures, opsGoal: boolean): string {
  const bytes = bytesAgree(m.deviceReadRatio) && bytesAgree(m.deviceWriteRatio) ? 'bytes ✓' : 'bytes ✗';
  const ops = m.opsPerCpuSec === undefined ? 'ops/CPU-s ?' : m.opsPerCpuSec >= OPS_PER_CORE_GOAL ? 'ops/CPU-s ✓' : 'ops/CPU-s ✗';
  return [bytes, ...(opsGoal ? [ops] : []), `valid ${m.validCount}/${m.rounds}`].join(', ');
}

export const gibPerSec = (bytesPerSec: number): string => (bytesPerSec / GiB).toFixed(3);
