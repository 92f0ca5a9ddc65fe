// Size and render time of the HTML report of a 10-minute run: builds a synthetic results file with
// 600 per-second timeline and device-telemetry points (the shared contract's shape, made up
// deterministically; latency histograms of the hand-made test run, plus one large histogram per
// storage operation), writes its report, and opens it in Chromium `--rounds` times (fresh page each):
// navigation → load event, and navigation → every chart drawn once (the page's own
// data-charts-drawn-ms). Prints the median and every round. Options: --seconds 600 --rounds 5.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { LatencyHistogram } from '../src/metrics/latency.js';
import { reportHtml } from '../src/report/html/build-report.js';
import { loadUplot } from '../src/report/html/html-writer.js';
import { parseRunText } from '../src/report/html/run-input.js';
import { fixtureDoc } from '../test/report/html/docs.js';
import { withSyntheticSeries } from '../test/report/html/synthetic-series.js';
import { chromiumMissing, launchChromium } from '../test/util/chromium.js';
import { numberArgs } from './lib/args.js';
import { machineLine } from './lib/machine.js';

const opts = numberArgs({ seconds: 600, rounds: 5 });

/** A histogram with `n` samples spread like a storage latency (a body and a long tail). */
function bigHistogram(n: number, scaleMs: number): { encoded: string; count: number; sum_ms: number } {
  const h = new LatencyHistogram();
  let sum = 0;
  for (let i = 1; i <= n; i++) {
    const u = i / (n + 1);
    const ms = scaleMs * (1 + 3 * u ** 8 - Math.log(1 - u) * 0.3);
    h.recordMs(ms);
    sum += ms;
  }
  return { encoded: h.encode(), count: n, sum_ms: sum };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

console.log(machineLine());
console.log(`command: npm run bench:report -- --seconds ${opts.seconds} --rounds ${opts.rounds}`);
const base = fixtureDoc();
const doc = withSyntheticSeries(
  {
    ...base,
    kvcache_bench: {
      ...base.kvcache_bench,
      latency_histograms: {
        ...base.kvcache_bench.latency_histograms,
        storage_read: bigHistogram(120_000, 20),
        storage_read_device: bigHistogram(120_000, 18),
        storage_write: bigHistogram(36_000, 30),
        storage_write_device: bigHistogram(36_000, 27),
      },
    },
  },
  { seconds: opts.seconds, tiers: ['gpu', 'cpu', 'storage'], lastDurationSec: 0.37 },
);
const json = JSON.stringify(doc);
const t0 = performance.now();
const html = reportHtml(
  [{ path: 'synthetic.json', label: 'synthetic.json', doc: parseRunText(json, 'synthetic.json') }],
  new Date(),
  'bench',
);
const buildMs = performance.now() - t0;
const lib = loadUplot();
const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
console.log(`results file: ${kib(Buffer.byteLength(json))} (${opts.seconds} timeline + device points)`);
console.log(
  `report: ${kib(Buffer.byteLength(html))} (gzip ${kib(gzipSync(html).length)}); of which uPlot ${kib(Buffer.byteLength(lib.script))} script + ${kib(Buffer.byteLength(lib.css))} CSS`,
);
console.log(`report built in Node (parse, model, HTML): ${buildMs.toFixed(0)} ms`);

const skip = chromiumMissing();
if (skip !== undefined) {
  console.log(`render time not measured: ${skip}`);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'kv-report-size-'));
  const browser = await launchChromium();
  try {
    const path = join(dir, 'report.html');
    writeFileSync(path, html);
    const load: number[] = [];
    const drawn: number[] = [];
    let charts = 0;
    for (let r = 0; r < opts.rounds; r++) {
      const p = await browser.open(path);
      if (p.errors.length > 0 || p.external.length > 0) throw new Error(`page errors: ${[...p.errors, ...p.external].join('; ')}`);
      const t = await p.page.evaluate<{ load: number; drawn: number; charts: number }>(
        `({ load: performance.getEntriesByType('navigation')[0].loadEventEnd, drawn: Number(document.body.dataset.chartsDrawnMs), charts: Number(document.body.dataset.charts) })`,
      );
      load.push(t.load);
      drawn.push(t.drawn);
      charts = t.charts;
      await p.page.close();
    }
    const show = (xs: number[]): string => `median ${median(xs).toFixed(0)} ms (rounds: ${xs.map((x) => x.toFixed(0)).join(', ')})`;
    console.log(`Chromium, ${charts} charts: navigation → load event ${show(load)}`);
    console.log(`Chromium, ${charts} charts: navigation → every chart drawn ${show(drawn)}`);
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
