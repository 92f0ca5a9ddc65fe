// The fio distiller's rules on hand-made captures: shares summing to exactly 100, Little's law and its
// clamps, each source of request sizes, each capture warning, no size=; and fio --parse-only accepts
// every job we write (when fio is installed).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { captureFromOutput } from '../../src/telemetry/capture.js';
import type { TraceCapture } from '../../src/metrics/trace-capture.js';
import { bssplitShares, distillFio, fioSize, littleIodepth } from '../../src/telemetry/distill.js';
import type { DistillInput } from '../../src/telemetry/distill.js';
import type { Bucket } from '../../src/metrics/trace-capture.js';
import { hasControl } from '../../src/util/safe-text.js';
import { withTempDir } from '../util/temp-dir.js';

const b = (lo: number, count: number): Bucket => ({ lo, hi: lo === 0 ? 1 : lo * 2, count });

function capture(over: Partial<TraceCapture> = {}): TraceCapture {
  return {
    filters: { device: { kind: 'device', name: 'vda', major: 254, minor: 0, chain: ['vda'] }, pid: 42, syscalls: 'positioned' },
    windowSec: 10,
    histograms: {
      bssplit_read_kb: [b(4, 10), b(128, 30), b(1024, 60)],
      bssplit_write_kb: [b(1024, 40)],
      vfs_read_us: [b(64, 60)],
      vfs_write_us: [b(64, 40)],
    },
    scalars: {
      issued_read: 100,
      issued_write: 40,
      completed_read: 100,
      completed_write: 40,
      d2c_sum_us_read: 30e6,
      d2c_sum_us_write: 12e6,
    },
    truncated: false,
    unreadLines: 0,
    ...over,
  };
}

const distill = (c: TraceCapture, extra: Partial<DistillInput> = {}): ReturnType<typeof distillFio> =>
  distillFio({ capture: c, jobName: 'job', about: ['test'], ...extra });

const sharesSum = (bssplit: string): number[] =>
  bssplit.split(',').map((side) => side.split(':').reduce((a, e) => a + Number(e.split('/')[1]), 0));

test('bssplit: shares per direction sum to exactly 100 (largest remainder), sizes in fio syntax', () => {
  assert.deepEqual(bssplitShares([b(4, 1), b(8, 1), b(16, 1)]), [
    { kib: 4, pct: 34 },
    { kib: 8, pct: 33 },
    { kib: 16, pct: 33 },
  ]);
  // The reference's round-and-floor-at-1 gives 1+1+99 = 101 here; the tie for the last point goes to
  // the smaller size, and a share left at 0 is left out.
  assert.deepEqual(bssplitShares([b(4, 1), b(8, 1), b(1024, 198)]), [
    { kib: 4, pct: 1 },
    { kib: 1024, pct: 99 },
  ]);
  assert.deepEqual(bssplitShares([b(4, 1), b(1024, 999)]), [{ kib: 1024, pct: 100 }]);
  assert.deepEqual(bssplitShares([]), []);
  assert.equal(fioSize(0), '512');
  assert.equal(fioSize(4), '4k');
  assert.equal(fioSize(1024), '1m');
  assert.equal(fioSize(1536), '1536k');
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 1_000_000 }), { minLength: 1, maxLength: 20 }), (counts) => {
      const shares = bssplitShares(counts.map((c, i) => b(2 ** i, c)));
      const sum = shares.reduce((a, s) => a + s.pct, 0);
      return counts.every((c) => c === 0) ? shares.length === 0 : sum === 100 && shares.every((s) => s.pct > 0);
    }),
  );
});

