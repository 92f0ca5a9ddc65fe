// The PayloadFactory contract, and its simplest implementation: each chunk is generated on the calling
// thread, on demand. That blocks the event loop for the time one chunk takes (about 0.2 ms per MiB on
// the 2-core dev VM), and a consumer that does no real I/O never lets timers run at all: fine for
// tests and tiny runs; measured runs use the PayloadPool's worker threads.
import type { ChunkSource } from './chunk-source.js';
import { entryKeyMaterial, fillPayload, fillPayloadFromSeed, payloadSource } from './payload.js';
import type { SlotPool } from './slots.js';

/** Produces the bytes of KV entries as ChunkSources (deterministic per seed and key, lazy). */
export interface PayloadFactory {
  /** The `size` bytes of entry `key`; nothing is generated until the chunks are iterated. */
  source(key: string, size: number): ChunkSource;
  /** Releases threads and buffers; sources must not be iterated afterwards. */
  close(): Promise<void>;
}

/** Throws unless `size` is a byte count an entry can have. */
export function checkEntrySize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`entry size must be a non-negative integer, got ${size}`);
}

export class InlinePayloadFactory implements PayloadFactory {
  /**
   * Buffers not in use by an iteration. Usually one: a second is made only when two iterations
   * overlap, because a shared buffer would overwrite a chunk its consumer still holds.
   */
  private readonly spare: Uint8Array[] = [];
  /** payloadSource(seed), made at the first entry generated. */
  private randomSource: Uint8Array | undefined;

  constructor(
    readonly seed: number,
    readonly chunkBytes: number,
  ) {
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1)
      throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
  }

  source(key: string, size: number): ChunkSource {
    checkEntrySize(size);
    return { size, chunks: () => this.generate(key, size) };
  }

  async close(): Promise<void> {
    this.spare.length = 0;
    this.randomSource = undefined;
  }

  private async *generate(key: string, size: number): AsyncGenerator<Uint8Array> {
    if (size === 0) return;
    const material = entryKeyMaterial(this.seed, key);
    const source = (this.randomSource ??= payloadSource(this.seed));
    const buffer = this.spare.pop() ?? new Uint8Array(this.chunkBytes);
    try {
      for (let offset = 0; offset < size; offset += this.chunkBytes) {
        const chunk = buffer.subarray(0, Math.min(this.chunkBytes, size - offset));
        fillPayload(source, material, offset, chunk);
        yield chunk;
      }
    } finally {
      this.spare.push(buffer);
    }
  }
}

/**
 * An entry's payload generated on the calling thread into one slot of `slots` (aligned, reused),
 * so an O_DIRECT writer can take the chunks without a copy. For scripts and tests; runs use the pool.
 */
export function slotPayloadSource(slots: SlotPool, seed: number, key: string, size: number): ChunkSource {
  checkEntrySize(size);
  return {
    size,
    async *chunks() {
      const slot = await slots.acquire();
      try {
        const material = entryKeyMaterial(seed, key);
        for (let off = 0; off < size; off += slot.length) {
          const view = slot.subarray(0, Math.min(slot.length, size - off));
          fillPayloadFromSeed(seed, material, off, view);
          yield view;
        }
      } finally {
        slots.release(slot);
      }
    },
  };
}
