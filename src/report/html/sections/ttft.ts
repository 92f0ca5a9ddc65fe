// Time to first token with and without KV offload (issue 23): MODELLED from the run's measured queue
// waits and hit loads plus the prefill compute model (kvcache_bench.ttft_modelled). Two charts by
// prompt length — mean TTFT offload vs recompute, and the read rate the hits got vs the break-even rate
// — and a table per QoS class. Runs without the block (--gpu-profile none, older files) are named.
import { makeChart } from '../chart-spec.js';
import type { ChartSpec } from '../chart-spec.js';
import type { LoadedRun, ReportRun } from '../run-input.js';
import { compact, missingNote, seriesOf } from './members.js';
import type { Member } from './members.js';
import type { Section } from './section.js';
import type { TtftClassJson, TtftModelledJson } from '../../ttft-schema.js';

type Modelled = Extract<TtftModelledJson, { overall: unknown }>;

const modelledOf = (doc: ReportRun): Modelled | undefined => {
  const t = doc.kvcache_bench.ttft_modelled;
  return t === undefined || 'not_modelled' in t ? undefined : t;
};

/** A member drawing one value per prompt-length bin, at the bin's geometric middle (x is log-like). */
const perBin = (label: string, y: (b: Modelled['by_context'][number]) => number | null): Member => ({
  label,
  pick: (doc) => {
    const bins = modelledOf(doc)?.by_context;
    if (bins === undefined || bins.length === 0) return undefined;
    return { x: bins.map((b) => Math.round(Math.sqrt(Math.max(1, b.from_tokens) * b.to_tokens))), y: bins.map(y) };
  },
});

const gbps = (v: number | null): number | null => (v === null ? null : v / 1e9);
const ms3 = (s: TtftClassJson['ttft_offload_ms']): string => `${s.p50.toFixed(1)} / ${s.p95.toFixed(1)} / ${s.p99.toFixed(1)}`;
const orNa = (v: number | null, f: (x: number) => string): string => (v === null ? 'n/a' : f(v));

function classRow(runLabel: string[], cls: string, c: TtftClassJson): string[] {
  return [
    ...runLabel,
    cls,
    String(c.requests),
    String(c.requests_with_hits),
    ms3(c.ttft_offload_ms),
    ms3(c.ttft_recompute_ms),
    c.speedup === null ? 'n/a' : `${c.speedup.p5.toFixed(2)} / ${c.speedup.p50.toFixed(2)}`,
    orNa(c.load_slower_share, (s) => `${(s * 100).toFixed(1)} %`),
    orNa(c.delivered_read_bytes_per_sec, (v) => (v / 1e9).toFixed(2)),
    orNa(c.break_even_read_bytes_per_sec, (v) => (v / 1e9).toFixed(2)),
  ];
}

export function ttftSection(runs: readonly LoadedRun[]): Section {
  const modelledRuns = runs.filter((r) => modelledOf(r.doc) !== undefined);
  const first = modelledRuns[0] === undefined ? undefined : modelledOf(modelledRuns[0].doc);
  const assumption =
    first === undefined ? '' : ` — ${first.gpu_name}, ${first.bf16_dense_tflops} TFLOP/s × MFU ${first.mfu} × TP ${first.tensor_parallel}`;
  const charts: ChartSpec[] = compact([
    makeChart(
      {
        id: 'ttft-by-context',
        title: `Mean time to first token by prompt length, offload vs recompute (MODELLED${assumption})`,
        xKind: 'seconds',
        xLabel: 'prompt tokens',
        yLabel: 'ms (modelled)',
        yLog: true,
      },
      seriesOf(runs, [perBin('with offload', (b) => b.mean_ttft_offload_ms), perBin('recompute', (b) => b.mean_ttft_recompute_ms)]),
    ),
    makeChart(
      {
        id: 'ttft-break-even',
        title: 'Read rate the hits got vs the break-even rate, by prompt length (above the break-even line, loading beats recomputing)',
        xKind: 'seconds',
        xLabel: 'prompt tokens',
        yLabel: 'GB/s',
      },
      seriesOf(runs, [
        perBin('delivered to the hits (measured)', (b) => gbps(b.delivered_read_bytes_per_sec)),
        perBin('break-even (modelled)', (b) => gbps(b.break_even_read_bytes_per_sec)),
      ]),
    ),
  ]);
  const rows = modelledRuns.flatMap((r) => {
    const t = modelledOf(r.doc);
    if (t === undefined) return [];
    const who = runs.length > 1 ? [r.label] : [];
    return [classRow(who, 'all', t.overall), ...Object.entries(t.by_qos).map(([cls, c]) => classRow(who, cls, c))];
  });
  const header = [
    ...(runs.length > 1 ? ['run'] : []),
    'class',
    'requests',
    'with hits',
    'offload p50/p95/p99 ms',
    'recompute p50/p95/p99 ms',
    'speedup p5/p50',
    'offload lost',
    'delivered GB/s',
    'break-even GB/s',
  ];
  const reasons = runs.flatMap((r) => {
    const t = r.doc.kvcache_bench.ttft_modelled;
    return t !== undefined && 'not_modelled' in t ? [`${r.label}: not modelled (${t.not_modelled}).`] : [];
  });
  return {
    id: 'ttft',
    title: 'Time to first token, offload vs recompute (MODELLED: measured loads + modelled prefill compute, docs/ttft.md)',
    charts,
    tables: rows.length === 0 ? [] : [{ id: 'ttft', title: 'Modelled TTFT per QoS class', header, rows }],
    notes: [
      ...reasons,
      ...missingNote('Modelled TTFT', runs, (doc) => doc.kvcache_bench.ttft_modelled !== undefined),
      ...(charts.length === 0 && rows.length > 0 ? ['Modelled TTFT: no prompt-length bin to draw.'] : []),
    ],
  };
}
