// copyEntry must deliver every chunk in order whatever the timing of either side, and fail cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { copyEntry } from '../../src/cache/entry-copy.js';
import { MemoryBackend } from '../../src/tiers/memory.js';
import { ZERO_TIMING } from '../../src/tiers/backend.js';
import type { Backend, ChunkSink, ReadResult } from '../../src/tiers/backend.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { testPayload } from './helpers.js';

/** A destination that starts iterating late and consumes slowly, like a file opened first. */
class SlowSink extends MemoryBackend {
  override async write(key: string, source: ChunkSource) {
    await sleep(5);
    const slow: ChunkSource = {
      size: source.size,
      chunks: async function* () {
        for await (const c of source.chunks()) {
          await sleep(1);
          yield c;
        }
      },
    };
    return super.write(key, slow);
  }
}

test('a late, slow consumer receives every byte in order', async () => {
  const src = new MemoryBackend('cpu', 4096);
  await src.write('k', testPayload('k', 50_000));
  const dst = new SlowSink('storage', 1000);
  const r = await copyEntry(src, dst, 'k', 50_000);
  assert.equal(r.bytes, 50_000);
  const parts: Uint8Array[] = [];
  await dst.read('k', (c) => {
    parts.push(c.slice());
  });
  const want: Uint8Array[] = [];
  await src.read('k', (c) => {
    want.push(c.slice());
  });
  assert.ok(Buffer.concat(parts).equals(Buffer.concat(want)));
});

test('a failing read fails the copy and the writer stops', async () => {
  const src: Backend = Object.assign(new MemoryBackend('cpu'), {
    async read(_key: string, sink?: ChunkSink): Promise<ReadResult> {
      await sink?.(new Uint8Array(10));
      throw new Error('read broke');
    },
  });
  await assert.rejects(copyEntry(src, new MemoryBackend('storage'), 'k', 20), /read broke|gave 10 bytes/);
});

test('a failing write fails the copy and releases the reader', async () => {
  const src = new MemoryBackend('cpu', 1024);
  await src.write('k', testPayload('k', 10_000));
  const dst: Backend = Object.assign(new MemoryBackend('storage'), {
    async write(_key: string, source: ChunkSource) {
      for await (const _c of source.chunks()) throw new Error('write broke');
      return ZERO_TIMING;
    },
  });
  await assert.rejects(copyEntry(src, dst, 'k', 10_000), /write broke/);
});
