// What the command prints: the start banner, the progress line, and the summary in the reference's
// section order (docs/reference-compat.md#rc-45). The summary is computed from the results document, so that what is
// printed is exactly what is saved. Our additions come last.
import { kvBlocksLines } from './console-blocks.js';
import { kvPoolLines } from './console-pool.js';
import { metadataOpsLines } from './console-metadata.js';
import { verdictBytesPerNewFile } from './metadata-allowance.js';
import type { PerformanceProfile } from '../metrics/cache-stats.js';
import type { RunConfig } from '../settings/run-config.js';
import { kvBytesPerToken } from '../model/models.js';
import { TIERS } from '../metrics/cache-stats-schema.js';
import { GiB, MiB } from '../util/units.js';
import { enoughFor } from '../metrics/sample-minimums.js';
import type { GatedPercentile } from '../metrics/sample-minimums.js';
import { autoscalingBlock } from './console-autoscaling.js';
import { deviceTelemetryLines } from './console-telemetry.js';
import { ttftLines } from './console-ttft.js';
import { deviceLatencyLines } from './console-tracing.js';
import type { KvcacheBench, LatencyBlock, ResultsDocument, TrialFiguresJson, TrialsJson, ValidationJson } from './results-schema.js';

const RULE = '='.repeat(80);
/** A figure with `digits` decimals; an absent one prints as 0. */
const f = (v: number | undefined, digits = 2): string => (v ?? 0).toFixed(digits);
/** Percentile `p` of `samples` samples (with its `unit`), or `n/a (N samples)` when they are too few for it to be one. */
const pct = (v: number | undefined, p: GatedPercentile, samples: number, unit = ''): string =>
  enoughFor(p, samples) ? `${f(v)}${unit}` : `n/a (${samples} sample${samples === 1 ? '' : 's'})`;

/** `VALID` or `NOT VALID: <codes>`: the verdict in one line, as the console, the workbook and the HTML show it. */
export function verdictText(v: { readonly valid: boolean; readonly reasons: ReadonlyArray<{ readonly code: string }> }): string {
  return v.valid ? 'VALID' : `NOT VALID: ${v.reasons.map((r) => r.code).join(', ')}`;
}

/** The verdict last: `VALID` or `NOT VALID: <codes>`, each reason's message below, then the warnings. */
export function validityLines(v: KvcacheBench['validity']): string[] {
  const lines = ['', '### VALIDITY ###', verdictText(v)];
  for (const r of v.reasons) lines.push(`  ${r.code}: ${r.message}`);
  for (const w of v.warnings) lines.push(`  (warning) ${w.code}: ${w.message}`);
  return lines;
}

/** The lines printed before a run starts: what is about to be measured. */
export function banner(c: RunConfig, version: string): string[] {
  const bpt = kvBytesPerToken(c.model);
  const on = (b: boolean): string => (b ? 'on' : 'off');
  const gpu =
    c.gpuMemGb > 0 ? `${c.numGpus} × ${c.gpuMemGb} GiB simulated GPU (${c.gpuBandwidthGbs} GB/s model) │ TP=${c.tensorParallel}` : 'none';
  return [
    RULE,
    `kv-cache ${version} — KV cache storage benchmark`,
    RULE,
    `Model: ${c.model.key} (${c.model.name}), ${bpt.toLocaleString('en-US')} KV bytes/token`,
    `GPU tier: ${gpu}   CPU tier: ${c.cpuMemGb} GiB   Storage: ${c.cacheDir ?? '(temporary directory)'} [${c.ioMode} I/O]${c.storageCapacityGb > 0 ? `, ${c.storageCapacityGb} GiB` : ''}`,
    `Users: ${c.numUsers}   Duration: ${c.durationSec} s${c.maxRequests > 0 ? `   Max requests: ${c.maxRequests}` : ''}   Seed: ${c.seed}${c.seedGiven ? '' : ' (drawn)'}`,
    `Generation: ${c.generationMode} (${(c.settings.generationTiming[c.generationMode] * 1000).toFixed(0)} ms/token)   Profile: ${c.performanceProfile}`,
    `Multi-turn: ${on(!c.disableMultiTurn)}   Prefix caching: ${on(!c.disablePrefixCaching)}   RAG: ${on(c.enableRag)}   Prefill-only: ${on(c.prefillOnly)}   Max concurrent allocs: ${c.maxConcurrentAllocs || 'unlimited'}`,
  ];
}

