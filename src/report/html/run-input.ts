// What `kv-cache report` and `kv-cache compare` read from a results file, checked on the way in. The
// schema is the results document's own (report/results-schema.ts), narrowed to the fields the reports
// read and made lenient (unknown keys are kept, not refused): every file a run writes — decode-only,
// prefill-only, trace mode, datasets, trials, ranks — loads, and so does a file of an older 2.x
// version (no timeline, no device telemetry) or of this version with fields other engineers add.
// Only a file from a newer schema version than this build knows is refused, since its fields may
// mean something else. Replays' results and merged mlperf summaries are told apart and read in
// inputs.ts; parseRunText itself reads runs only.
import { basename } from 'node:path';
import * as z from 'zod';
import { LatencyHistogram } from '../../metrics/latency.js';
import { inert } from '../../util/safe-text.js';
import { CacheStatsSchema } from '../../metrics/cache-stats-schema.js';
import { DeviceIoSchema, KvcacheBenchSchema, ResultsSchema, SCHEMA_VERSION, SummarySchema } from '../results-schema.js';
import { lenient } from './timeline-contract.js';

/** Results files larger than this are refused before they are read (a 10-minute run's is ~1 MiB). */
export const MAX_RESULTS_BYTES = 256 * 1024 * 1024;

const K = KvcacheBenchSchema.shape;

/**
 * The fields of a run's results document that the reports read, taken from the results schema itself
 * (same types, same optionality: a percentile absent without samples is absent here too) and made
 * lenient. `schema_version` is any string here: schemaVersionProblem judges it with a clear message.
 */
export const ReportRunSchema = lenient(
  z.object({
    seed: ResultsSchema.shape.seed,
    throughput_timeline: ResultsSchema.shape.throughput_timeline,
    summary: SummarySchema.pick({
      total_requests: true,
      elapsed_time: true,
      avg_throughput_tokens_per_sec: true,
      requests_per_second: true,
      end_to_end_latency_ms: true,
      storage_io_latency_ms: true,
      qos_metrics: true,
      autoscaling_stats: true,
      autoscaling_summary: true,
    }).extend({
      cache_stats: CacheStatsSchema.pick({
        cache_hit_rate: true,
        storage_read_device_p95_ms: true,
        storage_read_device_p99_ms: true,
        storage_read_p95_ms: true,
        storage_read_p99_ms: true,
        storage_write_p95_ms: true,
      }),
    }),
    kvcache_bench: KvcacheBenchSchema.pick({
      tool: true,
      version: true,
      started_at: true,
      stop_reason: true,
      measured_window_sec: true,
      nominal_duration_sec: true,
      model: true,
      storage_io_mode: true,
      storage_file_calls: true,
      storage_file_system: true,
      warnings: true,
      effective_config: true,
      machine: true,
      latency_histograms: true,
      trials: true,
      validity: true,
      timeline: true,
      device_telemetry: true,
      kv_blocks: true,
      kv_pool: true, // issue 32
      payload_generation: true,
      file_io: true,
      cpu_seconds: true, // issue 34
      metadata_ops: true, // issue 34
      metadata_calibration: true, // issue 34: the file system's bytes per new file
      slab: true,
      ttft_modelled: true, // modelled TTFT (issue 23)
      ranks: true,
    }).extend({
      schema_version: z.string(),
      storage_bytes: K.storage_bytes.pick({ read_bytes: true, written_bytes: true, read_gib_per_sec: true, write_gib_per_sec: true }),
      device_io: DeviceIoSchema.pick({ device: true, read_bytes: true, written_bytes: true, read_ops: true, write_ops: true }).nullable(),
    }),
  }),
);
export type ReportRun = z.output<typeof ReportRunSchema>;

/** One results file as the reports see it. */
export interface LoadedRun {
  readonly path: string;
  /** Short label for legends and table headers: file name + I/O mode / users. */
  readonly label: string;
  readonly doc: ReportRun;
  /**
   * Its place (0-based) among all the files of the report when replays or summaries are among them, so
   * the charts' colours and "#n" match the list of inputs; absent: its index among the runs.
   */
  readonly position?: number;
}

/** A results file the reports cannot use; `message` names the file, the problem and what would be valid. */
export class ReportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportInputError';
  }
}

