// The per-second series on manual time: one tick a second samples the timeline and the device and
// hands the live view that very second; over 600 "seconds" the interval histograms are reused, not
// re-allocated; a device that cannot be resolved gives null telemetry and a warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openSeriesDevice, RunSeries } from '../../src/engine/run-series.js';
import type { TierView } from '../../src/engine/run-series.js';
import type { SeriesTick } from '../../src/metrics/progress.js';
import { DeviceSeries } from '../../src/metrics/device-series.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { timing } from '../../src/tiers/backend.js';
import { ManualTime } from '../util/manual-time.js';

const TIERS: TierView = {
  order: ['storage'],
  entries: { residentBytes: () => 7 * 4096 },
  limitBytes: () => 1 << 30,
  operationsInFlight: () => 2,
};

/** A device whose counters grow by 100 reads of 8 sectors and 50 % busy each second read. */
function fakeDevice(): () => Promise<string> {
  let n = 0;
  return () => {
    const k = n++;
    return Promise.resolve(`${100 * k} 0 ${800 * k} ${100 * k} 0 0 0 0 1 ${500 * k} ${1000 * k} 0 0 0 0 0 0`);
  };
}

test('600 manual seconds: a point per tick in both series, the live view gets each second, histograms reused', async () => {
  const time = new ManualTime();
  const recorder = new Recorder();
  const requests = { requestsCompleted: 0, tokensGenerated: 0 };
  const ticks: SeriesTick[] = [];
  const series = RunSeries.create({
    recorder,
    requests,
    tiers: TIERS,
    clock: time,
    startMs: 0,
    every: time.every,
    device: await DeviceSeries.start('vdz', -5, '/sys/block/vdz/stat', fakeDevice()), // anchored at the window start (0)
    onTick: (t) => ticks.push(t),
  });
  series.followUsers(() => 3);
  series.start();
  for (let s = 1; s <= 600; s++) {
    recorder.recordHitRead('storage', 4096, 1, 'user', true, timing(0, s)); // s ms: each second's own latency
    series.recordQueueWait(s % 7);
    requests.requestsCompleted++;
    await time.advance(1000);
  }
  recorder.recordHitRead('storage', 4096, 1, 'user', true, timing(0, 1));
  const done = await series.finish(600_400);
  assert.equal(time.pending, 0, 'the tick timer is stopped');
  assert.equal(done.timeline.points.length, 601);
  assert.equal(ticks.length, 600);
  const t42 = ticks[41];
  assert.equal(t42.second.t_sec, 42);
  assert.equal(t42.second.storage_read_latency_ms.max, 42);
  assert.equal(t42.second.users, 3);
  assert.equal(t42.second.in_flight_ops, 2);
  assert.equal(t42.second.tiers.storage?.occupancy_bytes, 7 * 4096);
  assert.deepEqual(t42.tierLimitBytes, { storage: 1 << 30 });
  assert.equal(t42.device?.utilization_pct, 50);
  assert.equal(t42.device?.read_iops, 100);
  assert.equal(series.timelineHistograms, 3, 'two storage-read buffers and the queue-wait histogram (no writes here), after 600 takes');
  assert.equal(
    done.timeline.points.reduce((a, p) => a + (p.tiers.storage?.read_bytes ?? 0), 0),
    601 * 4096,
  );
  const dev = done.deviceTelemetry;
  assert.ok(dev !== null);
  assert.equal(dev.points.length, 601);
  assert.deepEqual([dev.points[0].t_sec, dev.points[0].duration_sec], [1, 1], 'the baseline read before the window counts from its start');
  assert.equal(dev.summary.read_ops, 60_100);
  assert.deepEqual(done.warnings, []);
});

/** A series over a run that does nothing, with `device` as RunSeries.create takes it. */
function idleSeries(time: ManualTime, device: string | undefined): RunSeries {
  return RunSeries.create({
    recorder: new Recorder(),
    requests: { requestsCompleted: 0, tokensGenerated: 0 },
    tiers: TIERS,
    clock: time,
    startMs: 0,
    every: time.every,
    device,
  });
}

test('a cache dir whose device cannot be resolved: null telemetry, the reason in the warnings, the timeline still runs', async () => {
  const time = new ManualTime();
  const series = idleSeries(time, 'device telemetry off: no device');
  series.start();
  await time.advance(2500);
  const done = await series.finish(2500);
  assert.equal(done.deviceTelemetry, null);
  assert.deepEqual(done.warnings, ['device telemetry off: no device']);
  assert.deepEqual(
    done.timeline.points.map((p) => p.t_sec),
    [1, 2, 2.5],
  );
});

test('trace mode (no cache dir): no device series and no warning', async () => {
  const time = new ManualTime();
  const series = idleSeries(time, undefined);
  const done = await series.finish(0);
  assert.deepEqual([done.deviceTelemetry, done.warnings, done.timeline.points], [null, [], []]);
});

test('the device series: none without a device by design, a warning when the device was not resolved', async () => {
  assert.equal(await openSeriesDevice({ kind: 'none', reason: 'trace mode' }), undefined);
  assert.equal(
    await openSeriesDevice({ kind: 'unresolved', path: '/t', devT: { major: 0, minor: 42 } }),
    "device telemetry off: the cache dir's block device could not be resolved (not a single local block device (tmpfs, overlay, network file system, RAID?))",
  );
  assert.equal(
    await openSeriesDevice({ kind: 'unresolved', path: '/gone', error: 'ENOENT' }),
    "device telemetry off: the cache dir's block device could not be resolved (ENOENT)",
  );
});
