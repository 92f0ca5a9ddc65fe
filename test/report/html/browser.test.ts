// The HTML report in a real browser (Debian's Chromium, headless, network cut off): a report of a real
// short run and a comparison of two real runs open without console or page errors and without any
// non-file request, every chart the page declares is drawn with data (its canvas shows its series'
// colours), the headline numbers on the page equal the results JSON's, and a screenshot of each
// is written to dist/test-output/. Charts that must exist for any real run: the storage read and write
// latency distributions (from the histograms every results file has); per-second charts are checked
// whenever the file has the timeline.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { reportHtml } from '../../../src/report/html/build-report.js';
import type { ResultsDocument } from '../../../src/report/results-schema.js';
import { inTempDir, runCli, smallWorkloadArgs } from '../../e2e/run-cli.js';
import { readValidResults } from '../validate-results.js';
import { chromiumMissing, launchChromium } from '../../util/chromium.js';
import type { OpenedPage } from '../../util/chromium.js';
import { fixtureDocWithSeries, loaded } from './docs.js';

const OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/', import.meta.url)); // dist/test-output
const ALWAYS = ['dist-storage-read', 'dist-storage-write'];

interface DrawnChart {
  id: string;
  drawn: string | null;
  points: number;
  series: number;
  /** Canvas pixels close to one of the series' colours (series can overlap: all-zero evictions). */
  seriesPixels: number;
}

// Page-side code as source text: it runs in the browser (the test build has no DOM types).
/** Every chart element of the page, with what uPlot drew into it. */
const DRAWN_CHARTS = String.raw`(() => {
  const specs = JSON.parse(document.getElementById('report-data').textContent).charts;
  return [...document.querySelectorAll('.chart')].map((el) => {
    const id = el.dataset.chart || '';
    const spec = specs.find((s) => s.id === id);
    const colours = (spec ? spec.series : []).map((s) => [1, 3, 5].map((i) => parseInt(s.color.slice(i, i + 2), 16)));
    const canvas = el.querySelector('canvas');
    let seriesPixels = 0;
    if (canvas) {
      const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < px.length; i += 4)
        if (px[i + 3] > 128 && colours.some(([r, g, b]) => Math.abs(px[i] - r) < 40 && Math.abs(px[i + 1] - g) < 40 && Math.abs(px[i + 2] - b) < 40)) seriesPixels++;
    }
    return { id, drawn: el.getAttribute('data-drawn'), points: Number(el.dataset.points || 0), series: Number(el.dataset.series || 0), seriesPixels };
  });
})()`;

/** Text of every headline figure of run RUN, by figure key, and the run's validity attribute. */
const headlineOf = (run: number): string => String.raw`(() => ({
  figures: Object.fromEntries([...document.querySelectorAll('[data-figure][data-run="${run}"]')].map((el) => [el.dataset.figure, el.textContent])),
  valid: document.getElementById('validity-${run}').dataset.valid,
}))()`;

async function assertChartsDrawn(p: OpenedPage, docs: readonly ResultsDocument[]): Promise<string[]> {
  const charts = await p.page.evaluate<DrawnChart[]>(DRAWN_CHARTS);
  const declared = Number(await p.page.evaluate<string>('document.body.dataset.charts'));
  assert.equal(charts.length, declared);
  for (const c of charts) {
    assert.equal(c.drawn, 'true', `${c.id} drawn`);
    assert.ok(c.points > 0 && c.series > 0, `${c.id} has data (${c.points} points, ${c.series} series)`);
    assert.ok(c.seriesPixels > 20, `${c.id}: canvas shows its series (${c.seriesPixels} pixels in their colours)`);
  }
  const ids = charts.map((c) => c.id);
  for (const id of ALWAYS) assert.ok(ids.includes(id), `${id} present`);
  // With the timeline (after issue 15 item 1), its charts must be there too.
  if (docs.some((d) => ((d.kvcache_bench as { timeline?: { points: unknown[] } }).timeline?.points.length ?? 0) > 0))
    for (const id of ['bandwidth-storage', 'latency-read']) assert.ok(ids.includes(id), `${id} present with a timeline`);
  return ids;
}