function section(lines: string[], title: string): void {
  lines.push('', `### ${title} ###`);
}

/** The summary of a run's results; QoS compliance is shown under the latency profile only. */
export function formatSummary(results: ResultsDocument, profile: PerformanceProfile): string {
  const s = results.summary;
  const cs = s.cache_stats;
  const add = results.kvcache_bench;
  const lines: string[] = [RULE, 'BENCHMARK RESULTS', RULE];
  const e = add.entry_sizes;
  const bpt = add.kv_bytes_per_token;
  lines.push(
    `KV bytes per token: ${bpt.toLocaleString('en-US')} (${(bpt / 1024).toFixed(1)} KiB) — live entries: ${e.count}`,
    e.count > 0
      ? `Entry size MiB: min ${(e.minBytes / MiB).toFixed(1)}, mean ${(e.meanBytes / MiB).toFixed(1)}, p95 ${(e.p95Bytes / MiB).toFixed(1)}, max ${(e.maxBytes / MiB).toFixed(1)}`
      : 'Entry size: no live entries',
  );
  if (add.stop_reason === 'interrupted') lines.push('', '*** RUN INTERRUPTED: results below cover the part that ran ***');

  // No PASS/FAIL block here (the reference dropped it too): storage_health judges whole-entry latencies
  // against 200/500 ms targets, which say more about the entry size than the device, and a second
  // verdict beside the validity line invites reading the wrong one. It stays in the JSON.

  section(lines, 'OVERALL PERFORMANCE');
  lines.push(
    `  Requests completed: ${s.total_requests}   Tokens generated: ${s.total_tokens}`,
    `  Measured window: ${f(s.elapsed_time)} s (nominal ${add.nominal_duration_sec} s; stop: ${add.stop_reason})`,
    `  Wall-clock throughput: ${f(s.avg_throughput_tokens_per_sec)} tok/s   Requests/s: ${f(s.requests_per_second)}`,
    `  Storage throughput (reference formula, tokens ÷ summed I/O time): ${f(s.storage_throughput_tokens_per_sec)} tok/s`,
  );
  const samples = (histogram: string): number => add.latency_histograms[histogram]?.count ?? 0;
  const lat = (title: string, b: LatencyBlock, histogram: string): void => {
    section(lines, title);
    const n = samples(histogram);
    lines.push(
      `  mean ${f(b.mean)} ms   p50 ${f(b.p50)}   p95 ${pct(b.p95, 'p95', n)}   p99 ${pct(b.p99, 'p99', n)}   p99.9 ${pct(b.p999, 'p999', n)}`,
    );
  };
  lat('END-TO-END LATENCY', s.end_to_end_latency_ms, 'request_end_to_end');
  lat('PER-REQUEST STORAGE LATENCY', s.storage_io_latency_ms, 'request_storage');
  if (results.total_generation_latency > 0) lat('TOKEN GENERATION LATENCY', s.generation_latency_ms, 'request_generation');

  section(lines, 'STORAGE PERFORMANCE');
  const reads = cs.total_read_bytes;
  const writes = cs.total_write_bytes;
  const ratio = writes === 0 ? (reads === 0 ? '0' : '∞') : (reads / writes).toFixed(2);
  const perSec = (n: number): string => f(n / Math.max(s.elapsed_time, 1e-9));
  const kb = add.kv_blocks;
  // Block mode leads with the tokens served from cache beside the workload's own reuse (issue 35): the
  // reference's cache_hit_rate counts operations, decode re-reads of cached blocks included.
  if (kb !== undefined) {
    const ideal = kb.ideal.token_hit_rate;
    lines.push(
      `  Token hit rate: ${(kb.token_hit_rate.total * 100).toFixed(1)} %   (ideal ${ideal === null ? 'n/a (not tracked)' : `${(ideal * 100).toFixed(1)} %`}: the workload's reuse with unlimited capacity)`,
    );
  }
  lines.push(
    `  Cache hit rate${kb !== undefined ? ' (reference: per operation, decode re-reads included)' : ''}: ${(cs.cache_hit_rate * 100).toFixed(1)} %   (hits ${cs.cache_hits}, misses ${cs.cache_misses})`,
    `  Total KV read: ${f(cs.total_read_gb)} GiB   written: ${f(cs.total_write_gb)} GiB   R/W ratio: ${ratio}`,
    `  KV read operations: ${cs.read_iops} (${perSec(cs.read_iops)}/s)   write operations: ${cs.write_iops} (${perSec(cs.write_iops)}/s)`,
  );

  section(lines, 'CACHE TIER DISTRIBUTION');
  lines.push(`  GPU entries: ${cs.gpu_entries}   CPU entries: ${cs.cpu_entries}   Storage entries: ${cs.storage_entries}`);
  lines.push(
    `  GPU used: ${f(cs.gpu_memory_used_gb)} GiB   CPU used: ${f(cs.cpu_memory_used_gb)} GiB   Storage used: ${f(cs.tier_storage_used_bytes / GiB)} GiB`,
  );
  lines.push(
    `  Demotions GPU→CPU: ${cs.tier_gpu_demote_out_ops}   CPU→storage: ${cs.tier_cpu_demote_out_ops}   storage deletions: ${cs.tier_storage_evict_delete_ops}`,
  );

  section(lines, 'TIER-SPECIFIC KV BYTES (GiB, incl. demotion traffic)');
  for (const t of TIERS) {
    lines.push(`  ${t.padEnd(8)} written ${f(cs[`tier_${t}_kv_bytes_written_gb`], 3)}   read ${f(cs[`tier_${t}_kv_bytes_read_gb`], 3)}`);
  }
  section(lines, 'STORAGE KV BANDWIDTH (GiB/s over the measured window)');
  lines.push(`  read ${f(cs.tier_storage_read_bandwidth_gbps, 3)}   write ${f(cs.tier_storage_write_bandwidth_gbps, 3)}`);

  section(lines, 'TIER-SPECIFIC LATENCIES (p95, ms)');
  for (const t of TIERS) {
    for (const op of ['read', 'write'] as const) {
      const v = cs[`${t}_${op}_p95_ms`];
      if (v !== undefined) lines.push(`  ${t} ${op}: ${pct(v, 'p95', samples(`${t}_${op}`))}`);
    }
  }
  section(lines, 'STORAGE TIER LATENCY BREAKDOWN (p95, ms)');
  for (const op of ['read', 'write'] as const) {
    if (cs[`storage_${op}_p95_ms`] === undefined) continue;
    const n = samples(`storage_${op}`);
    lines.push(
      `  ${op}: device ${pct(cs[`storage_${op}_device_p95_ms`], 'p95', n)}   host ${pct(cs[`storage_${op}_host_p95_ms`], 'p95', n)}   total ${pct(cs[`storage_${op}_p95_ms`], 'p95', n)}`,
    );
  }

  lines.push(...metadataOpsLines(add.metadata_ops)); // beside the data's latencies, what the layout cost the storage per block

  const os = add.object_store;
  if (os !== undefined) {
    // Beside the split above (S3 tier: host = signing, device = the HTTP requests): what the object store did.
    section(lines, 'OBJECT STORE (S3)');
    const failures = Object.entries(os.failures).map(([c, n]) => `${c} ${n}`);
    lines.push(`  ${os.endpoint_host} bucket ${os.bucket} prefix ${os.prefix}   client: ${os.client}`);
    lines.push(
      `  requests ${os.requests}   retries ${os.retries}   puts ${os.puts} (multipart ${os.multipart_uploads})   gets ${os.gets}   failures ${failures.length > 0 ? failures.join(', ') : 'none'}`,
    );
    const l = os.get_first_byte_ms;
    lines.push(
      `  GET time to first byte ms: p50 ${f(l.p50_ms)}  p95 ${f(l.p95_ms)}  p99 ${f(l.p99_ms)}  max ${f(l.max_ms)} (${l.count} GETs)`,
    );
  }

  section(lines, 'CACHE TYPE BREAKDOWNS');
  lines.push(
    `  system prompt hits ${cs.system_prompt_hits}   common phrase hits ${cs.common_phrase_hits}   user cache hits ${cs.user_cache_hits}   multi-turn hits ${cs.multi_turn_hits}`,
  );
  const pc = s.prefix_cache_stats;
  if ('prefix_hits' in pc) {
    section(lines, 'PREFIX CACHING');
    lines.push(`  prefix hits ${pc.prefix_hits}   misses ${pc.prefix_misses}   bytes saved ${f(pc.bytes_saved / MiB)} MiB`);
  }
  const mt = s.multi_turn_stats;
  section(lines, 'MULTI-TURN');
  lines.push(`  hits ${mt.cache_hits}   misses ${mt.cache_misses}   hit rate ${(mt.hit_rate * 100).toFixed(1)} %`);
  if (add.kv_blocks !== undefined) {
    lines.push('  (block-granular: prompts and conversation history are shared blocks of one chain; see KV BLOCKS)');
    lines.push(...kvBlocksLines(add.kv_blocks));
  }
  if (add.kv_pool !== undefined) lines.push(...kvPoolLines(add.kv_pool));

  if (profile === 'latency') {
    section(lines, 'QOS');
    for (const [name, q] of Object.entries(s.qos_metrics)) {
      if ('no_data' in q) {
        lines.push(`  ${name}: no requests`);
        continue;
      }
      const sla = q.sla;
      lines.push(
        `  ${name}: ${q.total_requests} requests, p95 ${pct(sla.actual_p95_ms, 'p95', q.total_requests, ' ms')} vs target ${sla.target_p95_ms} ms, compliance ${(sla.compliance * 100).toFixed(1)} % ${sla.met ? '[MET]' : '[NOT MET]'}`,
      );
    }
  }

  lines.push(...autoscalingBlock(results));
  lines.push(...ttftLines(add.ttft_modelled)); // modelled TTFT (issue 23), after the measured request figures
  if (results.validation !== undefined) lines.push(...validationBlock(results.validation));

  section(lines, 'DEVICE I/O (kernel counters, whole device)');
  const dev = add.device_io;
  const sb = add.storage_bytes;
  if (dev === null) lines.push('  device not resolvable for the cache dir (tmpfs, overlay, network FS?)');
  else {
    lines.push(
      `  ${dev.device}: read ${f(dev.read_bytes / GiB, 3)} GiB (${f(dev.read_bytes_per_sec / MiB, 1)} MiB/s), written ${f(dev.written_bytes / GiB, 3)} GiB (${f(dev.write_bytes_per_sec / MiB, 1)} MiB/s)`,
      `  tool's storage tier: read ${f(sb.read_bytes / GiB, 3)} GiB, written ${f(sb.written_bytes / GiB, 3)} GiB`,
    );
  }
  const cal = add.metadata_calibration;
  if (cal !== undefined)
    lines.push(
      `  file-system metadata (${cal.layout} layout): at most ${f(verdictBytesPerNewFile(cal) / 1024, 1)} KiB per new file (calibrated: ${f(cal.bytes_per_new_file / 1024, 1)} before the window${cal.after_window != null ? `, ${f(cal.after_window.bytes_per_new_file / 1024, 1)} among the run's entries after it` : ''})` +
        (cal.disturbed
          ? ': disturbed (another writer was busy on the device), not allowed for by the verdict'
          : cal.new_files_in_window !== null && cal.expected_write_bytes !== null
            ? ` × ${cal.new_files_in_window} files created in the window${cal.bytes_per_new_dir !== null ? `, ${f(cal.bytes_per_new_dir / 1024, 1)} KiB per new directory × ${cal.new_dirs_in_window ?? 0}` : ''} = up to ${f(cal.expected_write_bytes / GiB, 3)} GiB of the device's writes`
            : ''),
    );
  const slab = add.slab;
  if (slab !== undefined)
    lines.push(
      `  slab pool (--kv-layout slab): ${slab.files} file(s), ${slab.slots} slots of ${f(slab.slot_bytes / MiB, 2)} MiB; laid out before the window: ${f(slab.lay_out_bytes / GiB, 3)} GiB in ${f(slab.lay_out_sec, 1)} s (not counted above); ` +
        `peak ${slab.slots_used_peak} slots held, ${slab.slots_freed} freed, ${slab.file_creates} file creates (all at lay-out)`,
    );
  lines.push(...deviceTelemetryLines(add));
  lines.push(...deviceLatencyLines(results.device_latency_tracing, add.latency_tracing)); // block-layer tracing (issue 13)
  failedOperationsBlock(lines, add);
  section(lines, 'HARNESS');
  const eld = add.event_loop_delay_ms;
  lines.push(
    `  storage: ${add.storage_dir} (${add.storage_file_system}, ${add.storage_io_mode} I/O${add.storage_layout !== undefined ? `, ${add.storage_layout} layout` : ''}${add.storage_file_calls !== undefined ? `, ${add.storage_file_calls.split(':')[0] ?? ''} file calls` : ''})   workers: ${add.workers}`,
    `  event-loop delay ms: p50 ${eld.p50.toFixed(2)}  p99 ${eld.p99.toFixed(2)}  max ${eld.max.toFixed(2)}   main thread busy: ${(add.main_thread_busy_fraction * 100).toFixed(1)} %`,
    `  requests cut short at stop: ${add.requests_aborted_at_stop}`,
  );
  const cpu = add.cpu_seconds;
  if (cpu !== undefined) {
    const per =
      cpu.per_gib_moved === null ? 'nothing moved' : `${f(cpu.per_gib_moved, 3)} CPU-s per GiB moved (${f(cpu.gib_moved, 2)} GiB)`;
    lines.push(`  CPU over the measured window: ${f(cpu.user, 2)} s user + ${f(cpu.system, 2)} s system = ${f(cpu.total, 2)} s; ${per}`);
  }
  const pg = add.payload_generation;
  if (pg !== undefined) {
    const made = pg.stamped_bytes + pg.copied_bytes;
    const stamped = made > 0 ? `${((100 * pg.stamped_bytes) / made).toFixed(1)} % by stamps` : 'none generated';
    lines.push(
      `  payload bytes: ${f(made / GiB, 3)} GiB (${stamped}, filled by ${pg.filler ?? 'an unrecorded filler'}); writes waited for them ${(pg.write_wait_share * 100).toFixed(1)} % of their time (${f(pg.write_wait_ms, 0)} ms, ${pg.chunks_waited_for} chunks)`,
    );
  }
  const io = add.file_io;
  if (io !== undefined) {
    lines.push(
      `  file calls: at most ${io.max_in_flight} in flight on ${io.pool_threads} libuv thread${io.pool_threads === 1 ? '' : 's'}; queued for a thread ${(io.queued_share * 100).toFixed(1)} % of the window; ` +
        `storage operations waited for a staging buffer ${(io.staging_wait_share * 100).toFixed(1)} % of their time (${io.staging_waits} waits)`,
    );
  }
  for (const w of add.warnings) lines.push(`  WARNING: ${w}`);
  if (add.trials !== undefined) lines.push(...trialsBlock(add.trials));
  lines.push(...validityLines(add.validity), RULE);
  return lines.join('\n');
}

