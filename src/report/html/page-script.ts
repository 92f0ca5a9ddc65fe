// The script inlined into every report page: it draws each chart of the embedded data island with
// uPlot (inlined before it) and marks the chart's element once drawn (data-drawn, data-points,
// data-series), which the browser tests read. Plain ES2017, no modules: it runs from a file:// page
// with nothing fetched. Kept as source text here because it runs in the browser, not in Node.

export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var island = document.getElementById('report-data');
  var data = JSON.parse(island.textContent);
  // Nines → percentile text: 1 → "90%", 2 → "99%", 3 → "99.9%"; between whole nines one more
  // decimal than the nines begun (1.78 → "98.3%", 2.45 → "99.65%", 3.39 → "99.959%").
  function pctOfNines(v) {
    var p = 100 * (1 - Math.pow(10, -v));
    var whole = Math.abs(v - Math.round(v)) < 1e-9;
    var digits = whole ? Math.max(0, Math.round(v) - 2) : Math.max(1, Math.ceil(v) - 1);
    return p.toFixed(Math.min(digits, 6)) + '%';
  }
  function fmt(v, digits) {
    return v === null || v === undefined ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: digits });
  }
  // Ticks at whole nines (p0, p90, p99, …) and at the curve's end when it stops between two.
  function ninesSplits(u, axisIdx, min, max) {
    var out = [];
    for (var i = Math.ceil(min); i <= Math.floor(max); i++) out.push(i);
    if (max - Math.floor(max) > 0.3) out.push(max);
    return out;
  }
  // Linear axes start at zero: a bandwidth dip from 800 to 700 MiB/s must not look like a collapse.
  // A little room below zero so that a series of zeros (no evictions yet) is drawn whole, not
  // half-clipped along the plot's edge.
  function fromZero(u, min, max) {
    var lo = Math.min(0, min);
    var hi = max > lo ? max : lo + 1;
    return [lo - (hi - lo) * 0.02, hi + (hi - lo) * 0.05];
  }
  function draw(spec) {
    var el = document.getElementById('chart-' + spec.id);
    if (!el) return false;
    var nines = spec.xKind === 'nines';
    var width = Math.max(320, el.clientWidth || 560);
    var few = spec.data[0].length <= 2;
    var opts = {
      width: width,
      height: 260,
      scales: { x: { time: false }, y: spec.yLog ? { distr: 3 } : { range: fromZero } },
      axes: [
        nines
          ? { label: 'percentile', splits: ninesSplits, values: function (u, vals) { return vals.map(pctOfNines); } }
          : { label: spec.xLabel || 'seconds since the measured window started' },
        { label: spec.yLabel, size: 60 },
      ],
      legend: { live: true },
      series: [
        {
          label: nines ? 'percentile' : spec.xLabel || 't (s)',
          value: function (u, v) { return v === null ? '—' : nines ? pctOfNines(v) : fmt(v, 1); },
        },
      ].concat(
        spec.series.map(function (s) {
          return {
            label: s.label,
            stroke: s.color,
            dash: s.dash,
            width: 1.5,
            spanGaps: true,
            points: { show: few },
            value: function (u, v) { return fmt(v, 3); },
          };
        }),
      ),
      hooks: {
        draw: [
          function (u) {
            var first = el.getAttribute('data-drawn') !== 'true';
            el.setAttribute('data-drawn', 'true');
            el.setAttribute('data-points', String(u.data[0].length));
            el.setAttribute('data-series', String(u.series.length - 1));
            if (first) onFirstDraw();
          },
        ],
      },
    };
    new uPlot(opts, spec.data, el);
    return true;
  }
  // uPlot draws in a microtask after each constructor: the page is done when every chart has drawn
  // once. data-charts-drawn-ms is that moment in ms since navigation started (bench/report-size.ts).
  var errors = [];
  var pending = 0;
  var constructed = false;
  function finish() {
    document.body.setAttribute('data-charts-drawn-ms', String(Math.round(performance.now())));
    document.body.setAttribute('data-charts-done', errors.length === 0 ? 'ok' : 'errors');
  }
  function onFirstDraw() {
    pending--;
    if (constructed && pending === 0) finish();
  }
  data.charts.forEach(function (spec) {
    try {
      pending++;
      if (!draw(spec)) pending--;
    } catch (e) {
      pending--;
      errors.push(spec.id + ': ' + e);
      var el = document.getElementById('chart-' + spec.id);
      if (el) el.textContent = 'This chart could not be drawn: ' + e;
    }
  });
  constructed = true;
  if (pending === 0) finish();
  if (errors.length > 0) throw new Error('charts not drawn: ' + errors.join('; '));
})();
`;