function versionParts(v: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Why a file's schema_version cannot be read by this build, or undefined when it can. */
export function schemaVersionProblem(fileVersion: string, ours: string = SCHEMA_VERSION): string | undefined {
  const theirs = versionParts(fileVersion);
  const mine = versionParts(ours);
  if (theirs === undefined || mine === undefined) return `schema_version '${fileVersion}' is not a version (expected MAJOR.MINOR.PATCH)`;
  const valid = `this kvcache-bench reads schema ${mine[0]}.x up to ${ours}`;
  if (theirs[0] !== mine[0]) return `schema_version ${fileVersion} has another major version; ${valid}`;
  if (theirs[1] > mine[1] || (theirs[1] === mine[1] && theirs[2] > mine[2]))
    return `schema_version ${fileVersion} is newer than this kvcache-bench knows; ${valid} (update kvcache-bench to read it)`;
  return undefined;
}

/** The first few schema problems, as "field: problem". */
export function zodProblems(error: z.ZodError): string {
  const issues = error.issues.slice(0, 5).map((i) => `${i.path.length > 0 ? i.path.join('.') : '(top level)'}: ${i.message}`);
  const more = error.issues.length > 5 ? `; … and ${error.issues.length - 5} more` : '';
  return issues.join('; ') + more;
}

/** A problem with a file, as one inert line: its text comes from the file (keys, versions) and goes to a console. */
export const refused = (message: string): ReportInputError => new ReportInputError(inert(message));

/** Parses a results document's text; `name` is how the messages refer to it. */
export function parseRunText(text: string, name: string): ReportRun {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw refused(`${name}: not JSON (${e instanceof Error ? e.message : String(e)}); expected a kv-cache results file`);
  }
  const expected = 'expected the results JSON of a kv-cache run (--output)';
  if (typeof raw === 'object' && raw !== null && 'replay' in raw) throw refused(`${name}: a kv-cache replay results file; ${expected}`);
  const tool = z.object({ kvcache_bench: z.object({ tool: z.literal('kvcache-bench'), schema_version: z.string() }) }).safeParse(raw);
  if (!tool.success) throw refused(`${name}: not a kv-cache results file (no kvcache_bench.tool / schema_version); ${expected}`);
  const versionProblem = schemaVersionProblem(tool.data.kvcache_bench.schema_version);
  if (versionProblem !== undefined) throw refused(`${name}: ${versionProblem}`);
  const parsed = ReportRunSchema.safeParse(raw);
  if (!parsed.success) throw refused(`${name}: not a valid kv-cache run results file: ${zodProblems(parsed.error)}`);
  return withoutBadHistograms(parsed.data);
}

/**
 * The run without the HDR histograms that cannot be decoded (corrupt, or a decompression bomb), each
 * named in a validity warning: one bad histogram costs its own chart, not the whole report.
 */
function withoutBadHistograms(doc: ReportRun): ReportRun {
  const k = doc.kvcache_bench;
  const kept: ReportRun['kvcache_bench']['latency_histograms'] = {};
  const found: Array<{ code: string; message: string }> = [];
  for (const [hname, h] of Object.entries(k.latency_histograms)) {
    const problem = LatencyHistogram.problemOf(h.encoded);
    if (problem === undefined) kept[hname] = h;
    else
      found.push({
        code: 'histogram_unreadable',
        message: `latency histogram ${hname} is unreadable (${problem}): left out of this report`,
      });
  }
  if (found.length === 0) return doc;
  // Shown with the run's verdict, where a reader of the report looks for what is wrong with a file.
  const validity = { ...k.validity, warnings: [...k.validity.warnings, ...found] };
  return { ...doc, kvcache_bench: { ...k, latency_histograms: kept, validity } };
}

/** "a.json (direct, 4 users)": what tells runs apart in a legend. */
export function runLabel(path: string, doc: ReportRun): string {
  const users = doc.kvcache_bench.effective_config.args.num_users;
  const mode = doc.kvcache_bench.storage_io_mode;
  return `${basename(path)} (${mode}${typeof users === 'number' ? `, ${users} users` : ''})`;
}

/** Two entries with the same label (same file name in two directories) get their position as a prefix. */
export function disambiguate<T extends { readonly label: string }>(runs: T[]): T[] {
  const seen = new Map<string, number>();
  for (const r of runs) seen.set(r.label, (seen.get(r.label) ?? 0) + 1);
  return runs.map((r, i) => ((seen.get(r.label) ?? 0) > 1 ? { ...r, label: `#${i + 1} ${r.label}` } : r));
}
