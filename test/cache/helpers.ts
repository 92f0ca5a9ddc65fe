// Builds small caches for tests: tiny-1b entries, memory backends by default. Their 4 KiB pages divide
// every tiny-1b entry (24 KiB per token), so the bytes an entry takes equal its size, as on the null tiers.
import { TieredCache } from '../../src/cache/tiered-cache.js';
import type { CacheOptions, CacheTier } from '../../src/cache/tiered-cache.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { BUILTIN_MODELS, kvBytesPerToken } from '../../src/model/models.js';
import { payloadBytes } from '../../src/data/payload.js';
import { MemoryBackend } from '../../src/tiers/memory.js';
import { NullBackend } from '../../src/tiers/null.js';
import type { Backend } from '../../src/tiers/backend.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { ManualClock } from '../../src/util/clock.js';
import { MiB } from '../../src/util/units.js';

export const TINY = BUILTIN_MODELS.get('tiny-1b')!; // present in the built-in table
export const TINY_BPT = kvBytesPerToken(TINY);
export const SEED = 42;

/** Payload bytes computed on the calling thread, in 1 MiB chunks. */
export function testPayload(key: string, size: number): ChunkSource {
  return {
    size,
    async *chunks() {
      for (let off = 0; off < size; off += MiB) yield payloadBytes(SEED, key, Math.min(MiB, size - off), off);
    },
  };
}

export interface TestCacheSpec {
  gpuBytes?: number;
  cpuBytes?: number;
  storageBytes?: number;
  storage?: Backend;
  /** Tier backends: memory (asynchronous, the default) or null (immediate: the synchronous path). */
  kind?: 'memory' | 'null';
  tensorParallel?: number;
  extra?: Partial<CacheOptions>;
}

export function makeCache(spec: TestCacheSpec): { cache: TieredCache; rec: Recorder; clock: ManualClock } {
  const tiers: CacheTier[] = [];
  const make = (tier: 'gpu' | 'cpu' | 'storage'): Backend => (spec.kind === 'null' ? new NullBackend(tier) : new MemoryBackend(tier, 4096));
  if (spec.gpuBytes !== undefined) tiers.push({ backend: make('gpu'), limitBytes: spec.gpuBytes });
  if (spec.cpuBytes !== undefined) tiers.push({ backend: make('cpu'), limitBytes: spec.cpuBytes });
  tiers.push({ backend: spec.storage ?? make('storage'), limitBytes: spec.storageBytes ?? Infinity });
  const rec = new Recorder();
  const clock = new ManualClock(1);
  const cache = new TieredCache({
    tiers,
    bytesPerToken: TINY_BPT,
    tensorParallel: spec.tensorParallel ?? 1,
    payload: testPayload,
    recorder: rec,
    clock,
    ...spec.extra,
  });
  return { cache, rec, clock };
}

/** Sum of entry sizes per tier, from the entry table. */
export function residentByTier(cache: TieredCache): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of cache.order) {
    let n = 0;
    for (const e of cache.entries.lruOrder(t)) n += e.size;
    m.set(t, n);
  }
  return m;
}

/** Collects an entry's bytes by reading it through its backend. */
export async function readBack(cache: TieredCache, key: string): Promise<Uint8Array> {
  const tier = cache.locate(key);
  if (tier === null) throw new Error(`${key} not cached`);
  const parts: Uint8Array[] = [];
  await cache.backend(tier).read(key, (c) => {
    parts.push(c.slice());
  });
  return Buffer.concat(parts);
}
