// The DEVICE TELEMETRY console section from a hand-made series: totals, rates over the span, await,
// request size, utilisation and queue depth with their busiest whole second; null and absent series.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deviceTelemetryLines } from '../../src/report/console-telemetry.js';
import type { DeviceTelemetryJson } from '../../src/report/results-schema.js';
import { GiB, MiB } from '../../src/util/units.js';

const point = (t: number, duration: number, util: number, readMiBs: number): DeviceTelemetryJson['points'][number] => ({
  t_sec: t,
  duration_sec: duration,
  read_iops: 10,
  write_iops: 0,
  read_bytes_per_sec: readMiBs * MiB,
  write_bytes_per_sec: 0,
  in_flight: 1,
  utilization_pct: util,
  avg_queue_depth: util / 10,
  avg_read_request_bytes: 131072,
  avg_write_request_bytes: null,
  read_await_ms: 1.5,
  write_await_ms: null,
});

const SERIES: DeviceTelemetryJson = {
  device: 'vda',
  source: '/sys/block/vda/stat',
  interval_sec: 1,
  points: [point(1, 1, 40, 100), point(2, 1, 80, 300), point(2.1, 0.1, 100, 900)],
  summary: {
    read_bytes: 1 * GiB,
    write_bytes: 0,
    read_ops: 8192,
    write_ops: 0,
    mean_utilization_pct: 62.5,
    max_in_flight: 4,
    mean_queue_depth: 6.25,
    read_await_ms: 1.5,
    write_await_ms: null,
  },
};

test('the section summarises the series; the busiest second is a whole one', () => {
  assert.deepEqual(deviceTelemetryLines({ device_telemetry: SERIES, storage_io_mode: 'direct' }), [
    '',
    '### DEVICE TELEMETRY (per-second /sys/block/<dev>/stat, whole device) ###',
    '  vda (/sys/block/vda/stat), 3 samples over 2.1 s',
    '  read 1.000 GiB (487.6 MiB/s) in 8192 requests: await 1.50 ms, 128 KiB per request',
    '  written 0.000 GiB (0.0 MiB/s) in 0 requests: await n/a, n/a per request',
    '  utilisation 62.5 % (busiest second 80.0 %)   queue depth 6.25 (busiest second 8.00)   in flight max 4',
    '  busiest second: read 300.0 MiB/s, write 0.0 MiB/s',
  ]);
});

test('no series: the reason; a file without the field (older version): no section', () => {
  assert.deepEqual(deviceTelemetryLines({ device_telemetry: null, storage_io_mode: 'direct' }).slice(2), [
    "  not available: the cache dir's block device could not be resolved or read (see the warnings)",
  ]);
  assert.deepEqual(deviceTelemetryLines({ device_telemetry: null, storage_io_mode: 'none (trace mode)' }).slice(2), [
    '  none: trace mode has no device',
  ]);
  assert.deepEqual(deviceTelemetryLines({ storage_io_mode: 'direct' }), []);
  assert.deepEqual(deviceTelemetryLines({ device_telemetry: { ...SERIES, points: [] }, storage_io_mode: 'direct' }).slice(2), [
    '  vda (/sys/block/vda/stat), 0 samples over 0.0 s',
    '  no full second was sampled',
  ]);
});