/** VALIDATION: each figure of the run against the real trace, its relative error and verdict. */
export function validationBlock(v: ValidationJson): string[] {
  const lines = ['', `### VALIDATION (vs ${v.trace_file}: ${v.trace_stats.total_requests} requests) ###`];
  for (const [name, c] of Object.entries(v.comparison)) {
    const err = c.error_pct === null ? 'n/a (trace value 0)' : `${c.error_pct.toFixed(1)} %`;
    lines.push(`  [${c.within_5pct ? 'OK' : 'X'}] ${name}: run ${f(c.benchmark, 3)}   trace ${f(c.trace, 3)}   error ${err}`);
  }
  lines.push(
    `  Overall: ${v.passed ? 'PASS' : 'FAIL'} (every figure within ${v.tolerance_pct} %; mean error ${v.avg_error_pct.toFixed(1)} %, the reference's criterion)`,
  );
  return lines;
}

const TRIAL_COLUMNS: ReadonlyArray<{
  readonly title: string;
  readonly key: keyof TrialFiguresJson;
  readonly scale: number;
  readonly digits: number;
}> = [
  { title: 'storage MiB/s', key: 'storage_bytes_per_sec', scale: 1 / MiB, digits: 1 },
  { title: 'read MiB/s', key: 'storage_read_bytes_per_sec', scale: 1 / MiB, digits: 1 },
  { title: 'write MiB/s', key: 'storage_write_bytes_per_sec', scale: 1 / MiB, digits: 1 },
  { title: 'req/s', key: 'requests_per_second', scale: 1, digits: 2 },
  { title: 'tok/s', key: 'avg_throughput_tokens_per_sec', scale: 1, digits: 1 },
  { title: 'rd dev p95 ms', key: 'storage_read_device_p95_ms', scale: 1, digits: 2 },
  { title: 'wr dev p95 ms', key: 'storage_write_device_p95_ms', scale: 1, digits: 2 },
  { title: 'e2e p95 ms', key: 'end_to_end_p95_ms', scale: 1, digits: 1 },
  { title: 'hit %', key: 'cache_hit_rate', scale: 100, digits: 1 },
];

