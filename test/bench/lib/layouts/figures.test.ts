// bench:layouts' reader of a results file (bench/lib/layouts/figures.ts): block operations, their rates,
// device ÷ tool bytes, slab's lay-out apart, and metadata operations read when the build writes them
// and n/a (undefined) when it does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyHistogram } from '../../../../src/metrics/latency.js';
import { figuresOf, medians, opsPerCpuSec, opsPerWallSec, verdictOf } from '../../../../bench/lib/layouts/figures.js';
import type { RunFigures } from '../../../../bench/lib/layouts/figures.js';

/** 100 reads of 1–100 ms: the p95 is 95 ms (within the histogram's resolution). */
function readHistogram(): { count: number; sum_ms: number; encoded: string } {
  const h = new LatencyHistogram();
  for (let ms = 1; ms <= 100; ms++) h.recordMs(ms);
  return { count: 100, sum_ms: 5050, encoded: h.encode() };
}

/** A results document with the fields the reader uses; `extra` merged into kvcache_bench. */
function doc(extra: Record<string, unknown> = {}): unknown {
  return {
    summary: { cache_stats: { storage_read_p95_ms: 7 } },
    kvcache_bench: {
      measured_window_sec: 4,
      storage_layout: 'fanout',
      storage_bytes: { read_bytes: 2 ** 30, written_bytes: 2 ** 29, read_bytes_per_sec: 2 ** 28, write_bytes_per_sec: 2 ** 27 },
      device_io: { read_bytes: 2 ** 30, written_bytes: 2 ** 30 },
      cpu_seconds: { user: 1.5, system: 0.5, total: 2, gib_moved: 1.5, per_gib_moved: 2 / 1.5 },
      latency_histograms: { storage_read: readHistogram(), storage_write: { count: 60, sum_ms: 60, encoded: '' } },
      validity: { valid: false, reasons: [{ code: 'device_writes_exceed_tool', message: '…' }] },
      ...extra,
    },
  };
}

const figures = (d: unknown): RunFigures => {
  const f = figuresOf(d);
  if (typeof f === 'string') throw new Error(f);
  return f;
};

test('block operations are reads + writes; per CPU-second and per wall second of the window', () => {
  const f = figures(doc());
  assert.equal(f.blockOps, 160);
  assert.equal(opsPerCpuSec(f), 80);
  assert.equal(opsPerWallSec(f), 40);
  assert.equal(f.layout, 'fanout');
  assert.equal(f.cpuPerGib, 2 / 1.5);
  assert.ok(f.readP95Ms !== undefined && Math.abs(f.readP95Ms - 95) < 0.1, `p95 ${String(f.readP95Ms)}`);
  assert.equal(f.validity, 'NOT VALID device_writes_exceed_tool');
});

test('device ÷ tool bytes per direction; the verdict names the ±5 % miss and the ops goal only where asked', () => {
  const f = figures(doc());
  assert.equal(f.deviceReadRatio, 1);
  assert.equal(f.deviceWriteRatio, 2);
  const m = medians([f]);
  assert.equal(verdictOf(m, true), 'bytes ✗, ops/CPU-s ✗, valid 0/1');
  assert.equal(verdictOf(m, false), 'bytes ✗, valid 0/1');
  const agreeing = figures(doc({ device_io: { read_bytes: 1.04 * 2 ** 30, written_bytes: 0.96 * 2 ** 29 } }));
  assert.equal(verdictOf(medians([agreeing]), false), 'bytes ✓, valid 0/1');
});

test('metadata operations: per_gib_moved when present, total ÷ GiB moved without it, undefined on builds without the block', () => {
  assert.equal(figures(doc()).metadataPerGib, undefined);
  assert.equal(figures(doc({ metadata_ops: { total: 300, per_gib_moved: 123 } })).metadataPerGib, 123);
  assert.equal(figures(doc({ metadata_ops: { total: 300 } })).metadataPerGib, 200);
  assert.equal(figures(doc({ metadata_ops: 'garbled' })).metadataPerGib, undefined);
});

test("slab's lay-out is kept apart; without a histogram the summary's p95 stands in; no window is a reason, not figures", () => {
  const slab = figures(doc({ slab: { lay_out_bytes: 2 ** 30, lay_out_sec: 0.5 } }));
  assert.equal(slab.layOutBytes, 2 ** 30);
  assert.equal(slab.layOutSec, 0.5);
  const noHistogram = figures(doc({ latency_histograms: { storage_read: { count: 3, sum_ms: 3 } } }));
  assert.equal(noHistogram.readP95Ms, 7);
  assert.equal(noHistogram.blockOps, 3);
  assert.equal(figuresOf({ kvcache_bench: {} }), 'no measured window in the results');
});

test('medians over rounds skip figures a round lacks', () => {
  const a = figures(doc({ metadata_ops: { per_gib_moved: 10 } }));
  const b = figures(doc());
  const c = figures(doc({ metadata_ops: { per_gib_moved: 30 } }));
  const m = medians([a, b, c]);
  assert.equal(m.metadataPerGib, 20);
  assert.equal(m.rounds, 3);
  assert.equal(m.opsPerWallSec, 40);
});
