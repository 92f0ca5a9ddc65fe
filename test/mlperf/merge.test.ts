import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { LatencyHistogram } from '../../src/metrics/latency.js';
import { collectRun } from '../../src/mlperf/collect.js';
import { mergeOption, mergeRun, trialFigures } from '../../src/mlperf/merge.js';
import type { TrialInput } from '../../src/mlperf/merge.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import type { ResultsDocument } from '../../src/report/results-schema.js';
import { GiB } from '../../src/util/units.js';
import { runResultFixture } from '../report/fixtures.js';
import { summaryLines } from '../../src/mlperf/summary-text.js';
import { withTempDir } from '../util/temp-dir.js';

interface RankSpec {
  readonly rank: number;
  readonly host: string;
  readonly device: string;
  readonly readBytes: number;
  readonly writtenBytes: number;
  readonly deviceRead: number;
  readonly deviceWritten: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly readGibps: number;
  readonly readP95: number;
  readonly tokensPerSec: number;
  readonly readSamplesMs: readonly number[];
  /** metadata_calibration.expected_write_bytes (null: a disturbed calibration); absent: no calibration. */
  readonly metadataWriteBytes?: number | null;
}

/** A rank's results document with the figures the merge reads set to known values. */
function rankDoc(s: RankSpec): ResultsDocument {
  const doc = structuredClone(buildResultsJson(runResultFixture()));
  const k = doc.kvcache_bench;
  k.storage_bytes = { ...k.storage_bytes, read_bytes: s.readBytes, written_bytes: s.writtenBytes };
  k.device_io = {
    device: s.device,
    read_bytes: s.deviceRead,
    written_bytes: s.deviceWritten,
    read_bytes_per_sec: 0,
    write_bytes_per_sec: 0,
    read_ops: 1,
    write_ops: 1,
    note: '',
  };
  k.ranks = {
    rank: s.rank,
    world_size: 3,
    launcher: 'openmpi',
    world_size_from: 'OMPI_COMM_WORLD_SIZE',
    host: s.host,
    barrier: null,
    agreed_start_epoch_ms: 1000,
    agreed_end_epoch_ms: 11_000,
    window_start_epoch_ms: s.startMs,
    window_end_epoch_ms: s.endMs,
    start_skew_ms: s.startMs - 1000,
    end_skew_ms: s.endMs - 11_000,
    clock_source: 'test',
    peers: [],
  };
  const h = new LatencyHistogram();
  for (const ms of s.readSamplesMs) h.recordMs(ms);
  k.latency_histograms = {};
  if (h.count > 0) k.latency_histograms.storage_read_device = { encoded: h.encode(), count: h.count, sum_ms: h.meanMs * h.count };
  doc.summary.cache_stats.tier_storage_read_bandwidth_gbps = s.readGibps;
  doc.summary.cache_stats.storage_read_device_p95_ms = s.readP95;
  doc.summary.storage_throughput_tokens_per_sec = s.tokensPerSec;
  if (s.metadataWriteBytes === undefined) delete k.metadata_calibration;
  else
    k.metadata_calibration = {
      layout: 'flat',
      files_per_round: 128,
      file_bytes: 16_384,
      rounds_bytes_per_file: [9000, 9000, 9000],
      bytes_per_new_file: 9000,
      rounds_bytes_per_file_in_new_dir: null,
      bytes_per_new_dir: null,
      new_dirs_in_window: 0,
      disturbed: s.metadataWriteBytes === null,
      seconds: 0.4,
      new_files_in_window: 1000,
      after_window: null,
      allowed_bytes_per_new_file: s.metadataWriteBytes === null ? 0 : 9000,
      expected_write_bytes: s.metadataWriteBytes,
    };
  return doc;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const R0: RankSpec = {
  rank: 0,
  host: 'a',
  device: 'nvme0n1',
  readBytes: 2 * GiB,
  writtenBytes: GiB,
  deviceRead: 3 * GiB,
  deviceWritten: 2 * GiB,
  startMs: 1000,
  endMs: 11_000,
  readGibps: 0.2,
  readP95: 95,
  tokensPerSec: 10,
  readSamplesMs: range(1, 100),
};
const R1: RankSpec = {
  ...R0,
  rank: 1,
  readBytes: GiB,
  deviceRead: 3 * GiB - 1,
  startMs: 1010,
  endMs: 11_020,
  readGibps: 0.1,
  readP95: 195,
  readSamplesMs: range(101, 200),
};
/** Served from memory only: no storage bytes, a p95 of 0 that must not count. */
const R2: RankSpec = {
  ...R0,
  rank: 2,
  host: 'b',
  device: 'nvme1n1',
  readBytes: 0,
  writtenBytes: 0,
  deviceRead: 0,
  deviceWritten: 0,
  readGibps: 0,
  readP95: 0,
  readSamplesMs: [],
};

const file = (s: RankSpec) => ({ rank: s.rank, path: `/r/rank_${s.rank}/kvcache_results_x.json`, doc: rankDoc(s) });

test('a trial: bytes of all ranks ÷ the common window, each host’s device once, pooled percentiles, skew', () => {
  const t: TrialInput = { option: '1', trial: 1, dir: '/r', files: [file(R0), file(R1), file(R2)], missing: [] };
  const f = trialFigures(t);
  assert.equal(f.common_window_sec, 10.02); // 1000 … 11020 ms
  assert.equal(f.storage_read_bytes, 3 * GiB);
  assert.equal(f.storage_read_bytes_per_sec, (3 * GiB) / 10.02);
  // Ranks 0 and 1 share host a's device: counted once (the wider window's bytes), checked against both ranks' bytes.
  assert.deepEqual(f.device_per_host, [
    {
      host: 'a',
      device: 'nvme0n1',
      ranks: [0, 1],
      read_bytes: 3 * GiB,
      written_bytes: 2 * GiB,
      tool_read_bytes: 3 * GiB,
      tool_written_bytes: 2 * GiB,
      metadata_write_bytes: null,
      bytes_check: 'match',
    },
    {
      host: 'b',
      device: 'nvme1n1',
      ranks: [2],
      read_bytes: 0,
      written_bytes: 0,
      tool_read_bytes: 0,
      tool_written_bytes: 0,
      metadata_write_bytes: null,
      bytes_check: 'match',
    },
  ]);
  assert.equal(f.device_read_bytes_per_sec, (3 * GiB) / 10.02);
  // Every sample 1 … 200 ms pooled: the p95 is 190 ms (HDR: within 0.1 %), where the max of the ranks' p95s says 195.
  assert.equal(f.storage_read_device_latency.count, 200);
  assert.ok(Math.abs((f.storage_read_device_latency.p95_ms ?? 0) - 190) <= 0.19, String(f.storage_read_device_latency.p95_ms));
  assert.equal(f.start_spread_ms, 10);
  assert.equal(f.max_abs_start_skew_ms, 10);
  assert.equal(f.end_spread_ms, 20);
});

test('an option: upstream sums per trial, means over trials, max of p95s without the memory-only ranks; missing files counted', () => {
  const t1: TrialInput = { option: '1', trial: 1, dir: '/t1', files: [file(R0), file(R1), file(R2)], missing: [] };
  const t2: TrialInput = {
    option: '1',
    trial: 2,
    dir: '/t2',
    files: [file({ ...R0, readGibps: 0.4, tokensPerSec: 30 })],
    missing: ['/t2/rank_1/kvcache_results_*.json: rank 1 wrote nothing', '/t2/rank_2/kvcache_results_*.json: rank 2 wrote nothing'],
  };
  const o = mergeOption([t1, t2]);
  assert.equal(o.aggregated_read_bandwidth_gbps, (0.2 + 0.1 + 0 + 0.4) / 2);
  assert.equal(o.aggregated_storage_throughput_tokens_per_sec, (10 + 10 + 10 + 30) / 2);
  assert.equal(o.aggregated_device_read_p95_ms, 195);
  assert.deepEqual(o.cpu_tier_ranks, [2]);
  assert.equal(o.rank_count, 3);
  assert.equal(o.trial_count, 2);
  assert.deepEqual(o.missing_files, t2.missing);
  assert.equal(o.kvcache_bench.all_ranks_valid, false);
  assert.equal(o.kvcache_bench.rank_table.length, 4);
  const run = mergeRun([t1, t2], {
    runDatetime: 'x',
    npernode: 3,
    hostCount: 1,
    totalRanks: 3,
    trialsPerOption: 2,
    division: 'open',
    systemName: null,
  });
  assert.equal(run.partial_failure, true);
  assert.deepEqual(Object.keys(run.options), ['1']);
});

test('collect: a missing rank directory, a rank without a file and an unreadable file are missing_files, never a crash', async () => {
  await withTempDir(async (dir) => {
    const trial = join(dir, 'option_2', 'trial_1');
    for (const r of [0, 1, 3]) await mkdir(join(trial, `rank_${r}`), { recursive: true });
    await writeFile(join(trial, 'rank_0', 'kvcache_results_1.json'), JSON.stringify(rankDoc(R0)));
    await writeFile(join(trial, 'rank_3', 'kvcache_results_1.json'), '{"truncated": ');
    await writeFile(
      join(dir, 'run.json'),
      JSON.stringify({
        run_datetime: 't',
        npernode: 4,
        host_count: 1,
        total_ranks: 4,
        trials_per_option: 1,
        division: 'open',
        system_name: null,
      }),
    );
    const { trials, meta } = collectRun([dir], new Date(0));
    assert.equal(trials.length, 1);
    assert.equal(trials[0].option, '2');
    assert.deepEqual(
      trials[0].files.map((f) => f.rank),
      [0],
    );
    assert.equal(trials[0].missing.length, 3);
    assert.match(trials[0].missing[0], /rank_1\/kvcache_results_\*\.json: no results file/);
    assert.match(trials[0].missing[1], /rank_3\/kvcache_results_1\.json: not a readable results file/);
    assert.match(trials[0].missing[2], /rank_2\/kvcache_results_\*\.json: rank 2 wrote nothing/);
    const summary = mergeRun(trials, meta);
    assert.equal(summary.partial_failure, true);
    assert.equal(summary.total_ranks, 4);
    assert.equal(summary.options['2'].missing_files.length, 3);
  });
});

test("a host's device wrote more than its ranks: the file system's metadata for their new files is allowed, summed over the ranks, and nothing more", () => {
  const MiB = 1 << 20;
  // Host a: 2 GiB written by the ranks, their calibrations allow 150 + 100 MiB of metadata.
  const host = (deviceWritten: number, meta0: number | null | undefined, meta1: number | null | undefined) => {
    const f = trialFigures({
      option: '1',
      trial: 1,
      dir: '/r',
      files: [
        file({ ...R0, deviceRead: 3 * GiB, deviceWritten, ...(meta0 !== undefined ? { metadataWriteBytes: meta0 } : {}) }),
        file({ ...R1, deviceRead: 3 * GiB, deviceWritten, ...(meta1 !== undefined ? { metadataWriteBytes: meta1 } : {}) }),
      ].map((f) => {
        f.doc.kvcache_bench.validity.reasons = [];
        return f;
      }),
      missing: [],
    });
    // The fixture's own reasons (a short run) aside, all_ranks_valid follows the host's check.
    const a = f.device_per_host[0];
    assert.ok(a !== undefined);
    return { check: a.bytes_check, metadata: a.metadata_write_bytes, valid: f.all_ranks_valid };
  };
  assert.deepEqual(host(2 * GiB + 300 * MiB, 150 * MiB, 100 * MiB), { check: 'device_writes_metadata', metadata: 250 * MiB, valid: true });
  // Beyond the metadata and the 5 % tolerance on top: another writer.
  assert.deepEqual(host(2 * GiB + 400 * MiB, 150 * MiB, 100 * MiB), {
    check: 'device_writes_exceed_tool',
    metadata: 250 * MiB,
    valid: false,
  });
  // One rank's calibration disturbed (allows nothing), the other's 150 MiB: 300 MiB over is too much.
  assert.deepEqual(host(2 * GiB + 300 * MiB, 150 * MiB, null), { check: 'device_writes_exceed_tool', metadata: 150 * MiB, valid: false });
  // No calibration at all (slab, an object store): the rule of a run without metadata.
  assert.deepEqual(host(2 * GiB + 300 * MiB, undefined, undefined), { check: 'device_writes_exceed_tool', metadata: null, valid: false });
  assert.deepEqual(host(2 * GiB, 150 * MiB, 100 * MiB), { check: 'match', metadata: 250 * MiB, valid: true });
});

test("the merge's console names a host whose device bytes are not just its ranks' own, and passes over one that matches", () => {
  const trial = (deviceWritten: number): TrialInput => ({
    option: '1',
    trial: 1,
    dir: '/r',
    files: [file({ ...R0, deviceWritten, metadataWriteBytes: GiB / 4 }), file({ ...R1, deviceWritten, metadataWriteBytes: GiB / 4 })],
    missing: [],
  });
  const meta = {
    runDatetime: 'x',
    npernode: 2,
    hostCount: 1,
    totalRanks: 2,
    trialsPerOption: 1,
    division: 'open' as const,
    systemName: null,
  };
  const hostLine = (deviceWritten: number) =>
    summaryLines(mergeRun([trial(deviceWritten)], meta), 's.json').filter((l) => l.startsWith('  device a:'));
  assert.deepEqual(hostLine(2 * GiB + GiB / 4), [
    "  device a:nvme0n1 (ranks 0, 1): read 3.000 GiB against the ranks' 3.000 GiB, wrote 2.250 GiB against 2.000 GiB + up to 0.500 GiB of file-system metadata: device_writes_metadata",
  ]);
  assert.deepEqual(hostLine(2 * GiB), []);
});