/** The line printed as trial k ends: its headline figures and where its results were saved. */
export function trialLine(k: number, of: number, r: ResultsDocument, file: string): string {
  const sb = r.kvcache_bench.storage_bytes;
  const stop = r.kvcache_bench.stop_reason;
  return `Trial ${k}/${of} (${stop}): storage ${f((sb.read_bytes_per_sec + sb.write_bytes_per_sec) / MiB, 1)} MiB/s (read ${f(sb.read_bytes_per_sec / MiB, 1)}, write ${f(sb.write_bytes_per_sec / MiB, 1)}), ${f(r.summary.requests_per_second)} req/s, e2e p95 ${f(r.summary.end_to_end_latency_ms.p95)} ms → ${file}`;
}

/** TRIALS: every trial's headline figures, then median, min, max and CV of the counted trials. */
export function trialsBlock(t: TrialsJson): string[] {
  const width = 14;
  const cell = (v: number | null, scale: number, digits: number): string =>
    (v === null ? '-' : (v * scale).toFixed(digits)).padStart(width);
  const row = (label: string, values: (c: (typeof TRIAL_COLUMNS)[number]) => string): string =>
    `  ${label.padEnd(9)}${TRIAL_COLUMNS.map(values).join('')}`;
  const median = t.median_trial === null ? 'no trial completed' : `median trial ${t.median_trial} by storage bytes/s`;
  const lines = [
    '',
    `### TRIALS (${t.completed} of ${t.requested} completed; ${median}; MiB = 2^20 bytes) ###`,
    row('trial', (c) => c.title.padStart(width)),
  ];
  for (const r of t.runs) {
    const mark = r.trial === t.median_trial ? '*' : r.counted ? '' : ' !';
    lines.push(row(`${r.trial}${mark}`, (c) => cell(r.figures[c.key], c.scale, c.digits)));
  }
  for (const stat of ['median', 'min', 'max'] as const)
    lines.push(row(stat, (c) => cell(t.stats[c.key]?.[stat] ?? null, c.scale, c.digits)));
  lines.push(row('CV %', (c) => cell(t.stats[c.key]?.cv ?? null, 100, 1)));
  lines.push(
    `  * the median trial (its full results are above and in --output); ! not counted (interrupted or failed). CV: sample (n − 1).`,
  );
  for (const r of t.runs) lines.push(`  trial ${r.trial}: ${r.stop_reason} → ${r.file}`);
  for (const w of t.warnings) lines.push(`  WARNING: ${w}`);
  return lines;
}

/** FAILED OPERATIONS: what failed (per tier, operation, error), what was refused, what was left by earlier runs. */
function failedOperationsBlock(lines: string[], add: ResultsDocument['kvcache_bench']): void {
  const refused = add.refused_allocations;
  const stale = add.stale_entries;
  if (add.failed_operations.length === 0 && refused.count === 0 && add.stop_reason !== 'storage_full' && (stale?.count ?? 0) === 0) return;
  section(lines, 'FAILED OPERATIONS (moved no bytes; not in any figure above)');
  if (add.stop_reason === 'storage_full') lines.push('  *** STORAGE FULL: the measurement stopped at the first ENOSPC/EDQUOT ***');
  for (const f of add.failed_operations) lines.push(`  ${f.tier} ${f.operation}: ${f.count} failed with ${f.error}`);
  if (refused.count > 0)
    lines.push(`  refused allocations (no room within the limits): ${refused.count} (${f(refused.bytes / GiB, 3)} GiB)`);
  if (stale !== null && stale.count > 0) {
    lines.push(
      `  entry files of earlier runs in the cache dir: ${stale.count} (${f(stale.allocated_bytes / GiB, 3)} GiB), removed ${stale.removed}`,
    );
  }
}