test("iodepth: Little's law (device time ÷ window), clamped to [1, max]", () => {
  assert.deepEqual(littleIodepth(42e6, 10, 256), { exact: 4.2, iodepth: 4 });
  assert.equal(littleIodepth(1e3, 10, 256).iodepth, 1); // never 0, and not floored at 32 like the reference
  assert.equal(littleIodepth(5000e6, 10, 256).iodepth, 256);
  assert.equal(littleIodepth(5000e6, 10, 64).iodepth, 64);
  const d = distill(capture());
  assert.equal(d.iodepth, 4);
  assert.match(d.ini, /^iodepth=4$/m);
  assert.match(d.ini, /# iodepth: Little's law: device time 42\.000 s ÷ window 10\.000 s = 4\.20 → 4 \(clamped to \[1, 256\]\)/);
  assert.equal(distill(capture(), { maxIodepth: 2 }).iodepth, 2);
  assert.equal(distill(capture(), { windowSec: 2 }).iodepth, 21);
});

test('block sizes when both directions were captured and the shares agree; rwmixread from the application', () => {
  const d = distill(capture());
  assert.equal(d.sizeSource, 'block');
  assert.equal(d.bssplit, '4k/10:128k/30:1m/60,1m/100');
  assert.deepEqual(sharesSum(d.bssplit), [100, 100]);
  assert.equal(d.rwmixread, 60); // vfs 60 reads : 40 writes
  assert.deepEqual(d.warnings, []);
  assert.doesNotMatch(d.ini, /^size=/m);
  assert.match(d.ini, /^# bssplit \(reads,writes\): from the block layer/m);
  assert.match(d.ini, /^# rwmixread: from the process's read\/write system calls/m);
});

test('sizes from the NFS mount, then the call sizes, then 4k, when the block layer cannot be used', () => {
  const noWrites = capture({
    histograms: { ...capture().histograms, bssplit_write_kb: [] },
    scalars: { issued_read: 100, issued_write: 0 },
  });
  assert.equal(distill(noWrites, { nfs: { rsize: 1048576, wsize: 524288 } }).bssplit, '1m/100,512k/100');
  assert.equal(distill(noWrites, { nfs: { rsize: 1048576, wsize: 524288 } }).sizeSource, 'nfs');
  const withCalls = capture({
    histograms: { ...noWrites.histograms, vfs_read_kb: [b(4096, 3)], vfs_write_kb: [b(4096, 1), b(8, 1)] },
    scalars: noWrites.scalars,
  });
  const v = distill(withCalls);
  assert.equal(v.sizeSource, 'vfs');
  assert.equal(v.bssplit, '4m/100,4m/50:8k/50');
  assert.match(v.ini, /the block layer did not capture every direction the application used/);
  const nothing = distill(noWrites);
  assert.equal(nothing.sizeSource, 'default');
  assert.equal(nothing.bssplit, '4k/100,4k/100');
  assert.ok(nothing.warnings.includes('no request sizes were captured: bssplit is a 4k placeholder'));
  // A read share more than 40 points from the application's also rules the block layer out.
  const far = capture({ histograms: { ...capture().histograms, vfs_read_us: [b(64, 5)], vfs_write_us: [b(64, 95)] } });
  const f = distill(far);
  assert.equal(f.sizeSource, 'default');
  assert.match(f.ini, /the block read share 71\.4 % is more than 40 points from the application's 5\.0 %/);
});

test('capture warnings: nothing at the block layer, >15 points apart, issues vs completions >25 % apart, truncated', () => {
  const empty = distill(capture({ histograms: { vfs_read_us: [b(64, 6)], vfs_write_us: [b(64, 4)] }, scalars: {} }));
  assert.match(empty.warnings[0] ?? '', /^the block layer saw no requests on vda \(254:0\)/);
  const apart = distill(capture({ histograms: { ...capture().histograms, vfs_read_us: [b(64, 50)], vfs_write_us: [b(64, 50)] } }));
  assert.deepEqual(apart.warnings, [
    "the block layer's read share (71.4 %) differs from the application's (50.0 %) by more than 15 points: other processes share the device, or the page cache absorbed I/O",
  ]);
  assert.equal(apart.sizeSource, 'block'); // 21.4 points: warned, still within the 40-point rule
  const lost = distill(capture({ scalars: { ...capture().scalars, completed_read: 50, completed_write: 10 } }));
  assert.deepEqual(lost.warnings, [
    'block issues (140) and completions (60) are more than 25 % apart: events were lost, or the window cut through long requests',
  ]);
  assert.match(distill(capture({ truncated: true })).warnings[0] ?? '', /cut off/);
  const noWindow = distill(capture({ windowSec: null }));
  assert.equal(noWindow.iodepth, 1);
  assert.match(noWindow.ini, /^# WARNING: no capture window/m);
});

test('rwmixread falls back to the tool counts, then the block layer', () => {
  const noCalls = capture({ histograms: { bssplit_read_kb: [b(4, 100)], bssplit_write_kb: [b(4, 40)] } });
  assert.equal(distill(noCalls, { tool: { reads: 3, writes: 1, source: 'tool ops' } }).rwmixread, 75);
  assert.equal(distill(noCalls).rwmixread, 71);
  assert.match(distill(noCalls).ini, /rwmixread: from the block layer's requests/);
  // A few calls beside many block requests (an io_submit engine's config reads) are not its I/O.
  const fewCalls = capture({ histograms: { ...noCalls.histograms, vfs_read_us: [b(64, 13)] } });
  assert.equal(distill(fewCalls).rwmixread, 71);
});

const hasFio = ((): boolean => {
  try {
    execFileSync('fio', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test(
  'fio --parse-only accepts every job written here, and the recorded run',
  { skip: hasFio ? false : 'fio is not installed' },
  async () => {
    const recorded = captureFromOutput(
      readFileSync(new URL('../../../test/telemetry/fixtures/kv-cache-run.bpftrace.txt', import.meta.url), 'utf8'),
      capture().filters,
      1.6,
    );
    const jobs = [
      distill(capture()),
      distill(capture({ windowSec: null })),
      distill(capture({ histograms: {}, scalars: {} })),
      distill(capture(), { nfs: { rsize: 65536, wsize: 65536 } }),
      distill(recorded),
    ];
    assert.deepEqual(sharesSum(jobs[4]?.bssplit ?? ''), [100, 100]);
    await withTempDir(async (dir) => {
      jobs.forEach((j, i) => {
        const file = join(dir, `job-${i}.ini`);
        writeFileSync(file, j.ini);
        execFileSync('fio', ['--parse-only', file], { stdio: 'pipe' });
      });
    });
  },
);

test('text from inputs stays in one comment line: a block filter with newlines cannot add a fio job', () => {
  const hostile = 'nvme0n1\n[pwn]\nexec_prerun=sh -c id\r\u001b]52;c;aWQ=\u0007';
  const { ini } = distill(capture({ filters: { device: { kind: 'recorded', text: hostile }, pid: 42, syscalls: 'positioned' } }), {
    about: ['from /tmp/x\n[evil]\nexec_postrun=id'],
    jobName: 'a]\nb',
  });
  const lines = ini.split('\n');
  // Only the two sections the distiller means, and every other line is a comment or one of its keys.
  assert.deepEqual(
    lines.filter((l) => l.startsWith('[')),
    ['[global]', '[a_\\nb]'],
  );
  assert.deepEqual(
    lines.filter((l) => l.includes('exec_') && !l.startsWith('#')),
    [],
  );
  assert.ok(lines.includes('# from /tmp/x\\n[evil]\\nexec_postrun=id'));
  assert.ok(
    lines.some((l) => l.startsWith('# block filter: ') && l.includes('nvme0n1\\n[pwn]\\nexec_prerun=sh -c id\\r\\e]52;c;aWQ=\\x07')),
  );
  assert.equal(hasControl(ini.replaceAll('\n', '')), false);
});

test('warnings that quote the block filter are inert (they are printed on the console)', () => {
  const hostile = 'vda\u001b]52;c;aWQ=\u0007\nx';
  const { warnings } = distill(
    capture({
      filters: { device: { kind: 'recorded', text: hostile }, pid: 42, syscalls: 'positioned' },
      histograms: { vfs_read_us: [b(64, 60)], vfs_write_us: [b(64, 40)] },
      scalars: {},
    }),
  );
  assert.ok(warnings.some((w) => w.includes('vda\\e]52;c;aWQ=\\x07\\nx')));
  assert.equal(
    warnings.some((w) => hasControl(w)),
    false,
  );
});
