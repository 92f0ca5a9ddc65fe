// A CLOSED run made by hand for the rule tests: Options 1–3 × 3 trials × 2 ranks on one host, every
// value as a valid CLOSED submission records it, and its summary merged by merge.ts. Each test
// changes one fact (`edit`) and expects exactly one rule to change its verdict.
import { mergeOption } from '../../../src/mlperf/merge.js';
import type { TrialInput } from '../../../src/mlperf/merge.js';
import { MLPERF_OPTIONS, OPTION_IDS } from '../../../src/mlperf/options.js';
import type { CheckInput, SummaryOption } from '../../../src/mlperf/check/types.js';
import { buildResultsJson } from '../../../src/report/results-json.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';
import { FLAG_ROWS } from '../../../src/settings/flags.js';
import { GiB } from '../../../src/util/units.js';
import { runResultFixture } from '../../report/fixtures.js';

export const ROOT = '/runs/kvcache_1';
export const RANKS = 2;
export const TRIALS = 3;

/** Every flag at its table default, snake_case, as effective_config.args records it. */
function defaultArgs(): Record<string, unknown> {
  return Object.fromEntries(FLAG_ROWS.map((f) => [f.name.replaceAll('-', '_'), f.default ?? null]));
}

const BASE = buildResultsJson(runResultFixture());

/** Rank `rank` of `option`'s trial `trial`: valid, stopped at its duration, 1 GiB read and 0.5 GiB written on nvme9n1 of host-a. */
export function rankDoc(option: number, trial: number, rank: number): ResultsDocument {
  const doc = structuredClone(BASE);
  const v = MLPERF_OPTIONS[option as 1 | 2 | 3].values;
  const dir = `${ROOT}/option_${option}/trial_${trial}`;
  doc.seed = 42 + rank;
  const k = doc.kvcache_bench;
  k.effective_config.args = {
    ...defaultArgs(),
    model: v.model,
    num_users: v.numUsers,
    duration: v.durationSec,
    gpu_mem_gb: v.gpuMemGb,
    cpu_mem_gb: v.cpuMemGb,
    max_concurrent_allocs: v.maxConcurrentAllocs,
    generation_mode: v.generationMode,
    seed: 42 + rank,
    seed_base: 42,
    seed_given: true,
    cache_dir: `/cache/rank_${rank}`,
    create_cache_dir: true,
    rank_output_base: dir,
    rank_cache_base: '/cache',
    output: `${dir}/rank_${rank}/kvcache_results_x.json`,
    no_progress: true,
  };
  k.stop_reason = 'duration';
  k.interrupted = false;
  k.validity = { valid: true, reasons: [], warnings: [] };
  k.storage_bytes = { ...k.storage_bytes, read_bytes: GiB, written_bytes: GiB / 2 };
  k.device_io = {
    ...(k.device_io ?? BASE.kvcache_bench.device_io!),
    device: 'nvme9n1',
    read_bytes: RANKS * GiB,
    written_bytes: (RANKS * GiB) / 2,
  };
  const start = 1_000_000 * option + 10_000 * trial;
  k.ranks = {
    rank,
    world_size: RANKS,
    launcher: 'openmpi',
    world_size_from: 'OMPI_COMM_WORLD_SIZE',
    host: 'host-a',
    barrier: null,
    agreed_start_epoch_ms: start,
    agreed_end_epoch_ms: start + 300_000,
    window_start_epoch_ms: start + rank,
    window_end_epoch_ms: start + 300_000 + rank,
    start_skew_ms: rank,
    end_skew_ms: rank,
    clock_source: 'test',
    peers: [],
  };
  doc.summary.cache_stats.storage_entries = 10;
  doc.summary.cache_stats.tier_storage_read_bandwidth_gbps = 0.5 + rank / 10 + trial / 100;
  doc.summary.cache_stats.storage_read_device_p95_ms = 3 + rank + trial;
  doc.summary.cache_stats.storage_write_device_p95_ms = 7 - rank;
  doc.summary.storage_throughput_tokens_per_sec = 1000 * option + trial;
  return doc;
}

function trialsOf(): TrialInput[] {
  return OPTION_IDS.flatMap((o) =>
    Array.from({ length: TRIALS }, (_, t) => {
      const dir = `${ROOT}/option_${o}/trial_${t + 1}`;
      return {
        option: String(o),
        trial: t + 1,
        dir,
        files: Array.from({ length: RANKS }, (_, r) => ({
          rank: r,
          path: `${dir}/rank_${r}/kvcache_results_x.json`,
          doc: rankDoc(o, t + 1, r),
        })),
        missing: [],
      };
    }),
  );
}

/** The summary's upstream figures as merge.ts writes them for `trials`. */
export function summaryOf(trials: readonly TrialInput[]): Record<string, SummaryOption> {
  const out: Record<string, SummaryOption> = {};
  for (const o of new Set(trials.map((t) => t.option))) out[o] = mergeOption(trials.filter((t) => t.option === o));
  return out;
}

/** The clean CLOSED run. */
export function closedRun(): CheckInput {
  const trials = trialsOf();
  return {
    kind: 'run',
    root: ROOT,
    manifest: {
      path: `${ROOT}/run.json`,
      fields: {
        run_datetime: '2026-01-01T00:00:00.000Z',
        npernode: RANKS,
        host_count: 1,
        total_ranks: RANKS,
        trials_per_option: TRIALS,
        division: 'closed',
        system_name: 'sut',
        options: [1, 2, 3],
        hosts: ['host-a'],
        sequence: {
          seed: 42,
          start_delay_sec: 90,
          end_delay_sec: 90,
          inter_option_delay_sec: 90,
          config: null,
          preconditioned: true,
          overrides: {},
          launch_host: 'host-a',
          results_dir: { path: '/results', device_id: 40, file_system: 'nfs', block_device: null },
          cache_dir: { path: '/cache', device_id: 259, file_system: 'ext2/3/4', block_device: 'nvme9n1' },
        },
      },
    },
    division: 'closed',
    divisionFrom: 'run.json division',
    trials,
    summary: { path: `${ROOT}/kvcache_run_summary_x.json`, options: summaryOf(trials) },
  };
}

/** A deep copy of `input` changed by `change` (the summary stays as it was: a changed rank file no longer matches it). */
export function edit(input: CheckInput, change: (copy: { -readonly [K in keyof CheckInput]: CheckInput[K] }) => void): CheckInput {
  const copy = structuredClone(input);
  change(copy);
  return copy;
}

/** The rank file of option `o`, trial `t`, rank `r` of an input (to edit it). */
export function docOf(input: CheckInput, o: number, t: number, r: number): ResultsDocument {
  const trial = input.trials.find((x) => x.option === String(o) && x.trial === t);
  const file = trial?.files.find((f) => f.rank === r);
  if (file === undefined) throw new Error(`no rank ${r} in option ${o} trial ${t}`);
  return file.doc;
}
