// The per-second series of a real short run: the timeline's points add up exactly to the run's
// storage bytes, operations and requests (the last, shorter point included) and end at the measured
// window; the device telemetry follows the cache dir's device; the file matches the published schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { inTempDir, runCli, smallWorkloadArgs } from './run-cli.js';
import { readValidResults } from '../report/validate-results.js';

test('a real 3-second run: timeline sums equal the totals, device telemetry present, schema valid', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli([
      ...(await smallWorkloadArgs(dir)),
      '--num-users',
      '4',
      '--duration',
      '3',
      '--gpu-mem-gb',
      '0',
      '--cpu-mem-gb',
      '0.01',
      '--cache-dir',
      dir,
      '--seed',
      '7',
      '--output',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = await readValidResults(out);
    const k = doc.kvcache_bench;
    const points = k.timeline?.points ?? [];
    assert.ok(points.length >= 3, `a point per second plus the remainder (${points.length})`);
    assert.equal(points[points.length - 1].t_sec, k.measured_window_sec, 'the last point ends with the window');
    const sum = (pick: (p: (typeof points)[number]) => number): number => points.reduce((a, p) => a + pick(p), 0);
    const cs = doc.summary.cache_stats;
    assert.equal(
      sum((p) => p.tiers.storage?.read_bytes ?? 0),
      k.storage_bytes.read_bytes,
    );
    assert.equal(
      sum((p) => p.tiers.storage?.write_bytes ?? 0),
      k.storage_bytes.written_bytes,
    );
    assert.equal(
      sum((p) => p.tiers.storage?.write_ops ?? 0),
      cs.tier_storage_placement_write_ops + cs.tier_storage_demote_in_ops,
    );
    assert.equal(
      sum((p) => p.requests_completed),
      doc.requests_completed,
    );
    assert.equal(
      sum((p) => p.evictions),
      cs.evictions,
    );
    assert.ok(k.storage_bytes.written_bytes > 0, 'the run wrote to storage');
    assert.deepEqual(Object.keys(points[0].tiers), ['cpu', 'storage']);
    const device = k.machine.cache_dir?.block_device ?? null;
    if (device === null) {
      assert.equal(k.device_telemetry, null);
      assert.ok(k.warnings.some((w) => w.startsWith('device telemetry off')));
    } else {
      assert.equal(k.device_telemetry?.device, device);
      assert.ok((k.device_telemetry?.points.length ?? 0) >= 1);
      assert.match(r.stdout, /### DEVICE TELEMETRY/);
    }
  });
});
