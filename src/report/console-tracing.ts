// The DEVICE LATENCY section: the block-layer and syscall histograms of --enable-latency-tracing (and
// of `kv-cache trace`), each with its samples and interpolated p50/p95/p99, or the reason it is empty;
// the filters in force; the LBA hot zone; the distilled fio job in brief.
import { GiB } from '../util/units.js';
import type { DeviceLatencyTracingJson, LatencyTracingJson, TracedHistogramJson } from './tracing-schema.js';

const UNIT: Readonly<Record<TracedHistogramJson['unit'], string>> = { us: 'µs', KiB: 'KiB', requests: 'reqs', GiB: 'GiB' };
const num = (v: number | null): string => (v === null ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** First..last bucket holding more than 1 % of the samples and their share (the reference's hot zone). */
export function hotZone(h: TracedHistogramJson): string | undefined {
  if (h.count === 0) return undefined;
  const hot = h.buckets.filter((b) => b.count * 100 > h.count);
  const first = hot[0];
  const last = hot[hot.length - 1];
  if (first === undefined || last === undefined) return undefined;
  const share = hot.reduce((a, b) => a + b.count, 0) / h.count;
  return `${first.range_us[0]}–${last.range_us[1] ?? last.range_us[0]} GiB (${(share * 100).toFixed(1)} %)`;
}

export function deviceLatencyLines(hists: DeviceLatencyTracingJson | undefined, block: LatencyTracingJson | undefined): string[] {
  if (block === undefined) return [];
  const lines = ['', '### DEVICE LATENCY (bpftrace: block layer and syscalls) ###'];
  if (block.status === 'unavailable' || hists === undefined) {
    lines.push(`  unavailable: ${block.reason ?? 'no capture'}`);
    return lines;
  }
  lines.push(
    `  block probes: ${block.block_filter ?? '-'}   syscall probes: process ${block.process_id ?? '-'}   window ${num(block.window_sec)} s`,
  );
  const r = block.block_requests;
  if (r !== null)
    lines.push(
      `  block requests issued: read ${r.read} (${(r.read_bytes / GiB).toFixed(3)} GiB), write ${r.write} (${(r.write_bytes / GiB).toFixed(3)} GiB); completed ${r.completed_read} / ${r.completed_write}; requeued re-issues ${r.requeued_reissues}; device time ${r.device_time_sec.toFixed(3)} s`,
    );
  lines.push(
    `  ${'histogram'.padEnd(20)} ${'unit'.padEnd(5)} ${'samples'.padStart(9)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'p99'.padStart(9)}`,
  );
  for (const [name, h] of Object.entries(hists)) {
    const head = `  ${name.padEnd(20)} ${UNIT[h.unit].padEnd(5)} ${String(h.count).padStart(9)}`;
    lines.push(
      h.reason === null ? `${head} ${num(h.p50).padStart(9)} ${num(h.p95).padStart(9)} ${num(h.p99).padStart(9)}` : `${head}   ${h.reason}`,
    );
  }
  for (const dir of ['read', 'write'] as const) {
    const zone = hotZone(hists[`lba_${dir}_gb`]);
    if (zone !== undefined) lines.push(`  LBA hot zone (${dir}s): ${zone}`);
  }
  if (block.fio !== null)
    lines.push(
      `  fio job (fio_workload): bssplit from ${block.fio.size_source}, rwmixread=${block.fio.rwmixread}, iodepth=${block.fio.iodepth} (Little's law)`,
    );
  for (const w of block.fio?.warnings ?? []) lines.push(`  WARNING (capture): ${w}`);
  if (block.output_truncated) lines.push("  WARNING: bpftrace's output was cut off; the last histogram may be incomplete");
  return lines;
}
