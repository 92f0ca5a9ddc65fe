// Issue 24: the verdict says when the payload generator, not the device, set the write figure. A RAM
// storage backend (--storage-backend memory) takes bytes faster than the generator threads make them,
// which slows the run down on purpose: harness_saturated then names the payload wait. On the disk the
// device is the bottleneck and writes wait for payload bytes only a sliver of their time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_PAYLOAD_WAIT_SHARE } from '../../src/metrics/validity.js';
import { inTempDir, runCli } from './run-cli.js';

interface Verdict {
  payload_generation?: { write_wait_share: number; chunks_waited_for: number };
  validity: { reasons: Array<{ code: string; message: string }> };
}

/** A write-only run of 16 users with 64 MiB+ entries (llama3.1-8b), 4 s. */
async function writeRun(dir: string, backend: readonly string[]): Promise<Verdict> {
  const out = join(dir, 'r.json');
  const r = await runCli([
    ...backend,
    '--storage-capacity-gb',
    '2',
    '--num-users',
    '16',
    '--gpu-mem-gb',
    '0',
    '--cpu-mem-gb',
    '0',
    '--generation-mode',
    'none',
    '--duration',
    '4',
    '--prefill-only',
    '--disable-multi-turn',
    '--disable-prefix-caching',
    '--no-progress',
    '--output',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(await readFile(out, 'utf8')) as { kvcache_bench: Verdict }).kvcache_bench;
}

const payloadReason = (v: Verdict): string | undefined =>
  v.validity.reasons.find((r) => r.code === 'harness_saturated' && r.message.includes('writes waited for payload bytes'))?.message;

test('a sink faster than the generator: writes wait for payload bytes most of their time, and the verdict says so', async () => {
  await inTempDir(async (dir) => {
    const v = await writeRun(dir, ['--storage-backend', 'memory']);
    const share = v.payload_generation?.write_wait_share ?? 0;
    assert.ok(share > MAX_PAYLOAD_WAIT_SHARE, `write wait share ${share}`);
    assert.ok((v.payload_generation?.chunks_waited_for ?? 0) > 0);
    assert.match(payloadReason(v) ?? '', /writes waited for payload bytes \d+(\.\d)? % of their time \(limit 10\.0 %\)/);
  });
});

test('the disk is the bottleneck: the payload wait stays under the limit and no reason names it', async () => {
  await inTempDir(async (dir) => {
    const v = await writeRun(dir, ['--cache-dir', dir]);
    const share = v.payload_generation?.write_wait_share ?? 1;
    assert.ok(share < MAX_PAYLOAD_WAIT_SHARE, `write wait share ${share}`);
    assert.equal(payloadReason(v), undefined);
  });
});
