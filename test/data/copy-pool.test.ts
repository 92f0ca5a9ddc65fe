// The CopyPool: copies between shared buffers run on its worker threads, others inline; a thread that
// dies fails only its own job.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CopyPool } from '../../src/data/copy-pool.js';
import { payloadBytes } from '../../src/data/payload.js';
import { MiB } from '../../src/util/units.js';

test('copy pool: copies between shared buffers on its threads, others inline; errors are clear', async () => {
  const pool = await CopyPool.create(2);
  try {
    const src = new Uint8Array(new SharedArrayBuffer(3 * MiB));
    src.set(payloadBytes(3, 'src', src.length));
    const dst = new Uint8Array(new SharedArrayBuffer(3 * MiB));
    const plain = new Uint8Array(1000);
    const ms = await pool.copy([
      { dst: dst.subarray(0, MiB), src: src.subarray(2 * MiB) },
      { dst: dst.subarray(MiB), src: src.subarray(0, 2 * MiB) },
    ]);
    assert.ok(ms >= 0);
    assert.ok(Buffer.from(dst.subarray(0, MiB)).equals(src.subarray(2 * MiB)));
    assert.ok(Buffer.from(dst.subarray(MiB)).equals(src.subarray(0, 2 * MiB)));
    await pool.copy([{ dst: plain, src: src.subarray(0, 1000) }]); // not shared: copied inline
    assert.ok(Buffer.from(plain).equals(src.subarray(0, 1000)));
    // Many jobs at once finish, each with its own bytes.
    const many = Array.from({ length: 20 }, (_, i) => new Uint8Array(new SharedArrayBuffer(64 * 1024)).fill(i));
    const outs = many.map(() => new Uint8Array(new SharedArrayBuffer(64 * 1024)));
    await Promise.all(many.map((m, i) => pool.copy([{ dst: outs[i], src: m }])));
    outs.forEach((o, i) => assert.ok(o.every((b) => b === i)));
    await assert.rejects(pool.copy([{ dst: plain, src: src.subarray(0, 10) }]), /copy of 10 bytes into 1000/);
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.copy([]), /copy pool is closed/);
});

test('copy pool: a thread that dies fails only its own job; with no thread left copies go inline', async () => {
  // Copies like the real worker, but exits on a 13-byte range.
  const src = `import { parentPort } from 'node:worker_threads';
parentPort.on('message', (job) => {
  for (const r of job.ranges) {
    if (r.length === 13) process.exit(3);
    new Uint8Array(r.dst, r.dstOffset, r.length).set(new Uint8Array(r.src, r.srcOffset, r.length));
  }
  parentPort.postMessage({ id: job.id, ms: 0 });
});`;
  const pool = await CopyPool.create(2, new URL(`data:text/javascript,${encodeURIComponent(src)}`));
  const shared = (n: number, fill: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(n)).fill(fill);
  try {
    await assert.rejects(pool.copy([{ dst: shared(13, 0), src: shared(13, 1) }]), /copy worker exited unexpectedly with code 3/);
    const out = shared(100, 0);
    await pool.copy([{ dst: out, src: shared(100, 7) }]); // the other thread
    assert.ok(out.every((b) => b === 7));
    await assert.rejects(pool.copy([{ dst: shared(13, 0), src: shared(13, 1) }]), /exited unexpectedly/);
    const inline = shared(13, 0);
    await pool.copy([{ dst: inline, src: shared(13, 9) }]); // no thread left: copied here
    assert.ok(inline.every((b) => b === 9));
  } finally {
    await pool.close();
  }
});
