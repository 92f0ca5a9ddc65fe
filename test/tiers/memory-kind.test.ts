// The `memory` storage backend: what it says it is (RAM, no device, no directory), its capacity rule,
// no leftovers, never "full", and entries that round-trip as the storage tier's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DirectSlabs } from '../../src/data/aligned.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { payloadBytes } from '../../src/data/payload.js';
import { MEMORY_STORAGE } from '../../src/tiers/memory-kind.js';
import { GiB, MiB } from '../../src/util/units.js';

/** The entry's payload bytes in 1 MiB chunks. */
function sourceOf(bytes: Uint8Array): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      for (let off = 0; off < bytes.length; off += MiB) yield bytes.subarray(off, Math.min(off + MiB, bytes.length));
    },
  };
}

const OPTIONS = { ioMode: 'direct', chunkBytes: 4 * MiB, stagingSlots: 4, directSlabs: new DirectSlabs() } as const;

test('describes itself as RAM without a directory or device, warns, keeps nothing between runs, is never full', async () => {
  const m = await MEMORY_STORAGE.open(OPTIONS);
  try {
    assert.equal(m.backend.tier, 'storage');
    assert.deepEqual(m.description, {
      kind: 'memory',
      location: '(none: memory backend)',
      noDevice: 'the memory storage backend keeps entries in RAM: there is no block device',
      headline: 'none (--storage-backend memory: entries in RAM, no device I/O; not a storage measurement)',
      ioMode: 'none (memory backend)',
      fileSystem: 'none (RAM)',
      inRam: 'backend',
    });
    assert.equal(m.probeDir, undefined);
    assert.deepEqual(m.warnings, [
      '--storage-backend memory: the storage tier keeps its entries in RAM; this run tests the harness, not a storage device',
    ]);
    assert.deepEqual(await m.leftovers(true), { found: null, warnings: [] });
    assert.equal(await m.limitBytes(3 * GiB), 3 * GiB);
    await assert.rejects(m.limitBytes(0), /needs --storage-capacity-gb > 0/);
    assert.equal(m.fullness.where, 'memory');
    assert.equal(m.fullness.isFullError('ENOSPC'), false);
    assert.equal(await m.fullness.space(), undefined);
  } finally {
    await m.backend.close();
  }
});

test('entries round-trip, with their sizes, and are gone after delete', async () => {
  const m = await MEMORY_STORAGE.open(OPTIONS);
  try {
    const size = 3 * MiB + 100;
    const bytes = payloadBytes(5, 'k', size);
    await m.backend.write('k', sourceOf(bytes));
    assert.equal(m.backend.sizeOf('k'), size);
    const parts: Uint8Array[] = [];
    const r = await m.backend.read('k', (c) => {
      parts.push(Uint8Array.from(c));
    });
    assert.equal(r.bytes, size);
    assert.deepEqual(Buffer.concat(parts), Buffer.from(bytes));
    await m.backend.delete('k');
    assert.equal(m.backend.sizeOf('k'), undefined);
    assert.deepEqual([...m.backend.keys()], []);
  } finally {
    await m.backend.close();
  }
});

test('capacity rule: required, positive', () => {
  assert.match(MEMORY_STORAGE.capacityProblem(0) ?? '', /needs --storage-capacity-gb > 0/);
  assert.equal(MEMORY_STORAGE.capacityProblem(1), undefined);
});
