// Device telemetry on fed /sys/block/<dev>/stat texts: field meanings (sectors of 512 bytes, ticks in
// ms, in_flight now, io_ticks and time_in_queue), per-interval figures, the summary, unreadable samples.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeviceSeries, devicePoint, parseSysBlockStat } from '../../src/metrics/device-series.js';

/** A stat line: reads, read merges, read sectors, read ticks, writes, …, in_flight, io_ticks, time_in_queue, then 6 zeros. */
function stat(f: {
  reads: number;
  rsect: number;
  rticks: number;
  writes: number;
  wsect: number;
  wticks: number;
  inflight: number;
  io: number;
  queue: number;
}): string {
  const fields = [f.reads, 0, f.rsect, f.rticks, f.writes, 0, f.wsect, f.wticks, f.inflight, f.io, f.queue, 0, 0, 0, 0, 0, 0];
  return `${fields.map((n) => String(n).padStart(8)).join(' ')}\n`;
}

const T0 = { reads: 100, rsect: 800, rticks: 50, writes: 10, wsect: 80, wticks: 20, inflight: 0, io: 1000, queue: 2000 };
const T1 = {
  reads: 300,
  rsect: 800 + 200 * 256,
  rticks: 50 + 400,
  writes: 20,
  wsect: 80 + 10 * 2048,
  wticks: 20 + 100,
  inflight: 7,
  io: 1750,
  queue: 5000,
};

test('parseSysBlockStat reads the 17-, 15- and 11-field forms', () => {
  const c = parseSysBlockStat('vda', stat(T1));
  assert.equal(c.readOps, 300);
  assert.equal(c.readBytes, (800 + 200 * 256) * 512);
  assert.equal(c.writeMs, 120);
  assert.equal(c.inFlight, 7);
  assert.equal(c.busyMs, 1750);
  assert.equal(c.weightedMs, 5000);
  const eleven = parseSysBlockStat('sda', '1 2 3 4 5 6 7 8 9 10 11');
  assert.deepEqual([eleven.readOps, eleven.writeBytes, eleven.inFlight, eleven.weightedMs], [1, 7 * 512, 9, 11]);
  assert.throws(() => parseSysBlockStat('sda', '1 2 3'), /unreadable block device stat for 'sda'/);
});

test('a point is the counters’ growth over its interval', () => {
  const p = devicePoint(parseSysBlockStat('vda', stat(T0)), parseSysBlockStat('vda', stat(T1)), 3, 1);
  assert.deepEqual(p, {
    t_sec: 3,
    duration_sec: 1,
    read_iops: 200,
    write_iops: 10,
    read_bytes_per_sec: 200 * 256 * 512, // 128 KiB per read
    write_bytes_per_sec: 10 * 2048 * 512, // 1 MiB per write
    in_flight: 7,
    utilization_pct: 75,
    avg_queue_depth: 3,
    avg_read_request_bytes: 131072,
    avg_write_request_bytes: 1048576,
    read_await_ms: 2,
    write_await_ms: 10,
  });
  const idle = devicePoint(parseSysBlockStat('vda', stat(T0)), parseSysBlockStat('vda', stat(T0)), 1, 1);
  assert.equal(idle.avg_read_request_bytes, null);
  assert.equal(idle.read_await_ms, null);
  assert.equal(idle.utilization_pct, 0);
});

test('the series samples, skips an unreadable sample, ends with a shorter point and sums up', async () => {
  const texts = [stat(T0), stat(T1), 'garbage', stat({ ...T1, reads: 400, rsect: T1.rsect + 100 * 8, inflight: 2, io: 2250 })];
  let i = 0;
  const series = await DeviceSeries.start('vda', 10_000, '/sys/block/vda/stat', () => Promise.resolve(texts[i++] ?? ''));
  assert.ok(series !== undefined);
  assert.equal((await series.sample(11_000))?.read_iops, 200);
  assert.equal(await series.sample(12_000), undefined, 'an unreadable sample adds no point');
  const t = await series.finish(12_500);
  assert.deepEqual(
    t.points.map((p) => [p.t_sec, p.duration_sec, p.read_iops, p.in_flight]),
    [
      [1, 1, 200, 7],
      [2.5, 1.5, 100 / 1.5, 2],
    ],
    'the point after the gap spans it',
  );
  assert.equal(series.missedSamples, 1, 'the garbage one');
  assert.deepEqual(t.summary, {
    read_bytes: (200 * 256 + 100 * 8) * 512,
    write_bytes: 10 * 2048 * 512,
    read_ops: 300,
    write_ops: 10,
    mean_utilization_pct: (1250 / 2500) * 100,
    max_in_flight: 7,
    mean_queue_depth: 3000 / 2500,
    read_await_ms: 400 / 300,
    write_await_ms: 10,
  });
  assert.equal(t.device, 'vda');
  assert.equal(t.source, '/sys/block/vda/stat');
});

test('a device whose stat cannot be read gives no series', async () => {
  assert.equal(await DeviceSeries.start('nvme9n9', 0, '/nonexistent/stat'), undefined);
});
