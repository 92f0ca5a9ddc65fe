// The console summary, in the reference's section order (spec §6.6), computed from the results
// object so that what is printed is exactly what is saved. Our additions come last.
import type { RunResult } from '../metrics/result.js';
import { GiB, MiB } from '../util/units.js';

type Obj = Record<string, unknown>;

const RULE = '='.repeat(80);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const f = (v: unknown, digits = 2): string => num(v).toFixed(digits);
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});

function section(lines: string[], title: string): void {
  lines.push('', `### ${title} ###`);
}

export function formatSummary(r: RunResult, results: Obj): string {
  const s = obj(results.summary);
  const cs = obj(s.cache_stats);
  const add = obj(results.kvcache_bench);
  const lines: string[] = [RULE, 'BENCHMARK RESULTS', RULE];
  const e = r.entrySizes;
  lines.push(
    `KV bytes per token: ${r.bytesPerToken.toLocaleString('en-US')} (${(r.bytesPerToken / 1024).toFixed(1)} KiB) — live entries: ${e.count}`,
    e.count > 0
      ? `Entry size MiB: min ${(e.minBytes / MiB).toFixed(1)}, mean ${(e.meanBytes / MiB).toFixed(1)}, p95 ${(e.p95Bytes / MiB).toFixed(1)}, max ${(e.maxBytes / MiB).toFixed(1)}`
      : 'Entry size: no live entries',
  );
  if (r.stopReason === 'interrupted') lines.push('', '*** RUN INTERRUPTED: results below cover the part that ran ***');

  section(lines, 'STORAGE PERFORMANCE ASSESSMENT');
  const health = obj(cs.storage_health);
  for (const c of (health.criteria as Obj[] | undefined) ?? []) {
    lines.push(`  [${c.passed === true ? 'OK' : 'X'}] ${String(c.name)}: actual ${f(c.actual, 3)} ${String(c.unit)} (target ${String(c.target)})`);
  }
  lines.push(`  Overall: ${String(health.overall_status)} (${String(health.passed_count)}/${String(health.total_count)} criteria)`);
  lines.push('  Note: latency criteria apply to whole entries (hundreds of MiB); a 200 MiB entry at 1 GiB/s takes ~200 ms.');

  section(lines, 'OVERALL PERFORMANCE');
  lines.push(
    `  Requests completed: ${String(s.total_requests)}   Tokens generated: ${String(s.total_tokens)}`,
    `  Measured window: ${f(s.elapsed_time)} s (nominal ${r.nominalDurationSec} s; stop: ${r.stopReason})`,
    `  Wall-clock throughput: ${f(s.avg_throughput_tokens_per_sec)} tok/s   Requests/s: ${f(s.requests_per_second)}`,
    `  Storage throughput (reference formula, tokens ÷ summed I/O time): ${f(s.storage_throughput_tokens_per_sec)} tok/s`,
  );
  const lat = (title: string, b: Obj): void => {
    section(lines, title);
    lines.push(`  mean ${f(b.mean)} ms   p50 ${f(b.p50)}   p95 ${f(b.p95)}   p99 ${f(b.p99)}   p99.9 ${f(b.p999)}`);
  };
  lat('END-TO-END LATENCY', obj(s.end_to_end_latency_ms));
  lat('PER-REQUEST STORAGE LATENCY', obj(s.storage_io_latency_ms));
  if (r.requests.totalGenerationMs > 0) lat('TOKEN GENERATION LATENCY', obj(s.generation_latency_ms));

  section(lines, 'STORAGE PERFORMANCE');
  const reads = num(cs.total_read_bytes);
  const writes = num(cs.total_write_bytes);
  const ratio = writes === 0 ? (reads === 0 ? '0' : '∞') : (reads / writes).toFixed(2);
  lines.push(
    `  Cache hit rate: ${(num(cs.cache_hit_rate) * 100).toFixed(1)} %   (hits ${String(cs.cache_hits)}, misses ${String(cs.cache_misses)})`,
    `  Total KV read: ${f(cs.total_read_gb)} GiB   written: ${f(cs.total_write_gb)} GiB   R/W ratio: ${ratio}`,
    `  KV read operations: ${String(cs.read_iops)} (${f(num(cs.read_iops) / Math.max(r.elapsedSec, 1e-9))}/s)   write operations: ${String(cs.write_iops)} (${f(num(cs.write_iops) / Math.max(r.elapsedSec, 1e-9))}/s)`,
  );

  section(lines, 'CACHE TIER DISTRIBUTION');
  lines.push(`  GPU entries: ${String(cs.gpu_entries)}   CPU entries: ${String(cs.cpu_entries)}   Storage entries: ${String(cs.storage_entries)}`);
  lines.push(`  GPU used: ${f(cs.gpu_memory_used_gb)} GiB   CPU used: ${f(cs.cpu_memory_used_gb)} GiB   Storage used: ${f(num(cs.tier_storage_used_bytes) / GiB)} GiB`);
  lines.push(`  Demotions GPU→CPU: ${String(cs.tier_gpu_demote_out_ops)}   CPU→storage: ${String(cs.tier_cpu_demote_out_ops)}   storage deletions: ${String(cs.tier_storage_evict_delete_ops)}`);

  section(lines, 'TIER-SPECIFIC KV BYTES (GiB, incl. demotion traffic)');
  for (const t of ['gpu', 'cpu', 'storage']) {
    lines.push(`  ${t.padEnd(8)} written ${f(cs[`tier_${t}_kv_bytes_written_gb`], 3)}   read ${f(cs[`tier_${t}_kv_bytes_read_gb`], 3)}`);
  }
  section(lines, 'STORAGE KV BANDWIDTH (GiB/s over the measured window)');
  lines.push(`  read ${f(cs.tier_storage_read_bandwidth_gbps, 3)}   write ${f(cs.tier_storage_write_bandwidth_gbps, 3)}`);

  section(lines, 'TIER-SPECIFIC LATENCIES (p95, ms)');
  for (const t of ['gpu', 'cpu', 'storage']) {
    for (const op of ['read', 'write']) {
      const v = cs[`${t}_${op}_p95_ms`];
      if (v !== undefined) lines.push(`  ${t} ${op}: ${f(v)}`);
    }
  }
  section(lines, 'STORAGE TIER LATENCY BREAKDOWN (p95, ms)');
  for (const op of ['read', 'write']) {
    if (cs[`storage_${op}_p95_ms`] === undefined) continue;
    lines.push(`  ${op}: device ${f(cs[`storage_${op}_device_p95_ms`])}   host ${f(cs[`storage_${op}_host_p95_ms`])}   total ${f(cs[`storage_${op}_p95_ms`])}`);
  }

  section(lines, 'CACHE TYPE BREAKDOWNS');
  lines.push(
    `  system prompt hits ${String(cs.system_prompt_hits)}   common phrase hits ${String(cs.common_phrase_hits)}   user cache hits ${String(cs.user_cache_hits)}   multi-turn hits ${String(cs.multi_turn_hits)}`,
  );
  const pc = obj(s.prefix_cache_stats);
  if (Object.keys(pc).length > 0) {
    section(lines, 'PREFIX CACHING');
    lines.push(`  prefix hits ${String(pc.prefix_hits)}   misses ${String(pc.prefix_misses)}   bytes saved ${f(num(pc.bytes_saved) / MiB)} MiB`);
  }
  const mt = obj(s.multi_turn_stats);
  section(lines, 'MULTI-TURN');
  lines.push(`  hits ${String(mt.cache_hits)}   misses ${String(mt.cache_misses)}   hit rate ${(num(mt.hit_rate) * 100).toFixed(1)} %`);

  if (r.performanceProfile === 'latency') {
    section(lines, 'QOS');
    for (const [name, v] of Object.entries(obj(s.qos_metrics))) {
      const q = obj(v);
      if (q.no_data === true) {
        lines.push(`  ${name}: no requests`);
        continue;
      }
      const sla = obj(q.sla);
      lines.push(
        `  ${name}: ${String(q.total_requests)} requests, p95 ${f(sla.actual_p95_ms)} ms vs target ${String(sla.target_p95_ms)} ms, compliance ${(num(sla.compliance) * 100).toFixed(1)} % ${sla.met === true ? '[MET]' : '[NOT MET]'}`,
      );
    }
  }

  section(lines, 'DEVICE I/O (kernel counters, whole device)');
  const dev = obj(add.device_io);
  const sb = obj(add.storage_bytes);
  if (add.device_io === null) lines.push('  device not resolvable for the cache dir (tmpfs, overlay, network FS?)');
  else {
    lines.push(
      `  ${String(dev.device)}: read ${f(num(dev.read_bytes) / GiB, 3)} GiB (${f(num(dev.read_bytes_per_sec) / MiB, 1)} MiB/s), written ${f(num(dev.written_bytes) / GiB, 3)} GiB (${f(num(dev.write_bytes_per_sec) / MiB, 1)} MiB/s)`,
      `  tool's storage tier: read ${f(num(sb.read_bytes) / GiB, 3)} GiB, written ${f(num(sb.written_bytes) / GiB, 3)} GiB`,
    );
  }
  section(lines, 'HARNESS');
  const eld = r.eventLoopDelayMs;
  lines.push(
    `  storage: ${r.storage.dir} (${r.storage.fileSystem}, ${r.storage.ioMode} I/O)   workers: ${r.workers}`,
    `  event-loop delay ms: p50 ${eld.p50.toFixed(2)}  p99 ${eld.p99.toFixed(2)}  max ${eld.max.toFixed(2)}`,
    `  requests cut short at stop: ${r.requests.requestsAborted}`,
  );
  for (const w of r.warnings) lines.push(`  WARNING: ${w}`);
  lines.push(RULE);
  return lines.join('\n');
}
