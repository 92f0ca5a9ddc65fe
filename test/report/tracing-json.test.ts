// A traced run's results keep what its fio job was distilled from: distill-fio on the results file
// rebuilds the run's own bssplit, rwmixread and iodepth whichever source each came from (block layer,
// the process's call sizes, the tool's own counts, the NFS mount), and a file from before schema
// 2.10.0 (no distill_inputs) is still read.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Bucket, LatencyTracingOutcome, TraceCapture } from '../../src/metrics/trace-capture.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import { runCli } from '../e2e/run-cli.js';
import { withTempDir } from '../util/temp-dir.js';
import { assertValidResults } from './validate-results.js';
import { runResultFixture } from './fixtures.js';

const b = (lo: number, count: number): Bucket => ({ lo, hi: lo * 2, count });

/** Block requests: 100 reads of 1 MiB, 900 writes of 4 KiB (another process's writeback, say). */
function capture(over: { vfsReads: number; vfsWrites: number }): TraceCapture {
  return {
    filters: { device: { kind: 'device', name: 'vda', major: 254, minor: 0, chain: ['vda'] }, pid: 42, syscalls: 'positioned' },
    windowSec: 3,
    histograms: {
      bssplit_read_kb: [b(1024, 100)],
      bssplit_write_kb: [b(4, 900)],
      vfs_read_us: over.vfsReads > 0 ? [b(64, over.vfsReads)] : [],
      vfs_write_us: over.vfsWrites > 0 ? [b(64, over.vfsWrites)] : [],
      vfs_read_kb: over.vfsReads > 0 ? [b(256, over.vfsReads)] : [],
      vfs_write_kb: over.vfsWrites > 0 ? [b(32, 1), b(2048, over.vfsWrites - 1)] : [],
    },
    scalars: {
      issued_read: 100,
      issued_write: 900,
      completed_read: 100,
      completed_write: 900,
      d2c_sum_us_read: 2e6,
      d2c_sum_us_write: 4e6,
    },
    truncated: false,
    unreadLines: 0,
  };
}

interface Case {
  readonly name: string;
  readonly tracing: LatencyTracingOutcome;
  /** Where the run's bssplit came from, and its rwmixread's source. */
  readonly sizes: string;
  readonly mix: RegExp;
}

const CASES: readonly Case[] = [
  // The block layer's read share (10 %) is far from the process's (80 %): bssplit from the calls.
  { name: 'call sizes', tracing: { capture: capture({ vfsReads: 80, vfsWrites: 20 }) }, sizes: 'vfs', mix: /read\/write system calls/ },
  // Too few calls beside 1,000 block requests: rwmixread from the tool's own counts.
  { name: "the tool's counts", tracing: { capture: capture({ vfsReads: 8, vfsWrites: 2 }) }, sizes: 'vfs', mix: /storage-tier operations/ },
  {
    name: 'the NFS mount',
    tracing: { capture: capture({ vfsReads: 80, vfsWrites: 20 }), nfs: { rsize: 1048576, wsize: 524288 } },
    sizes: 'nfs',
    mix: /read\/write system calls/,
  },
];

/** The ini below its first lines (which name who distilled it, from what). */
const body = (ini: string): string => ini.replace(/^(# fio job distilled by .*\n)(# model .*\n)?/, '');

test("distill-fio on a traced run's results rebuilds the run's own fio job, whatever each value came from", async () => {
  await withTempDir(async (dir) => {
    for (const [i, c] of CASES.entries()) {
      const doc = buildResultsJson({ ...runResultFixture(), latencyTracing: c.tracing });
      assertValidResults(doc);
      const fio = doc.kvcache_bench.latency_tracing?.fio;
      assert.ok(fio != null && doc.fio_workload !== undefined, c.name);
      assert.equal(fio.size_source, c.sizes, c.name);
      assert.match(doc.fio_workload, new RegExp(`^# rwmixread: from .*${c.mix.source}`, 'm'), c.name);
      const file = join(dir, `r${i}.json`);
      writeFileSync(file, JSON.stringify(doc));
      const again = await runCli(['distill-fio', file, '--stdout']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(body(again.stdout), body(doc.fio_workload), c.name);
      // A file from before 2.10.0 has no distill_inputs: still read, from the histograms alone.
      delete (doc.kvcache_bench.latency_tracing as { distill_inputs?: unknown }).distill_inputs;
      writeFileSync(file, JSON.stringify(doc));
      const old = await runCli(['distill-fio', file, '--stdout']);
      assert.equal(old.code, 0, old.stderr);
      assert.match(old.stdout, /^bssplit=/m);
    }
  });
});

test('distill-fio: distiller inputs out of range in a results file are refused: exit 2, the field named', async () => {
  await withTempDir(async (dir) => {
    const doc = buildResultsJson({ ...runResultFixture(), latencyTracing: { capture: capture({ vfsReads: 8, vfsWrites: 2 }) } });
    const tool = doc.kvcache_bench.latency_tracing?.distill_inputs?.tool_ops;
    assert.ok(tool != null);
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...doc,
        kvcache_bench: {
          ...doc.kvcache_bench,
          latency_tracing: {
            ...doc.kvcache_bench.latency_tracing,
            distill_inputs: { ...doc.kvcache_bench.latency_tracing?.distill_inputs, tool_ops: { ...tool, reads: -5 } },
          },
        },
      }),
    );
    const r = await runCli(['distill-fio', file, '--stdout']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.json: kvcache_bench\.latency_tracing\.distill_inputs\.tool_ops\.reads: /);
    assert.equal(r.stdout, '');
  });
});
