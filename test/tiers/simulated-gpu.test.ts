import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimulatedGpuBackend } from '../../src/tiers/simulated-gpu.js';
import { EntryNotFoundError } from '../../src/tiers/backend.js';
import { payloadBytes } from '../../src/data/payload.js';
import { testPayload, SEED } from '../cache/helpers.js';

test('simulated GPU: time = size ÷ bandwidth, sizes only, demotion reads regenerate the payload', async () => {
  const gpu = new SimulatedGpuBackend(testPayload, 1, false); // 1 GB/s = 1e6 bytes per ms
  const t = await gpu.write('k', testPayload('k', 3_000_000));
  assert.equal(t.totalMs, 3);
  assert.equal(t.deviceMs, 3);
  assert.deepEqual([...gpu.keys()], ['k']);
  const parts: Uint8Array[] = [];
  const r = await gpu.read('k', (c) => void parts.push(c.slice()));
  assert.equal(r.bytes, 3_000_000);
  assert.equal(r.timing.totalMs, 3);
  assert.ok(Buffer.concat(parts).equals(payloadBytes(SEED, 'k', 3_000_000)));
  await assert.rejects(gpu.read('nope'), EntryNotFoundError);
  await gpu.delete('k');
  assert.deepEqual([...gpu.keys()], []);
  assert.throws(() => new SimulatedGpuBackend(testPayload, 0), RangeError);
});
