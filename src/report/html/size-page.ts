// The HTML page of `kv-cache size --html` (issue 33): the token hit rate over capacity on a log axis,
// one line per deployment, its ideal (unlimited) rate as a dashed line, the capacities reaching
// 50/90/95/99 % of the ideal as points, and a measured run's hit rate as a point when given; then the
// tables. Self-contained like the report (uPlot inlined, data in a JSON island, tables in plain HTML).
import type { SizeDeployment, SizeDocument } from '../size-report.js';
import { capacityText } from '../size-report.js';
import { PALETTE } from './chart-spec.js';
import { escapeHtml, jsonIsland, loadUplot, scriptSafe } from './html-writer.js';
import type { ChartLibrary } from './html-writer.js';

function title(d: SizeDeployment): string {
  if (d.pool === 'single') return 'one server';
  return d.pool === 'shared' ? `${d.servers} servers, shared pool` : `${d.servers} servers, private pools (${d.route ?? ''})`;
}

/** What the page script draws: x in GiB, one array per series (null where a series has no point). */
export interface SizeChartData {
  readonly x: number[];
  readonly series: Array<{ label: string; color: string; kind: 'line' | 'ideal' | 'points'; values: Array<number | null> }>;
}

export function sizeChartData(doc: SizeDocument): SizeChartData {
  const gib = (b: number): number => b / 2 ** 30;
  const xs = new Set<number>();
  for (const d of doc.deployments) {
    for (const p of d.curve) xs.add(p.capacity_bytes);
    for (const k of d.knees) xs.add(k.capacity_bytes);
  }
  if (doc.measured_run !== null) xs.add(doc.measured_run.capacity_bytes);
  const x = [...xs].filter((v) => v > 0).sort((a, b) => a - b);
  const series: SizeChartData['series'] = [];
  doc.deployments.forEach((d, i) => {
    const color = PALETTE[i % PALETTE.length] ?? '#333';
    const at = new Map(d.curve.map((p) => [p.capacity_bytes, p.token_hit_rate * 100]));
    // The line is exact at its own points; knees and the measured point add x values the line passes through.
    let last: number | null = null;
    const line = x.map((c) => {
      const v = at.get(c);
      if (v !== undefined) last = v;
      return v ?? (c > (d.curve.at(-1)?.capacity_bytes ?? 0) ? last : null);
    });
    series.push({ label: `${title(d)}: token hit rate %`, color, kind: 'line', values: line });
    series.push({
      label: `${title(d)}: ideal ${(d.ideal.token_hit_rate * 100).toFixed(2)} %`,
      color,
      kind: 'ideal',
      values: x.map(() => d.ideal.token_hit_rate * 100),
    });
    const knees = new Map(d.knees.map((k) => [k.capacity_bytes, k.token_hit_rate * 100]));
    series.push({ label: `${title(d)}: 50/90/95/99 % of the ideal`, color, kind: 'points', values: x.map((c) => knees.get(c) ?? null) });
  });
  const m = doc.measured_run;
  if (m !== null)
    series.push({
      label: 'measured run',
      color: '#000',
      kind: 'points',
      values: x.map((c) => (c === m.capacity_bytes ? m.token_hit_rate * 100 : null)),
    });
  return { x: x.map(gib), series };
}

const SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('size-data').textContent);
  var el = document.getElementById('size-chart');
  var series = [{ label: 'capacity GiB' }];
  data.series.forEach(function (s) {
    var o = { label: s.label, stroke: s.color, width: s.kind === 'line' ? 2 : 1, spanGaps: true };
    if (s.kind === 'ideal') o.dash = [6, 4];
    if (s.kind === 'points') { o.paths = function () { return null; }; o.points = { show: true, size: 9, fill: s.color }; }
    else o.points = { show: false };
    series.push(o);
  });
  var opts = {
    width: Math.min(1100, el.clientWidth || 1100), height: 460, series: series,
    scales: { x: { time: false, distr: 3 }, y: { range: [0, 100] } },
    axes: [{ label: 'capacity (GiB, log)' }, { label: 'token hit rate %' }],
  };
  new uPlot(opts, [data.x].concat(data.series.map(function (s) { return s.values; })), el);
  document.body.setAttribute('data-charts-done', '1');
})();
`;

function pointsTable(d: SizeDeployment): string {
  const head = ['capacity', 'token hit rate', 'block hit rate', 'read GiB/s (own rate)', 'read GiB/s (speed-up)', 'GPU-s saved / h'];
  const rows = d.points.map((p) =>
    [
      `${capacityText(p.capacity_bytes)}${p.requested ? ' *' : ''}`,
      `${(p.token_hit_rate * 100).toFixed(2)} %`,
      `${(p.block_hit_rate * 100).toFixed(2)} %`,
      p.read_bytes_per_sec === null ? 'n/a' : (p.read_bytes_per_sec / 2 ** 30).toFixed(3),
      p.read_bytes_per_sec_at_speedup === null ? 'n/a' : (p.read_bytes_per_sec_at_speedup / 2 ** 30).toFixed(3),
      p.gpu_seconds_saved_per_hour === null ? 'n/a' : p.gpu_seconds_saved_per_hour.toFixed(0),
    ]
      .map((c, i) => `<td${i > 0 ? ' class="num"' : ''}>${escapeHtml(c)}</td>`)
      .join(''),
  );
  return `<table><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>\n${rows.map((r) => `<tr>${r}</tr>`).join('\n')}</table>`;
}

function deploymentHtml(d: SizeDeployment): string {
  const knees = d.knees.map((k) => `${k.share_of_ideal * 100} %: ${capacityText(k.capacity_bytes)}`).join(' · ');
  const summary = d.no_reuse
    ? '<p class="note">No reuse: no block was asked twice, so the hit rate is 0 at every capacity.</p>'
    : `<p>Ideal (unlimited): ${(d.ideal.token_hit_rate * 100).toFixed(2)} % of tokens. Capacity reaching ${escapeHtml(knees)} of it. ` +
      `Exact from ${escapeHtml(capacityText(d.exact_from_bytes))}; ${d.distinct_blocks} distinct blocks, ${escapeHtml(capacityText(d.distinct_bytes))}.</p>`;
  return `<h2>${escapeHtml(title(d))}</h2>\n${summary}\n${pointsTable(d)}`;
}

const STYLE = `body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 16px 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 28px; }
.meta, .note { color: #555; font-size: 13px; } table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; } th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }`;

/** The whole page; `lib` is uPlot (loaded from node_modules unless a test passes its own). */
export function sizePage(doc: SizeDocument, lib: ChartLibrary = loadUplot()): string {
  const w = doc.workload;
  const named = w.source.path ?? w.source.kind;
  const source = typeof named === 'string' ? named : 'workload';
  const measured =
    doc.measured_run !== null
      ? `<p>Measured run ${escapeHtml(doc.measured_run.path)}: ${(doc.measured_run.token_hit_rate * 100).toFixed(2)} % at ${escapeHtml(capacityText(doc.measured_run.capacity_bytes))} (the black point).</p>`
      : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>KV cache sizing</title>
<style>${lib.css}</style><style>${STYLE}</style></head>
<body>
<h1>How much KV storage does this traffic need?</h1>
<p class="meta">${escapeHtml(source)} · ${escapeHtml(w.model)} · blocks of ${w.block_tokens} tokens · ${w.requests} requests, ${w.block_references} block references · kv-cache ${escapeHtml(doc.kvcache_bench.version)}</p>
<p>The exact LRU prefix hit rate at every capacity (one pass, no I/O; docs/sizing.md). Dashed: the ideal (unlimited) rate; points: the capacities reaching 50, 90, 95 and 99 % of it.</p>
${measured}
<div id="size-chart"></div>
<script type="application/json" id="size-data">${jsonIsland(sizeChartData(doc))}</script>
<script>${scriptSafe(lib.script)}</script>
<script>${scriptSafe(SCRIPT)}</script>
${doc.deployments.map(deploymentHtml).join('\n')}
<p class="note">* a capacity named by --capacities.</p>
</body></html>
`;
}