/** The headline numbers shown for run `run` equal the JSON's (to the digits shown). */
async function assertHeadline(p: OpenedPage, doc: ResultsDocument, run: number): Promise<void> {
  const { figures: shown, valid } = await p.page.evaluate<{ figures: Record<string, string>; valid: string }>(headlineOf(run));
  const device = doc.kvcache_bench.device_io;
  const expected: Record<string, number | null> = {
    storage_read_gib_per_sec: doc.kvcache_bench.storage_bytes.read_gib_per_sec,
    storage_write_gib_per_sec: doc.kvcache_bench.storage_bytes.write_gib_per_sec,
    storage_read_device_p95_ms: doc.summary.cache_stats.storage_read_device_p95_ms ?? null,
    storage_read_device_p99_ms: doc.summary.cache_stats.storage_read_device_p99_ms ?? null,
    requests_per_second: doc.summary.requests_per_second,
    tokens_per_second: doc.summary.avg_throughput_tokens_per_sec,
    cache_hit_rate: doc.summary.cache_stats.cache_hit_rate * 100,
    device_read_gib: device === null ? null : device.read_bytes / 2 ** 30,
    device_written_gib: device === null ? null : device.written_bytes / 2 ** 30,
  };
  assert.deepEqual(Object.keys(shown).sort(), Object.keys(expected).sort());
  for (const [key, value] of Object.entries(expected)) {
    const text = shown[key] ?? '';
    if (value === null) {
      assert.equal(text, 'n/a', key);
      continue;
    }
    const digits = text.split('.')[1]?.length ?? 0;
    assert.equal(text.replace(/,/g, ''), value.toFixed(digits), `${key}: page ${text}, JSON ${value}`);
  }
  assert.equal(valid, String(doc.kvcache_bench.validity.valid));
}

async function realRun(dir: string, name: string, extra: readonly string[]): Promise<{ path: string; doc: ResultsDocument }> {
  const path = join(dir, `${name}.json`);
  const args = [...(await smallWorkloadArgs(dir)), '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--output', path, ...extra];
  const r = await runCli(args, { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  return { path, doc: await readValidResults(path) };
}

const skip = chromiumMissing();
if (skip !== undefined) process.stdout.write(`# skipping the browser tests: ${skip}\n`);

test('HTML report of a real run and of a two-run comparison, in Chromium', { skip, timeout: 180_000 }, () =>
  inTempDir(async (dir) => {
    const direct = await realRun(dir, 'direct-2u', ['--num-users', '2', '--io-mode', 'direct']);
    const buffered = await realRun(dir, 'buffered-2u', ['--num-users', '2', '--io-mode', 'buffered']);
    const one = join(dir, 'one.html');
    const two = join(dir, 'two.html');
    assert.equal((await runCli(['report', direct.path, '-o', one])).code, 0);
    const cmp = await runCli(['compare', direct.path, buffered.path, '--html', two]);
    assert.equal(cmp.code, 0, cmp.stderr);
    for (const html of [one, two]) assert.deepEqual(readFileSync(html, 'utf8').match(/\b(src|href)\s*=\s*["']?(https?:)?\/\//gi), null);

    mkdirSync(OUTPUT_DIR, { recursive: true });
    const browser = await launchChromium();
    try {
      const single = await browser.open(one);
      assert.deepEqual(single.errors, []);
      assert.deepEqual(single.external, []);
      await assertChartsDrawn(single, [direct.doc]);
      await assertHeadline(single, direct.doc, 0);
      await single.page.screenshot({ path: join(OUTPUT_DIR, 'report-one-run.png'), fullPage: true });

      const both = await browser.open(two);
      assert.deepEqual(both.errors, []);
      assert.deepEqual(both.external, []);
      const ids = await assertChartsDrawn(both, [direct.doc, buffered.doc]);
      assert.ok(ids.includes('dist-request'));
      await assertHeadline(both, direct.doc, 0);
      await assertHeadline(both, buffered.doc, 1);
      await both.page.screenshot({ path: join(OUTPUT_DIR, 'report-compare.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }),
);

test(
  'HTML report of files with the per-second series (contract-exact, made up), in Chromium: every per-second chart drawn',
  { skip, timeout: 120_000 },
  () =>
    inTempDir(async (dir) => {
      const withDevice = fixtureDocWithSeries({ seconds: 30, lastDurationSec: 0.4, tiers: ['gpu', 'cpu', 'storage'] });
      const quiet = fixtureDocWithSeries({ seconds: 20 }, false);
      for (const p of quiet.kvcache_bench.timeline.points) {
        p.evictions = 0; // all-zero series overlap: each chart must still show its lines
        for (const t of Object.values(p.tiers)) t.evictions = 0;
      }
      const html = reportHtml([loaded(withDevice, 'a.json'), loaded(quiet, 'b.json')], new Date(), 'test');
      const path = join(dir, 'series.html');
      writeFileSync(path, html);
      const browser = await launchChromium();
      try {
        const page = await browser.open(path);
        assert.deepEqual(page.errors, []);
        assert.deepEqual(page.external, []);
        const ids = await assertChartsDrawn(page, [withDevice, quiet]);
        for (const id of [
          'bandwidth-gpu',
          'iops-storage',
          'latency-write',
          'occupancy',
          'evictions',
          'device-utilization',
          'device-request-size',
        ])
          assert.ok(ids.includes(id), id);
        await assertHeadline(page, withDevice, 0);
        await page.page.screenshot({ path: join(OUTPUT_DIR, 'report-series.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    }),
);
