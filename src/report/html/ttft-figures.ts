// The modelled time-to-first-token figures `kv-cache compare` sets side by side (issue 23): a second
// table after the measured headline figures, so the two are never mixed. No trial statistic measures
// them, so their differences are never called significant.
import type { HeadlineFigure } from './headline.js';
import type { ReportRun } from './run-input.js';
import type { TtftClassJson } from '../ttft-schema.js';

const overall = (doc: ReportRun): TtftClassJson | undefined => {
  const t = doc.kvcache_bench.ttft_modelled;
  return t === undefined || 'not_modelled' in t ? undefined : t.overall;
};

const figure = (key: string, label: string, unit: string, digits: number, pick: (o: TtftClassJson) => number | null): HeadlineFigure => ({
  key,
  label,
  unit,
  digits,
  source: `kvcache_bench.ttft_modelled.overall (${key})`,
  value: (doc) => {
    const o = overall(doc);
    return o === undefined ? null : pick(o);
  },
});

export const TTFT_FIGURES: readonly HeadlineFigure[] = [
  figure('ttft_offload_p50_ms', 'TTFT with offload p50', 'ms', 1, (o) => o.ttft_offload_ms.p50),
  figure('ttft_offload_p99_ms', 'TTFT with offload p99', 'ms', 1, (o) => o.ttft_offload_ms.p99),
  figure('ttft_recompute_p50_ms', 'TTFT recompute p50', 'ms', 1, (o) => o.ttft_recompute_ms.p50),
  figure('ttft_speedup_p50', 'TTFT speedup p50', '×', 2, (o) => o.speedup?.p50 ?? null),
  figure('ttft_speedup_p5', 'TTFT speedup p5', '×', 2, (o) => o.speedup?.p5 ?? null),
  figure('ttft_offload_lost_pct', 'Offload lost', '% of hits', 1, (o) => (o.load_slower_share === null ? null : o.load_slower_share * 100)),
  figure('ttft_hits_read_gb_per_sec', 'Read rate of the hits', 'GB/s', 3, (o) =>
    o.delivered_read_bytes_per_sec === null ? null : o.delivered_read_bytes_per_sec / 1e9,
  ),
  figure('ttft_break_even_gb_per_sec', 'Break-even read rate', 'GB/s', 3, (o) =>
    o.break_even_read_bytes_per_sec === null ? null : o.break_even_read_bytes_per_sec / 1e9,
  ),
];

/** "h100-sxm, MFU 0.5" of each modelled run, or undefined when no run is modelled. */
export function ttftAssumptions(runs: ReadonlyArray<{ readonly doc: ReportRun }>): string | undefined {
  const seen = runs.flatMap((r, i) => {
    const t = r.doc.kvcache_bench.ttft_modelled;
    return t === undefined || 'not_modelled' in t ? [] : [`#${i + 1} ${t.gpu_profile}, MFU ${t.mfu}, TP ${t.tensor_parallel}`];
  });
  return seen.length === 0 ? undefined : seen.join('; ');
}
