// The bytes of one entry as a stream: what the payload generators produce and every tier's write
// consumes. It lives with the data, below the tiers, so the generators need nothing from the tiers.

/**
 * The bytes of one entry, delivered in order as chunks. Contract: a chunk is valid only until the
 * consumer asks for the next one (its memory is then reused), and the chunks' lengths add up to `size`.
 * A backend that keeps no bytes (null, simulated GPU) may ignore `chunks` entirely, so producing
 * bytes must be lazy.
 */
export interface ChunkSource {
  readonly size: number;
  chunks(): AsyncIterable<Uint8Array>;
  /**
   * Offered by a source whose entry is one chunk: that chunk at once (the same bytes chunks() would
   * give), valid until `release()`. Cheaper than an iteration, which costs an async generator and its
   * promises per entry: with a file per 16 KiB KV block, that was event-loop time per block written.
   * A consumer takes either this or chunks(), not both.
   */
  readonly whole?: () => Promise<WholeChunk>;
}

/** A one-chunk entry's bytes, held until release(). */
export interface WholeChunk {
  readonly bytes: Uint8Array;
  release(): void;
}

/** The source's next chunk that is not empty; undefined once it is over. */
export async function nextNonEmpty(it: AsyncIterator<Uint8Array>): Promise<Uint8Array | undefined> {
  for (;;) {
    const next = await it.next();
    if (next.done === true) return undefined;
    if (next.value.length > 0) return next.value;
  }
}
