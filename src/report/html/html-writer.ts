// Renders a ReportModel as one self-contained HTML file: uPlot's script and CSS are read from the
// installed package at run time and inlined, the charts' data travels in a JSON data island, and the
// headline, verdicts and tables are plain HTML (readable where scripts do not run, e.g. in a mail
// client). Nothing in the page refers to another file or to the network.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PALETTE } from './chart-spec.js';
import { compareFigures, ratioText } from './compare-table.js';
import { entryVerdict, formatFigure, headlineFiguresOf } from './headline.js';
import { isOption, isReplay } from './inputs.js';
import type { LoadedInput } from './inputs.js';
import type { ReportModel } from './model.js';
import type { Section, TableSpec } from './sections/section.js';
import { PAGE_SCRIPT } from './page-script.js';

/** uPlot's minified script and stylesheet, from node_modules. */
export interface ChartLibrary {
  readonly script: string;
  readonly css: string;
}

export function loadUplot(): ChartLibrary {
  const require = createRequire(import.meta.url);
  return {
    script: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Text that is safe inside a <script> element: no "</script" or "<!--" can end or confuse it. */
export function scriptSafe(s: string): string {
  return s.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** JSON inside a <script type="application/json">: every "<" escaped, so no tag can close it early. */
export function jsonIsland(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const STYLE = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1240px; padding: 16px 24px; color: #222; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 12px 0 4px; }
.meta { color: #555; font-size: 13px; }
.verdict { font-size: 18px; font-weight: 700; padding: 8px 12px; border-radius: 4px; margin: 12px 0 4px; }
.verdict.valid { background: #e6f4ea; color: #1e6b34; } .verdict.none { background: #f4f4f4; color: #555; } .verdict.not-valid { background: #fde8e8; color: #9b1c1c; border: 2px solid #9b1c1c; }
ul.reasons { margin: 4px 0 8px; } ul.reasons li { margin: 2px 0; } ul.reasons li.reason { color: #9b1c1c; } ul.reasons li.warning { color: #7a5b00; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 8px; margin: 8px 0; }
.figure { border: 1px solid #ddd; border-radius: 4px; padding: 8px 10px; }
.figure .value { font-size: 22px; font-weight: 600; } .figure .unit { color: #555; margin-left: 4px; } .figure .label { display: block; color: #555; font-size: 12px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
.chart-box h3 { font-weight: 600; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } details { margin: 12px 0; font-size: 14px; } summary { cursor: pointer; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.ns { color: #777; } .note { color: #666; font-style: italic; font-size: 13px; margin: 4px 0; }
.legend-runs span.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: middle; }
`;

function tableHtml(t: TableSpec): string {
  const head = `<tr>${t.header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  const table = `<table id="table-${escapeHtml(t.id)}">\n${head}\n${body}\n</table>`;
  if (t.collapsed === true)
    return `<details><summary><b>${escapeHtml(t.title)}</b> (${t.rows.length} rows)</summary>\n${table}\n</details>`;
  return `<h3>${escapeHtml(t.title)}</h3>\n${table}`;
}

function sectionHtml(s: Section): string {
  const charts =
    s.charts.length === 0
      ? ''
      : `<div class="charts">\n${s.charts
          .map(
            (c) =>
              `<div class="chart-box"><h3>${escapeHtml(c.title)}</h3><div class="chart" id="chart-${escapeHtml(c.id)}" data-chart="${escapeHtml(c.id)}"></div></div>`,
          )
          .join('\n')}\n</div>`;
  const notes = s.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('\n');
  return `<section id="section-${escapeHtml(s.id)}">\n<h2>${escapeHtml(s.title)}</h2>\n${notes}\n${charts}\n${s.tables.map(tableHtml).join('\n')}\n</section>`;
}

/** The validity verdict of an entry with a run's reasons (prominent) and warnings; a replay says it has none. */
function verdictHtml(entry: LoadedInput, index: number, several: boolean): string {
  const who = several ? `${escapeHtml(entry.label)}: ` : '';
  const verdict = entryVerdict(entry);
  const cls = verdict.valid === null ? 'none' : verdict.valid ? 'valid' : 'not-valid';
  const head = `<div class="verdict ${cls}" id="validity-${index}" data-valid="${String(verdict.valid)}">${who}${escapeHtml(verdict.text)}</div>`;
  if (!('doc' in entry)) return head;
  const v = entry.doc.kvcache_bench.validity;
  const items = [
    ...v.reasons.map((r) => `<li class="reason"><b>${escapeHtml(r.code)}</b>: ${escapeHtml(r.message)}</li>`),
    ...v.warnings.map((w) => `<li class="warning">(warning) <b>${escapeHtml(w.code)}</b>: ${escapeHtml(w.message)}</li>`),
  ];
  return `${head}\n${items.length > 0 ? `<ul class="reasons">${items.join('')}</ul>` : ''}`;
}

const figureAttrs = (key: string, run: number, value: number | null): string =>
  `data-figure="${escapeHtml(key)}" data-run="${run}" data-value="${value === null ? '' : String(value)}"`;

/** One entry: a tile per headline figure. */
function singleHeadline(run: LoadedInput): string {
  const tiles = compareFigures([run], headlineFiguresOf([run])).map(({ figure, values }) => {
    const v = values[0]?.value ?? null;
    return `<div class="figure" title="${escapeHtml(figure.source)}"><span class="value" id="fig-0-${figure.key}" ${figureAttrs(figure.key, 0, v)}>${formatFigure(
      v,
      figure.digits,
    )}</span><span class="unit">${escapeHtml(figure.unit)}</span><span class="label">${escapeHtml(figure.label)}</span></div>`;
  });
  return `<div class="figures">\n${tiles.join('\n')}\n</div>`;
}

/** Several runs: figures side by side and ratios against the first run, marked n.s. / ? as `kv-cache compare` does. */
function comparisonHeadline(runs: readonly LoadedInput[]): string {
  const head = `<tr><th>figure</th><th>unit</th>${runs.map((r, i) => `<th>#${i + 1} ${escapeHtml(r.label)}</th>`).join('')}${runs
    .slice(1)
    .map((_, i) => `<th>#${i + 2} ÷ #1</th>`)
    .join('')}</tr>`;
  const rows = compareFigures(runs, headlineFiguresOf(runs)).map(({ figure, values }) => {
    const cells = values.map(
      (v, i) =>
        `<td class="num"><span id="fig-${i}-${figure.key}" ${figureAttrs(figure.key, i, v.value)}>${formatFigure(v.value, figure.digits)}</span></td>`,
    );
    const ratios = values
      .slice(1)
      .map(
        (v, i) =>
          `<td class="num${v.significance === 'significant' ? '' : ' ns'}" id="ratio-${i + 1}-${figure.key}" data-significance="${v.significance}">${escapeHtml(ratioText(v))}</td>`,
      );
    return `<tr><td title="${escapeHtml(figure.source)}">${escapeHtml(figure.label)}</td><td>${escapeHtml(figure.unit)}</td>${cells.join('')}${ratios.join('')}</tr>`;
  });
  const note =
    '<p class="note">Ratios are each run ÷ run #1. n.s.: within twice the runs\' combined trial-to-trial coefficient of variation (kvcache_bench.trials); ?: significance unknown (a run without --trials, or a figure trials do not record).</p>';
  return `<table id="table-headline">\n${head}\n${rows.join('\n')}\n</table>\n${note}`;
}

/** What the run list says of an entry after its name. */
function entryFacts(e: LoadedInput): string {
  if (isReplay(e)) {
    const k = e.replay.kvcache_bench;
    return `replay of ${escapeHtml(e.replay.replay.trace)}, ${escapeHtml(k.storage_io_mode)} I/O on ${escapeHtml(
      k.storage_file_system,
    )}, measured ${k.measured_window_sec.toFixed(1)} s (stop: ${escapeHtml(k.stop_reason)}), kvcache-bench ${escapeHtml(k.version)}`;
  }
  if (isOption(e)) {
    const s = e.summary;
    return `MLPerf merged summary of ${escapeHtml(s.run_datetime)}: option ${escapeHtml(e.option)}, ${e.merged.rank_count} rank(s) on ${
      s.host_count
    } host(s), ${e.merged.trial_count} trial(s)${s.partial_failure ? ' — PARTIAL' : ''}`;
  }
  const k = e.doc.kvcache_bench;
  const rank = k.ranks == null ? '' : `, rank ${k.ranks.rank} of ${k.ranks.world_size} on ${escapeHtml(k.ranks.host)}`;
  return `${escapeHtml(k.model)}, ${escapeHtml(k.storage_io_mode)} I/O on ${escapeHtml(
    k.storage_file_system,
  )}, measured ${k.measured_window_sec.toFixed(1)} s (stop: ${escapeHtml(k.stop_reason)})${rank}, started ${escapeHtml(k.started_at)}, kvcache-bench ${escapeHtml(k.version)}`;
}

function runListHtml(runs: readonly LoadedInput[]): string {
  const items = runs.map((r, i) => {
    const color = runs.length > 1 ? `<span class="swatch" style="background:${PALETTE[i % PALETTE.length] ?? '#000'}"></span>` : '';
    return `<li>${color}<b>#${i + 1} ${escapeHtml(r.label)}</b> — ${entryFacts(r)}</li>`;
  });
  return `<ul class="legend-runs meta">${items.join('\n')}</ul>`;
}

/** The whole page. `generatedAt` is shown in the footer (passed in: a report is a function of its inputs). */
export function renderReportHtml(model: ReportModel, library: ChartLibrary, generatedAt: Date, version: string): string {
  const several = model.inputs.length > 1;
  const charts = model.sections.flatMap((s) => s.charts);
  const first = model.inputs[0];
  const headline = several || first === undefined ? comparisonHeadline(model.inputs) : singleHeadline(first);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="kvcache-bench ${escapeHtml(version)}">
<title>${escapeHtml(model.title)}</title>
<style>${library.css}</style>
<style>${STYLE}</style>
</head>
<body data-runs="${model.inputs.length}" data-charts="${charts.length}">
<h1>${escapeHtml(model.title)}</h1>
${runListHtml(model.inputs)}
<section id="section-headline">
<h2>Headline figures and validity</h2>
${model.inputs.map((r, i) => verdictHtml(r, i, several)).join('\n')}
${headline}
</section>
<noscript><p class="note">The charts need JavaScript; the figures and tables are readable without it.</p></noscript>
${model.sections.map(sectionHtml).join('\n')}
<p class="meta">Generated by kvcache-bench ${escapeHtml(version)} on ${escapeHtml(generatedAt.toISOString())}. Charts: uPlot (MIT), inlined. GiB = 2^30 bytes, MiB = 2^20.</p>
<script type="application/json" id="report-data">${jsonIsland({ charts })}</script>
<script>${scriptSafe(library.script)}</script>
<script>${scriptSafe(PAGE_SCRIPT)}</script>
</body>
</html>
`;
}
