import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kindOfHeader, numberFormatFor, roundFor } from '../../src/report/rounding.js';

test('a header unit decides the kind of its column', () => {
  const kinds = Object.fromEntries(
    [
      'E2E Latency P95 (ms)',
      'Tier Storage Read Bandwidth (GiB/s)',
      'Total Read (GiB)',
      'Storage Read (bytes)',
      'Storage Write (bytes/s)',
      'Elapsed Time (s)',
      'Avg Throughput (tok/s)',
      'Requests/sec',
      'Storage Requests/sec',
      'Cache Hit Rate',
      'Read/Write Ratio',
      'Storage Bytes/s CV',
      'Total Requests',
      'GPU Entries',
      'Stop Reason',
    ].map((h) => [h, kindOfHeader(h)]),
  );
  assert.deepEqual(kinds, {
    'E2E Latency P95 (ms)': 'latency_ms',
    'Tier Storage Read Bandwidth (GiB/s)': 'gibps',
    'Total Read (GiB)': 'gib',
    'Storage Read (bytes)': 'count',
    'Storage Write (bytes/s)': 'count',
    'Elapsed Time (s)': 'seconds',
    'Avg Throughput (tok/s)': 'rate',
    'Requests/sec': 'rate',
    'Storage Requests/sec': 'rate',
    'Cache Hit Rate': 'ratio',
    'Read/Write Ratio': 'ratio',
    'Storage Bytes/s CV': 'ratio',
    'Total Requests': 'count',
    'GPU Entries': 'count',
    'Stop Reason': 'other',
  });
});

test('each kind is rounded to its precision', () => {
  // Latency: whole µs and 4 significant digits (the HDR histogram's resolution).
  assert.deepEqual(
    [0.12345, 0.0004, 12.3456, 1234.567, 0].map((v) => roundFor('latency_ms', v)),
    [0.123, 0, 12.35, 1235, 0],
  );
  assert.deepEqual(
    [1.23456, 0.0123456, 434.9523809523809, 1197.3].map((v) => roundFor('gibps', v)),
    [1.23, 0.0123, 435, 1200],
  );
  assert.equal(roundFor('rate', 1234.3243243243244), 1230);
  assert.equal(roundFor('ratio', 0.123456), 0.1235);
  assert.equal(roundFor('gib', 1.2345678), 1.235);
  assert.equal(roundFor('seconds', 29.99951), 30);
  assert.equal(roundFor('count', 41.6), 42);
  assert.equal(roundFor('other', 0.123456789), 0.123456789);
  // Non-numbers and non-finite numbers pass through untouched.
  assert.equal(roundFor('rate', 'n/a'), 'n/a');
  assert.equal(roundFor('rate', null), null);
  assert.equal(roundFor('rate', Infinity), Infinity);
});

test('number formats: no trailing decimal point, as many decimals as the rounding keeps', () => {
  assert.deepEqual((['count', 'seconds', 'gib', 'rate', 'gibps', 'latency_ms', 'ratio', 'other'] as const).map(numberFormatFor), [
    '#,##0',
    '#,##0.000',
    '#,##0.000',
    '#,##0.0####',
    '#,##0.0####',
    '#,##0.0##',
    '0.0000',
    undefined,
  ]);
});
