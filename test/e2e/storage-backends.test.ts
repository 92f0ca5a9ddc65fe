// End-to-end: --storage-backend picks the storage tier's backend from the registry. The memory
// backend runs the whole harness with no directory and no device (results say so, and the verdict
// says it measured no storage device); without --storage-capacity-gb it is refused before anything
// is made.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readValidResults } from '../report/validate-results.js';
import { inTempDir, runCli, smallWorkloadArgs } from './run-cli.js';

const GIB = 2 ** 30;

test('--storage-backend memory: a run without a directory or device, NOT VALID as a storage measurement', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const common = await smallWorkloadArgs(dir);
    const args = ['--num-users', '2', '--duration', '2', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--seed', '11'];
    const r = await runCli([...common, ...args, '--storage-backend', 'memory', '--storage-capacity-gb', '0.25', '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /Storage under test: none \(--storage-backend memory: entries in RAM, no device I\/O; not a storage measurement\)/,
    );
    const j = await readValidResults(out);
    const k = j.kvcache_bench;
    assert.equal(k.storage_dir, '(none: memory backend)');
    assert.equal(k.storage_io_mode, 'none (memory backend)');
    assert.equal(k.storage_file_system, 'none (RAM)');
    assert.equal(k.device_io, null);
    assert.equal(k.device_telemetry, null);
    assert.equal(k.machine.cache_dir, null);
    assert.equal(k.stale_entries, null);
    assert.deepEqual([k.metadata_ops?.total, k.metadata_ops?.failed], [0, 0], 'entries in RAM: no create, unlink or lookup');
    assert.deepEqual(k.storage_capacity?.limit_bytes, 0.25 * GIB);
    assert.ok(j.summary.cache_stats.total_write_bytes > 0, 'the storage tier took writes');
    assert.equal(k.validity.valid, false);
    assert.deepEqual(
      k.validity.reasons.map((f) => f.code).filter((c) => c === 'ram_storage_backend'),
      ['ram_storage_backend'],
    );
    assert.deepEqual(
      k.validity.warnings.map((f) => f.code).filter((c) => c === 'device_unknown'),
      [],
      'no device is expected, so none is missing',
    );
    assert.ok(
      k.warnings.includes(
        '--storage-backend memory: the storage tier keeps its entries in RAM; this run tests the harness, not a storage device',
      ),
    );
    assert.equal((k.effective_config.args as Record<string, unknown>).storage_backend, 'memory');
    assert.deepEqual(readdirSync(dir).sort(), ['r.json', 'small.yaml'], 'no cache directory was made');
  });
});

test('--storage-backend memory without --storage-capacity-gb: one message, exit 2, nothing written', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'r.json');
    const r = await runCli([...(await smallWorkloadArgs(dir)), '--duration', '1', '--storage-backend', 'memory', '--output', out]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--storage-backend memory needs --storage-capacity-gb > 0: RAM has no free space to take a share of/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(existsSync(out), false);
  });
});
