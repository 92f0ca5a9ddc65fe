// The live view rendered into fake streams: on a terminal the exact dashboard, redrawn in place; in a
// log no escape byte and one plain line per 10 s with the figures of those 10 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProgressSnapshot } from '../../src/metrics/progress.js';
import type { TimelineSample } from '../../src/metrics/timeline.js';
import { LiveView, dashboardLines, dashboardSnapshot } from '../../src/report/live.js';
import { MiB } from '../../src/util/units.js';

class FakeStream {
  text = '';
  constructor(readonly isTTY: boolean) {}
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

const latency = (p95: number | null) => ({ count: p95 === null ? 0 : 9, p50: p95, p95, p99: p95, max: p95 });

/** The snapshot of second `t`: 100 MiB read and 20 MiB written in it, 4 requests. */
function snapshot(t: number, over: Partial<TimelineSample> = {}): ProgressSnapshot {
  const second: TimelineSample = {
    t_sec: t,
    duration_sec: 1,
    requests_completed: 4,
    tokens_per_sec: 900,
    hit_rate: 0.75,
    users: 8,
    in_flight_ops: 5,
    queue_wait_ms_p95: 0.5,
    evictions: 0,
    tiers: {
      cpu: { read_bytes: 0, write_bytes: 0, read_ops: 0, write_ops: 0, occupancy_bytes: 192 * MiB, evictions: 0 },
      storage: { read_bytes: 100 * MiB, write_bytes: 20 * MiB, read_ops: 3, write_ops: 1, occupancy_bytes: 3 * 1024 * MiB, evictions: 0 },
    },
    storage_read_latency_ms: latency(12.345),
    storage_write_latency_ms: latency(null),
    ...over,
  };
  return {
    elapsedSec: t,
    durationSec: 60,
    requestsCompleted: 4 * t,
    latest: {
      second,
      device: {
        t_sec: t,
        duration_sec: 1,
        read_iops: 300,
        write_iops: 20,
        read_bytes_per_sec: 0,
        write_bytes_per_sec: 0,
        in_flight: 3,
        utilization_pct: 87.4,
        avg_queue_depth: 6.25,
        avg_read_request_bytes: null,
        avg_write_request_bytes: null,
        read_await_ms: null,
        write_await_ms: null,
      },
      tierLimitBytes: { cpu: 256 * MiB, storage: Number.POSITIVE_INFINITY },
    },
  };
}

const FRAME_12 = [
  'kv-cache [  12 s / 60 s, 48 s left]  users 8  requests 48',
  '  last second: storage read 100.0 MiB/s  write 20.0 MiB/s  read p95 12.35 ms',
  '               4.0 requests/s  hit rate 75.0 %  in flight 5',
  '  cache fill:  cpu 75 % (0.19 GiB)  storage 3.00 GiB',
  '  device:      87 % busy, queue depth 6.3',
];

test('the dashboard shows the last second: bandwidth, read p95, requests/s, hit rate, in flight, fill, device, time', () => {
  assert.deepEqual(dashboardLines(snapshot(12)), FRAME_12);
  const quiet = dashboardLines({ ...snapshot(3, { hit_rate: null, storage_read_latency_ms: latency(null) }), latest: undefined });
  assert.deepEqual(quiet, [
    'kv-cache [   3 s / 60 s, 57 s left]  users 0  requests 12',
    '  last second: storage read 0.0 MiB/s  write 0.0 MiB/s  read p95 n/a',
    '               0.0 requests/s  hit rate n/a  in flight 0',
    '  cache fill:  n/a',
    '  device:      n/a',
  ]);
});

test('on a terminal each second redraws the frame in place', () => {
  const out = new FakeStream(true);
  const view = new LiveView(out);
  view.update(snapshot(11));
  view.update(snapshot(12));
  view.finish();
  const draw = (lines: readonly string[]): string => lines.map((l) => `\u001b[2K${l}\n`).join('');
  const frame11 = dashboardLines(snapshot(11));
  assert.equal(out.text, `${draw(frame11)}\u001b[J\u001b[5F${draw(FRAME_12)}\u001b[J`);
});

test('not a terminal: no escape codes, one line every 10 s with those 10 s of traffic', () => {
  const out = new FakeStream(false);
  const view = new LiveView(out);
  for (let t = 1; t <= 25; t++)
    view.update(
      snapshot(t, t === 10 ? { tiers: { storage: { ...snapshot(1).latest!.second.tiers.storage!, read_bytes: 1100 * MiB } } } : {}),
    );
  view.finish();
  assert.ok(!out.text.includes('\u001b'), 'no ESC byte');
  assert.deepEqual(out.text.split('\n'), [
    '[  10 s / 60 s, 50 s left] last 10 s: storage read 200.0 MiB/s, write 20.0 MiB/s, 4.0 requests/s; last second: read p95 12.35 ms, hit rate 75.0 %, in flight 5; fill storage 3.00 GiB; device 87 % busy, queue depth 6.3',
    '[  20 s / 60 s, 40 s left] last 10 s: storage read 100.0 MiB/s, write 20.0 MiB/s, 4.0 requests/s; last second: read p95 12.35 ms, hit rate 75.0 %, in flight 5; fill cpu 75 % (0.19 GiB)  storage 3.00 GiB; device 87 % busy, queue depth 6.3',
    '',
  ]);
});

test('a sliver second (9 ms holding 280 MiB of reads cut short at the stop) is folded into the second before it, not drawn as a rate spike', () => {
  const out = new FakeStream(true);
  const view = new LiveView(out);
  view.update(snapshot(12));
  const storage = snapshot(1).latest!.second.tiers.storage!;
  const sliver: ProgressSnapshot = {
    ...snapshot(12.009, {
      duration_sec: 0.009,
      requests_completed: 1,
      in_flight_ops: 0,
      tiers: { storage: { ...storage, read_bytes: 280 * MiB, write_bytes: 0, occupancy_bytes: 2 * 1024 * MiB } },
      storage_read_latency_ms: latency(999),
    }),
    requestsCompleted: 49,
  };
  view.update(sliver);
  const frames = out.text.split('\u001b[J');
  const lastFrame = frames[frames.length - 2].split('\n').map((l) => l.replaceAll('\u001b[5F', '').replaceAll('\u001b[2K', ''));
  // (100 + 280) MiB over 1.009 s = 376.6 MiB/s (unfolded: 31111.1 MiB/s); 20 MiB over 1.009 s; 5 requests over 1.009 s.
  // The p95 stays the whole second's; the state at the end (in flight, fill) is the sliver's.
  assert.deepEqual(lastFrame.slice(0, 5), [
    'kv-cache [  12 s / 60 s, 48 s left]  users 8  requests 49',
    '  last second: storage read 376.6 MiB/s  write 19.8 MiB/s  read p95 12.35 ms',
    '               5.0 requests/s  hit rate 75.0 %  in flight 0',
    '  cache fill:  cpu 75 % (0.19 GiB)  storage 2.00 GiB',
    '  device:      87 % busy, queue depth 6.3',
  ]);
  // Without a whole second before it (the first tick) there is nothing to fold into: shown as it is.
  assert.equal(dashboardSnapshot(sliver, undefined), sliver);
  // A second of half a step or more is a second of its own.
  const half = snapshot(12.5, { duration_sec: 0.5 });
  assert.equal(dashboardSnapshot(half, snapshot(12).latest!.second), half);
});
