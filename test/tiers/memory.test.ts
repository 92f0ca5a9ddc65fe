// CPU-memory tier: bytes round-trip through its pages, inline and through the CopyPool's worker
// threads; off-thread pages are O_DIRECT-aligned shared memory a file tier writes without a bounce
// copy; freed pages are reused; timing splits the copy (device) from the hand-off (host).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DirectSlabs } from '../../src/data/aligned.js';
import { CopyPool, inlineCopier } from '../../src/data/copy-pool.js';
import type { Copier } from '../../src/data/copy-pool.js';
import { payloadBytes } from '../../src/data/payload.js';
import { copyEntry } from '../../src/cache/entry-copy.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { FileBackend } from '../../src/tiers/file.js';
import { MemoryBackend } from '../../src/tiers/memory.js';
import { MiB } from '../../src/util/units.js';

/** `bytes` in chunks of `chunk` bytes, each chunk in shared memory when `shared` (as the payload pool's). */
function sourceOf(bytes: Uint8Array, chunk: number, shared: boolean): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      const buf = shared ? new Uint8Array(new SharedArrayBuffer(chunk)) : new Uint8Array(chunk);
      for (let off = 0; off < bytes.length; off += chunk) {
        const n = Math.min(chunk, bytes.length - off);
        buf.set(bytes.subarray(off, off + n));
        yield buf.subarray(0, n);
      }
    },
  };
}

async function readAll(m: MemoryBackend, key: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  await m.read(key, (c) => {
    parts.push(Uint8Array.from(c));
  });
  return Buffer.concat(parts);
}

for (const kind of ['inline', 'worker threads'] as const) {
  test(`memory tier round trip, copies ${kind}`, async () => {
    const copier: Copier = kind === 'inline' ? inlineCopier : await CopyPool.create(2);
    const m = new MemoryBackend('cpu', 256 * 1024, { copier, reserveBytes: 3 * MiB });
    try {
      for (const [i, size] of [0, 1, 256 * 1024, 3 * MiB + 4097, 5 * MiB].entries()) {
        const data = payloadBytes(1, `k${i}`, size);
        const t = await m.write(`k${i}`, sourceOf(data, MiB + 512, kind !== 'inline'));
        assert.ok(t.deviceMs >= 0 && t.hostMs >= 0);
        assert.equal(t.totalMs, t.hostMs + t.deviceMs);
        if (kind === 'inline') assert.equal(t.hostMs, 0, 'inline copies have no hand-off');
        assert.ok(Buffer.from(await readAll(m, `k${i}`)).equals(data), `entry of ${size} bytes`);
        const r = await m.read(`k${i}`); // copy out into scratch, without a consumer
        assert.equal(r.bytes, size);
      }
      assert.equal(m.storedBytes, 256 * 1024 + 3 * MiB + 4097 + 5 * MiB + 1);
      await m.delete('k3');
      await m.write('again', sourceOf(payloadBytes(1, 'again', 2 * MiB), MiB, kind !== 'inline'));
      assert.ok(Buffer.from(await readAll(m, 'again')).equals(payloadBytes(1, 'again', 2 * MiB)));
    } finally {
      await m.close();
      await copier.close();
    }
  });
}

test('off-thread pages are aligned shared memory: a demotion to the file tier needs no staging copy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kv-mem-direct-'));
  const pool = await CopyPool.create(1);
  const directSlabs = new DirectSlabs();
  const m = new MemoryBackend('cpu', MiB, { copier: pool, probeDir: dir, directSlabs, reserveBytes: 8 * MiB });
  const file = await FileBackend.create({ dir: join(dir, 'kv'), directSlabs });
  try {
    const data = payloadBytes(2, 'demoted', 6 * MiB);
    await m.write('demoted', sourceOf(data, 4 * MiB, true));
    await m.read('demoted', (page) => {
      assert.ok(page.buffer instanceof SharedArrayBuffer);
      if (file.effectiveIoMode === 'direct')
        assert.notEqual(directSlabs.directView(page, page.length), undefined, 'page accepted by O_DIRECT as is');
    });
    await copyEntry(m, file, 'demoted', data.length);
    if (file.effectiveIoMode === 'direct') assert.equal(file.counters.stagedBytes, 0, 'no bounce copy');
    const back: Uint8Array[] = [];
    await file.read('demoted', (c) => {
      back.push(Uint8Array.from(c));
    });
    assert.ok(Buffer.concat(back).equals(data));
  } finally {
    await file.close();
    await m.close();
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
});
